import { FOCUS_COLUMNS, type FocusRow } from '@app/pricing';
import Decimal from 'decimal.js';
import { applyBook } from '../support/database';
import { price, recordsOf, useCliDatabase } from '../support/price-book-cli';

// `focus` (docs/price-book-cli.md): a usage file priced with the book in a real database, as FOCUS
// 1.2 rows in CSV; each row checked against FOCUS's own rules.

const MARCH = ['--billing-period-start', '2026-03-01T00:00:00Z', '--billing-period-end', '2026-04-01T00:00:00Z'];
const HEADER = 'product_key,organization_id,start,end,quantity,size_gib';
const USAGE = [
  HEADER,
  // A month of an instance, across the list price's change on 21 March.
  'compute.f1.2,,2026-03-01T00:00:00Z,2026-04-01T00:00:00Z,,',
  // A volume of org_42's, whose agreed price applies from 10 to 25 March, across the same change.
  'storage.gp1,org_42,2026-03-01T00:00:00Z,2026-04-01T00:00:00Z,,100',
  // An hour of traffic.
  'network.vpc_egress,org_42,2026-03-02T10:00:00Z,2026-03-02T11:00:00Z,12.5,',
].join('\r\n');

/** RFC 4180 records of `text` (quoted fields with doubled quotes, CRLF), as a FOCUS reader reads them. */
function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const close = text.indexOf('"', i + 1);
      field += text.slice(i + 1, close);
      i = close;
      if (text[i + 1] === '"') field += '"';
    } else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      records.push([...fields, field]);
      [fields, field] = [[], ''];
      i++;
    } else field += c;
  }
  expect(field).toBe(''); // every record ends with CRLF
  return records;
}

/** The rows of a CSV of FOCUS_COLUMNS: an empty field is a null. */
function focusRowsOf(csv: string): FocusRow[] {
  const [header, ...records] = csvRecords(csv);
  expect(header).toEqual([...FOCUS_COLUMNS]);
  return records.map(
    (fields) => Object.fromEntries(FOCUS_COLUMNS.map((column, i) => [column, fields[i] || null])) as FocusRow,
  );
}

describe('focus', () => {
  const f = useCliDatabase();
  beforeAll(async () => {
    await applyBook(f.dataSource, {
      prices: [
        price('compute.f1.2', '0.1200', { valid_from: '2026-01-01T00:00:00Z', valid_until: '2026-03-21T00:00:00Z' }),
        price('compute.f1.2', '0.1500', { valid_from: '2026-03-21T00:00:00Z' }),
        price('storage.gp1', '0.0480', { valid_from: '2026-01-01T00:00:00Z', valid_until: '2026-03-21T00:00:00Z' }),
        price('storage.gp1', '0.0500', { valid_from: '2026-03-21T00:00:00Z' }),
        price('storage.gp1', '0.0400', {
          organization_id: 'org_42',
          valid_from: '2026-03-10T00:00:00Z',
          valid_until: '2026-03-25T00:00:00Z',
        }),
        price('network.vpc_egress', '0.0100', { valid_from: '2026-01-01T00:00:00Z' }),
      ],
    });
  });

  it("prices a usage file across a price change as FOCUS rows that keep FOCUS's rules", async () => {
    const file = await f.bookFile(USAGE);
    const result = await f.cli('focus', file, '--provider', 'Example Cloud', '--billing-account', 'acct_1', ...MARCH);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const rows = focusRowsOf(result.stdout);
    const [computeBefore, computeAfter] = await recordsOf(f.dataSource, 'compute.f1.2');
    const gp1 = await recordsOf(f.dataSource, 'storage.gp1');
    const [gp1Agreed] = await recordsOf(f.dataSource, 'storage.gp1', 'org_42');

    // The instant across the change: two rows, one SkuPriceId, the two records' ids.
    expect(rows.slice(0, 2).map((row) => [row.ChargePeriodStart, row.ChargePeriodEnd, row.x_PriceRecordId])).toEqual([
      ['2026-03-01T00:00:00Z', '2026-03-21T00:00:00Z', computeBefore.id],
      ['2026-03-21T00:00:00Z', '2026-04-01T00:00:00Z', computeAfter.id],
    ]);
    expect(rows[0].SkuPriceId).toBe('compute.f1.2:3600:seconds');
    expect(rows[1].SkuPriceId).toBe(rows[0].SkuPriceId);
    expect(
      rows.slice(0, 2).map((row) => [row.PricingQuantity, row.ListUnitPrice, row.ListCost, row.BilledCost]),
    ).toEqual([
      ['480', '0.1200', '57.6', '57.6'],
      ['264', '0.1500', '39.6', '39.6'],
    ]);
    // The volume: split where the agreed price starts and ends, and where the list price changes under it.
    expect(rows.slice(2, 6).map((row) => [row.ChargePeriodStart, row.ContractedUnitPrice, row.ListUnitPrice])).toEqual([
      ['2026-03-01T00:00:00Z', '0.0480', '0.0480'],
      ['2026-03-10T00:00:00Z', '0.0400', '0.0480'],
      ['2026-03-21T00:00:00Z', '0.0400', '0.0500'],
      ['2026-03-25T00:00:00Z', '0.0500', '0.0500'],
    ]);
    expect(rows.slice(2, 6).map((row) => [row.x_PriceRecordId, row.x_ListPriceRecordId])).toEqual([
      [gp1[0].id, gp1[0].id],
      [gp1Agreed.id, gp1[0].id],
      [gp1Agreed.id, gp1[1].id],
      [gp1[1].id, gp1[1].id],
    ]);
    expect(rows[6]).toMatchObject({
      PricingQuantity: '12.5',
      PricingUnit: 'GB',
      ListCost: '0.125',
      SkuId: 'network.vpc_egress',
    });
    expect(rows.map((row) => row.BillingAccountId)).toEqual(['acct_1', 'acct_1', ...Array(5).fill('org_42')]);

    for (const row of rows) {
      // Present and typed: decimals plain, instants YYYY-MM-DDTHH:mm:ssZ, no null where FOCUS forbids one.
      for (const column of [
        'BilledCost',
        'ContractedCost',
        'ContractedUnitPrice',
        'EffectiveCost',
        'ListCost',
        'ListUnitPrice',
        'PricingQuantity',
      ] as const) {
        expect(row[column]).toMatch(/^(?:0|[1-9]\d*)(?:\.\d+)?$/);
      }
      for (const column of [
        'ChargePeriodStart',
        'ChargePeriodEnd',
        'BillingPeriodStart',
        'BillingPeriodEnd',
      ] as const) {
        expect(row[column]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      }
      expect(row).toMatchObject({
        BillingCurrency: 'EUR',
        ChargeCategory: 'Usage',
        ChargeClass: null,
        ProviderName: 'Example Cloud',
        BillingPeriodStart: '2026-03-01T00:00:00Z',
        BillingPeriodEnd: '2026-04-01T00:00:00Z',
        EffectiveCost: row.ContractedCost,
        BilledCost: row.ContractedCost,
      });
      expect(row.ChargePeriodStart! < row.ChargePeriodEnd!).toBe(true);
      // ListUnitPrice × PricingQuantity = ListCost, and contracted likewise: within the stated precision,
      // (UnitPrice + PricingQuantity + 2) halves of 10^-20 (100 GiB-hours / 730 has no finite decimal).
      for (const [unitPrice, cost] of [
        [row.ListUnitPrice!, row.ListCost!],
        [row.ContractedUnitPrice!, row.ContractedCost!],
      ]) {
        const gap = new Decimal(unitPrice).times(row.PricingQuantity!).minus(cost).abs();
        expect(gap.lte(new Decimal(unitPrice).plus(row.PricingQuantity!).plus(2).times('0.5e-20'))).toBe(true);
      }
    }
    // Exactly, where the quantity in pricing units is exact: hours of an instance, GB of traffic.
    for (const row of [rows[0], rows[1], rows[6]]) {
      expect(new Decimal(row.ListUnitPrice!).times(row.PricingQuantity!).eq(row.ListCost!)).toBe(true);
      expect(new Decimal(row.ContractedUnitPrice!).times(row.PricingQuantity!).eq(row.ContractedCost!)).toBe(true);
    }
    // Half-open periods in UTC: each usage's rows follow each other without a gap or an overlap.
    for (const [first, last] of [
      [0, 1],
      [2, 5],
    ]) {
      for (let i = first + 1; i <= last; i++) expect(rows[i].ChargePeriodStart).toBe(rows[i - 1].ChargePeriodEnd);
    }
  });

  it('refuses usage with no price, outside the billing period, metered across a change or without a billing account: no row printed', async () => {
    const file = await f.bookFile(
      [
        HEADER,
        'compute.f1.2,,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,,',
        'compute.zz.9,org_42,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,,',
        'storage.snapshot,,2026-03-31T00:00:00Z,2026-04-02T00:00:00Z,,10',
        'network.vpc_egress,,2025-12-31T23:00:00Z,2026-01-01T01:00:00Z,1,',
      ].join('\n'),
    );
    const result = await f.expectRefused([
      'focus',
      file,
      '--provider',
      'Example Cloud',
      '--billing-account',
      'acct_1',
      ...MARCH,
    ]);
    expect(result.stderr).toBe(
      [
        `${file}: refused, no rows were written:`,
        '  line 3: compute.zz.9 for org_42 has no price from 2026-03-01T00:00:00.000Z to 2026-03-02T00:00:00.000Z',
        '  line 4: usage from 2026-03-31T00:00:00.000Z to 2026-04-02T00:00:00.000Z lies outside the billing period',
        '  line 5: the price changes at 2026-01-01T00:00:00.000Z, inside the metered period from 2025-12-31T23:00:00.000Z to 2026-01-01T01:00:00.000Z: give the usage before and after it apart',
        '',
      ].join('\n'),
    );
    const split = await f.bookFile(
      `${HEADER}\ncompute.f1.2,org_42,2026-03-20T00:00:00Z,2026-03-22T00:00:00Z,,\nnetwork.vpc_egress,,2026-03-20T23:00:00Z,2026-03-21T01:00:00Z,1,`,
    );
    await f.expectRefused(
      ['focus', split, '--provider', 'P', ...MARCH],
      'line 3: no organization_id, and no --billing-account',
    );
  });

  it('refuses a wrong command line with exit 64, and a malformed usage file with exit 3', async () => {
    const file = await f.bookFile(USAGE);
    await f.expectRefused(['focus', file, ...MARCH], 'focus needs --provider', { code: 64 });
    await f.expectRefused(['focus', file, '--provider', 'P', MARCH[0], MARCH[1]], 'focus needs --billing-period-end', {
      code: 64,
    });
    await f.expectRefused(
      ['focus', file, '--provider', 'P', MARCH[0], '2026-03-01T00:00:00.5Z', MARCH[2], MARCH[3]],
      'not a whole second',
      { code: 64 },
    );
    const bad = await f.bookFile(`${HEADER}\nstorage.gp2,,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,,1\n`);
    await f.expectRefused(
      ['focus', bad, '--provider', 'P', ...MARCH],
      `${bad}: refused, nothing was priced:\n  line 2: product_key "storage.gp2"`,
    );
  });

  it('--as-recorded-at: the rows first sent, after a correction written since; later than now refused', async () => {
    const file = await f.bookFile(USAGE);
    const args = ['focus', file, '--provider', 'Example Cloud', '--billing-account', 'acct_1', ...MARCH];
    const sentAt = new Date().toISOString();
    const sent = await f.cli(...args, '--as-recorded-at', sentAt);
    expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: '' });
    // A correction: org_42 agreed a price of the instance from 1 March, recorded now.
    await applyBook(f.dataSource, {
      prices: [price('compute.f1.2', '0.1000', { organization_id: 'org_42', valid_from: '2026-03-01T00:00:00Z' })],
    });
    const usage = await f.bookFile(`${USAGE}
compute.f1.2,org_42,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,,`);
    const usageArgs = ['focus', usage, '--provider', 'Example Cloud', '--billing-account', 'acct_1', ...MARCH];
    const now = focusRowsOf((await f.cli(...usageArgs)).stdout);
    expect(now.at(-1)).toMatchObject({ ContractedUnitPrice: '0.1000', ListUnitPrice: '0.1200' });
    const then = focusRowsOf((await f.cli(...usageArgs, '--as-recorded-at', sentAt)).stdout);
    expect(then.at(-1)).toMatchObject({ ContractedUnitPrice: '0.1200', ListUnitPrice: '0.1200' });
    expect(then.slice(0, -1)).toEqual(focusRowsOf(sent.stdout));
    expect((await f.cli(...args, '--as-recorded-at', sentAt)).stdout).toBe(sent.stdout);
    await f.expectRefused([...args, '--as-recorded-at', '2999-01-01T00:00:00Z'], 'is later than now', { code: 64 });
  });
});
