import { PricingErrorCode, UnknownProductError } from '../errors/pricing-error';
import { thrownAs } from '../errors/thrown.fixture';
import { priceRecord } from './price-record.fixture';
import { FOCUS_COLUMNS, focusCsv, focusRows, type FocusBilling, type FocusRow, type FocusUsage } from './focus';
import { Exact } from './quote';
import { costOfUsage, type ApplicablePrices } from './usage';
import { refusal } from './usage.fixture';

// FOCUS 1.2's own rules, each checked on the rows (docs/using-pricing.md, "FOCUS cost rows").

const at = (text: string) => new Date(text);
/** A record like `record` but for `fields`, with an id of its own. */
function like(
  record: ReturnType<typeof priceRecord>,
  fields: Parameters<typeof priceRecord>[0],
): ReturnType<typeof priceRecord> {
  const copy: Record<string, unknown> = { ...record, ...fields };
  delete copy.id;
  return priceRecord(copy);
}
const MARCH: FocusBilling = {
  providerName: 'Example Cloud',
  billingAccountId: 'org_42',
  billingPeriodStart: at('2026-03-01T00:00:00Z'),
  billingPeriodEnd: at('2026-04-01T00:00:00Z'),
};

// compute.g2.4, per hour: 0.1200 until 21 March, then 0.1500.
const g24Before = priceRecord({
  productKey: 'compute.g2.4',
  unitType: 'seconds',
  unitCount: 3600,
  amount: '0.1200',
  validFrom: '2026-01-01T00:00:00Z',
  validUntil: '2026-03-21T00:00:00Z',
});
const g24After = like(g24Before, { amount: '0.1500', validFrom: '2026-03-21T00:00:00Z', validUntil: null });
// storage.gp1, per 730 GiB-hours: 0.0480 until 21 March, then 0.0500; org_42's agreed 0.0400 from 10 to 25 March.
const gp1Before = priceRecord({ amount: '0.0480', validUntil: '2026-03-21T00:00:00Z' });
const gp1After = priceRecord({ amount: '0.0500', validFrom: '2026-03-21T00:00:00Z' });
const gp1Agreed = priceRecord({
  organizationId: 'org_42',
  amount: '0.0400',
  validFrom: '2026-03-10T00:00:00Z',
  validUntil: '2026-03-25T00:00:00Z',
});
const egress = priceRecord({
  productKey: 'network.vpc_egress',
  unitType: 'gb',
  unitCount: 1,
  amount: '0.0100',
  validFrom: '2026-01-01T00:00:00Z',
  validUntil: '2026-03-15T00:00:00Z',
});
const egressLater = like(egress, { amount: '0.0080', validFrom: '2026-03-15T00:00:00Z', validUntil: null });

const list = (...records: ReturnType<typeof priceRecord>[]): ApplicablePrices => ({ list: records, organization: [] });
const month = { from: at('2026-03-01T00:00:00Z'), to: at('2026-04-01T00:00:00Z') };

/** The rows of `usage` of `key`, which must be complete. */
function rowsOf(key: string, prices: ApplicablePrices, usage: FocusUsage, billing = MARCH): readonly FocusRow[] {
  const cost = focusRows(key, prices, usage, billing);
  expect(cost).toMatchObject({ complete: true, unpriced: [] });
  return cost.rows;
}

/** |unit price × pricing quantity − cost|, exactly. */
const gap = (unitPrice: string | null, quantity: string | null, cost: string | null) =>
  new Exact(unitPrice!).times(quantity!).minus(cost!).abs();
/** The stated precision: (unit price + pricing quantity + 2) halves of 10^-20. */
const bound = (unitPrice: string | null, quantity: string | null) =>
  new Exact(unitPrice!).plus(quantity!).plus(2).times('0.5e-20');

const DECIMAL = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const DECIMAL_COLUMNS = [
  'BilledCost',
  'ConsumedQuantity',
  'ContractedCost',
  'ContractedUnitPrice',
  'EffectiveCost',
  'ListCost',
  'ListUnitPrice',
  'PricingQuantity',
] as const;
const DATE_TIME_COLUMNS = ['BillingPeriodEnd', 'BillingPeriodStart', 'ChargePeriodEnd', 'ChargePeriodStart'] as const;
/** Not null on a usage row that is no correction (FOCUS 1.2: each column's nullability). */
const NOT_NULL = [
  ...DECIMAL_COLUMNS,
  ...DATE_TIME_COLUMNS,
  'BillingAccountId',
  'BillingCurrency',
  'ChargeCategory',
  'ChargeDescription',
  'ChargeFrequency',
  'ConsumedUnit',
  'InvoiceIssuerName',
  'PricingCategory',
  'PricingUnit',
  'ProviderName',
  'PublisherName',
  'ServiceCategory',
  'ServiceName',
  'SkuId',
  'SkuPriceId',
  'x_PriceRecordId',
] as const;
const SERVICE_CATEGORIES = ['Compute', 'Networking', 'Storage', 'Management and Governance'];

/** Every rule of FOCUS 1.2 these rows can be checked against on their own. */
function expectFocusRules(rows: readonly FocusRow[]): void {
  for (const row of rows) {
    expect(Object.keys(row).sort()).toEqual([...FOCUS_COLUMNS].sort());
    for (const column of NOT_NULL) expect([column, row[column]]).toEqual([column, expect.any(String)]);
    for (const column of DECIMAL_COLUMNS)
      expect([column, row[column]]).toEqual([column, expect.stringMatching(DECIMAL)]);
    for (const column of DATE_TIME_COLUMNS) {
      expect([column, row[column]]).toEqual([column, expect.stringMatching(DATE_TIME)]);
    }
    expect(row).toMatchObject({ BillingCurrency: 'EUR', ChargeCategory: 'Usage', ChargeClass: null });
    expect(SERVICE_CATEGORIES).toContain(row.ServiceCategory);
    expect(row.PricingUnit).toMatch(/^(?:[1-9]\d* )?[A-Z][A-Za-z]*(?:-[A-Z][A-Za-z]*)?$/); // UnitFormat
    // Half-open, within the billing period, UTC whole seconds: start before end.
    expect(row.ChargePeriodStart! < row.ChargePeriodEnd!).toBe(true);
    expect(row.BillingPeriodStart! <= row.ChargePeriodStart! && row.ChargePeriodEnd! <= row.BillingPeriodEnd!).toBe(
      true,
    );
    // Pay-as-you-go: billed = effective = contracted.
    expect(row.BilledCost).toBe(row.ContractedCost);
    expect(row.EffectiveCost).toBe(row.ContractedCost);
    // UnitPrice × PricingQuantity = Cost, to the stated precision.
    for (const [price, cost] of [
      [row.ListUnitPrice, row.ListCost],
      [row.ContractedUnitPrice, row.ContractedCost],
    ]) {
      expect(gap(price, row.PricingQuantity, cost).lte(bound(price, row.PricingQuantity))).toBe(true);
    }
  }
}

/** The rows' windows, which must tile `[from, to)`: each row ends where the next starts. */
function expectTiled(rows: readonly FocusRow[], from: string, to: string): void {
  expect(rows[0].ChargePeriodStart).toBe(from);
  expect(rows.at(-1)!.ChargePeriodEnd).toBe(to);
  for (let i = 1; i < rows.length; i++) expect(rows[i].ChargePeriodStart).toBe(rows[i - 1].ChargePeriodEnd);
}

describe('focusRows: FOCUS 1.2 cost rows of priced usage', () => {
  it('gives a month of an instance across a price change two rows: one SkuPriceId, two price records', () => {
    const rows = rowsOf('compute.g2.4', list(g24Before, g24After), month);
    expectFocusRules(rows);
    expectTiled(rows, '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z');
    expect(rows.map((row) => [row.ChargePeriodStart, row.ChargePeriodEnd])).toEqual([
      ['2026-03-01T00:00:00Z', '2026-03-21T00:00:00Z'],
      ['2026-03-21T00:00:00Z', '2026-04-01T00:00:00Z'],
    ]);
    expect(rows[0].SkuPriceId).toBe('compute.g2.4:3600:seconds');
    expect(rows[1].SkuPriceId).toBe(rows[0].SkuPriceId);
    expect([rows[0].x_PriceRecordId, rows[1].x_PriceRecordId]).toEqual([String(g24Before.id), String(g24After.id)]);
    // 20 days and 11 days of hours: the quantity in pricing units is exact, and so is the identity.
    expect(rows.map((row) => [row.PricingQuantity, row.PricingUnit, row.ListUnitPrice, row.ListCost])).toEqual([
      ['480', '3600 Seconds', '0.1200', '57.6'],
      ['264', '3600 Seconds', '0.1500', '39.6'],
    ]);
    for (const row of rows) expect(gap(row.ListUnitPrice, row.PricingQuantity, row.ListCost).isZero()).toBe(true);
    expect(rows[0]).toMatchObject({
      SkuId: 'compute.g2.4',
      ConsumedQuantity: '1728000',
      ConsumedUnit: 'Seconds',
      ContractedUnitPrice: '0.1200',
      ContractedCost: '57.6',
      ServiceCategory: 'Compute',
      ServiceName: 'compute_instance',
      ProviderName: 'Example Cloud',
      PublisherName: 'Example Cloud',
      InvoiceIssuerName: 'Example Cloud',
      BillingAccountId: 'org_42',
      BillingAccountName: null,
      InvoiceId: null,
      BillingPeriodStart: '2026-03-01T00:00:00Z',
      BillingPeriodEnd: '2026-04-01T00:00:00Z',
      ChargeFrequency: 'Usage-Based',
      PricingCategory: 'Standard',
      x_ListPriceRecordId: String(g24Before.id),
    });
  });

  it("states the precision where the quantity has no finite decimal: an hour's share of 1,234 seconds", () => {
    const usage = { from: at('2026-03-02T00:00:00Z'), to: at('2026-03-02T00:20:34Z') };
    const [row] = rowsOf('compute.g2.4', list(g24Before), usage);
    expectFocusRules([row]);
    // 1234 / 3600 = 0.342777…: rounded half-even to 20 places; the cost is the exact rational's, as costOfUsage's.
    expect(row.PricingQuantity).toBe('0.34277777777777777778');
    expect(row.ListCost).toBe(costOfUsage(list(g24Before), 'seconds', usage).lines[0].cost);
    expect(row.ListCost).toBe('0.04113333333333333333');
    const off = gap(row.ListUnitPrice, row.PricingQuantity, row.ListCost);
    expect(off.toFixed()).toBe('0.0000000000000000000036'); // not exact, and within the bound
    expect(off.lte(bound(row.ListUnitPrice, row.PricingQuantity))).toBe(true);
  });

  it('splits an agreed price at a change of the list price under it: ListUnitPrice follows the list, ContractedUnitPrice the agreement', () => {
    const prices = { list: [gp1Before, gp1After], organization: [gp1Agreed] };
    const rows = rowsOf('storage.gp1', prices, { ...month, sizeGib: '100' });
    expectFocusRules(rows);
    expectTiled(rows, '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z');
    expect(
      rows.map((row) => [
        row.ChargePeriodStart!.slice(5, 10),
        row.ContractedUnitPrice,
        row.ListUnitPrice,
        row.x_PriceRecordId,
        row.x_ListPriceRecordId,
      ]),
    ).toEqual([
      ['03-01', '0.0480', '0.0480', String(gp1Before.id), String(gp1Before.id)],
      ['03-10', '0.0400', '0.0480', String(gp1Agreed.id), String(gp1Before.id)],
      ['03-21', '0.0400', '0.0500', String(gp1Agreed.id), String(gp1After.id)],
      ['03-25', '0.0500', '0.0500', String(gp1After.id), String(gp1After.id)],
    ]);
    expect(new Set(rows.map((row) => row.SkuPriceId))).toEqual(new Set(['storage.gp1:730:gib_hours']));
    // 100 GiB × 264 h (11 days) at 0.0480 / 730 listed, 0.0400 / 730 agreed.
    expect(rows[1]).toMatchObject({
      PricingQuantity: '36.16438356164383561644',
      PricingUnit: '730 GiB-Hours',
      ConsumedQuantity: '26400',
      ConsumedUnit: 'GiB-Hours',
      ListCost: '1.73589041095890410959',
      ContractedCost: '1.44657534246575342466',
      ChargeDescription: 'storage.gp1 at 0.0400 EUR per 730 GiB-Hours (price agreed with the organization)',
    });
  });

  it('takes an agreed price without a list price in force as the list price too, with no list record', () => {
    const agreedOnly = { list: [], organization: [gp1Agreed] };
    const usage = { from: at('2026-03-10T00:00:00Z'), to: at('2026-03-11T00:00:00Z'), sizeGib: '730' };
    const [row] = rowsOf('storage.gp1', agreedOnly, usage);
    expectFocusRules([row]);
    expect(row).toMatchObject({
      ListUnitPrice: '0.0400',
      ListCost: '0.96',
      ContractedCost: '0.96',
      x_ListPriceRecordId: null,
    });
  });

  it("writes a list price per the row's pricing unit when the agreed price has another unit", () => {
    const perGibHour = like(gp1Agreed, { unitCount: 1, amount: '0.00006' });
    const usage = { from: at('2026-03-10T00:00:00Z'), to: at('2026-03-10T01:00:00Z'), sizeGib: '1' };
    const [row] = rowsOf('storage.gp1', { list: [gp1Before], organization: [perGibHour] }, usage);
    expectFocusRules([row]);
    // 0.0480 per 730 GiB-hours is 0.0000657534… per GiB-hour: rounded to 20 places, the cost exact.
    expect(row).toMatchObject({
      PricingUnit: 'GiB-Hours',
      PricingQuantity: '1',
      ListUnitPrice: '0.00006575342465753425',
    });
    expect(row.ListCost).toBe('0.00006575342465753425');
    expect(row.SkuPriceId).toBe('storage.gp1:1:gib_hours');
  });

  it('leaves an unpriced part out of the rows and reports it: never a zero or a null price', () => {
    const cost = focusRows('compute.g2.4', list(g24Before), month, MARCH);
    expect(cost.complete).toBe(false);
    expect(cost.rows).toHaveLength(1);
    expect(cost.rows[0].ChargePeriodEnd).toBe('2026-03-21T00:00:00Z');
    expect(cost.unpriced).toEqual([{ from: at('2026-03-21T00:00:00Z'), to: month.to, quantity: '950400' }]);
  });

  it('writes the whole seconds a window touches: a boundary inside a second is in both rows, the quantities exact', () => {
    const before = like(g24Before, { validUntil: '2026-03-02T12:00:00.500Z' });
    const after = like(g24After, { validFrom: '2026-03-02T12:00:00.500Z' });
    const usage = { from: at('2026-03-02T11:59:59.250Z'), to: at('2026-03-02T12:00:02Z') };
    const rows = rowsOf('compute.g2.4', list(before, after), usage);
    expect(rows.map((row) => [row.ChargePeriodStart, row.ChargePeriodEnd, row.ConsumedQuantity])).toEqual([
      ['2026-03-02T11:59:59Z', '2026-03-02T12:00:01Z', '1.25'],
      ['2026-03-02T12:00:00Z', '2026-03-02T12:00:02Z', '1.5'],
    ]);
  });

  it('prices metered usage over a period at the price in force throughout, and refuses a period a change splits', () => {
    const hour = { from: at('2026-03-02T10:00:00Z'), to: at('2026-03-02T11:00:00Z'), quantity: '12.5' };
    const [row] = rowsOf('network.vpc_egress', list(egress, egressLater), hour);
    expectFocusRules([row]);
    expect(row).toMatchObject({
      ChargePeriodStart: '2026-03-02T10:00:00Z',
      ChargePeriodEnd: '2026-03-02T11:00:00Z',
      PricingQuantity: '12.5',
      PricingUnit: 'GB',
      ListCost: '0.125',
      ServiceCategory: 'Networking',
    });
    const bytes = rowsOf('network.vpc_egress', list(egress), { ...hour, quantity: undefined, bytes: 12_500_000_000n });
    expect(bytes[0].PricingQuantity).toBe('12.5');
    const split = { from: at('2026-03-14T23:00:00Z'), to: at('2026-03-15T01:00:00Z'), quantity: '1' };
    const error = refusal(() => focusRows('network.vpc_egress', list(egress, egressLater), split, MARCH));
    expect(error.code).toBe(PricingErrorCode.InvalidUsage);
    expect(error.details).toEqual({ field: 'to', price_changes_at: ['2026-03-15T00:00:00.000Z'] });
    expect(refusal(() => focusRows('network.vpc_egress', list(egress), { ...hour, to: hour.from }, MARCH)).field).toBe(
      'to',
    );
    const neither = { from: hour.from, to: hour.to };
    expect(refusal(() => focusRows('network.vpc_egress', list(egress), neither, MARCH)).field).toBe('quantity');
  });

  it('prices metered events in the windows costOfEvents gives them', () => {
    const events = [
      { at: at('2026-03-05T00:00:00Z'), quantity: '2' },
      { at: at('2026-03-20T00:00:00Z'), quantity: '3' },
    ];
    const rows = rowsOf('network.vpc_egress', list(egress, egressLater), { events });
    expectFocusRules(rows);
    expect(rows.map((row) => [row.ChargePeriodStart, row.ChargePeriodEnd, row.PricingQuantity, row.ListCost])).toEqual([
      ['2026-03-05T00:00:00Z', '2026-03-15T00:00:00Z', '2', '0.02'],
      ['2026-03-15T00:00:00Z', '2026-03-20T00:00:01Z', '3', '0.024'], // the last event's second included
    ]);
  });

  it('refuses usage outside the billing period, billing details missing, and a key of no family', () => {
    const april = { from: at('2026-03-31T00:00:00Z'), to: at('2026-04-01T00:00:01Z') };
    expect(refusal(() => focusRows('compute.g2.4', list(g24After), april, MARCH)).field).toBe('billingPeriodEnd');
    for (const [field, billing] of [
      ['providerName', { ...MARCH, providerName: '' }],
      ['billingAccountId', { ...MARCH, billingAccountId: undefined as unknown as string }],
      ['billingPeriodEnd', { ...MARCH, billingPeriodEnd: MARCH.billingPeriodStart }],
      ['billingPeriodStart', { ...MARCH, billingPeriodStart: at('2026-03-01T00:00:00.001Z') }],
      ['billingPeriodEnd', { ...MARCH, billingPeriodEnd: at('+010000-01-01T00:00:00Z') }],
    ] as const) {
      expect(refusal(() => focusRows('compute.g2.4', list(g24After), month, billing)).field).toBe(field);
    }
    const unknown = thrownAs(UnknownProductError, () => focusRows('compute.x', list(), month, MARCH));
    expect(unknown.code).toBe('UNKNOWN_PRODUCT');
    expect(refusal(() => focusRows('compute.g2.4', list(), { ...month, quantity: '1' }, MARCH)).field).toBe('quantity');
  });
});

describe('focusCsv', () => {
  it('writes RFC 4180: the header, one CRLF line per row, a field with a comma, quote or line break quoted', () => {
    const billing = { ...MARCH, billingAccountName: 'ACME, "EU"\nLtd', invoiceId: 'INV-1' };
    const rows = rowsOf(
      'compute.g2.4',
      list(g24Before),
      { from: at('2026-03-02T00:00:00Z'), to: at('2026-03-02T01:00:00Z') },
      billing,
    );
    const csv = focusCsv(rows);
    const [header, record, end] = csv.split('\r\n');
    expect(header).toBe(FOCUS_COLUMNS.join(','));
    expect(end).toBe('');
    expect(record).toBe(
      [
        '0.12',
        'org_42',
        '"ACME, ""EU""\nLtd"',
        'EUR',
        '2026-04-01T00:00:00Z',
        '2026-03-01T00:00:00Z',
        'Usage',
        '',
        'compute.g2.4 at 0.1200 EUR per 3600 Seconds (list price)',
        'Usage-Based',
        '2026-03-02T01:00:00Z',
        '2026-03-02T00:00:00Z',
        '3600',
        'Seconds',
        '0.12',
        '0.1200',
        '0.12',
        'INV-1',
        'Example Cloud',
        '0.12',
        '0.1200',
        'Standard',
        '1',
        '3600 Seconds',
        'Example Cloud',
        'Example Cloud',
        'Compute',
        'compute_instance',
        'compute.g2.4',
        'compute.g2.4:3600:seconds',
        String(g24Before.id),
        String(g24Before.id),
      ].join(','),
    );
  });
});
