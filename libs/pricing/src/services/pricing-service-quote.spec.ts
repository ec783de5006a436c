import { costOf, gp1, gp1Priced, NOW, record, serviceOf, thrownBy } from './pricing-service.fixture';
import { PricingErrorCode } from '../errors/pricing-error';
import type { UnitType } from '../catalogue/catalogue';

describe('PricingService.quote', () => {
  const from = '2026-01-01T00:00:00Z';

  it.each<[UnitType, string, number, string, string, string]>([
    ['seconds', 'compute.g2.4', 3600, '0.0610', '7200', '0.122'],
    ['seconds', 'network.floating_ip', 3600, '0.0050', '1', '0.00000138888888888889'],
    ['gib_hours', 'storage.gp1', 730, '0.0480', '730', '0.048'],
    ['gib_hours', 'storage.snapshot', 730, '0.0100', '73', '0.001'],
    ['gb', 'network.vpc_egress', 1, '0.01', '1234.5', '12.345'],
    ['metric_months', 'observability.custom_metric', 1, '0.10', '3', '0.3'],
    ['requests', 'observability.api_request', 1000000, '0.50', '2500000', '1.25'],
    ['samples', 'observability.ingested_sample', 1000000, '0.20', '123', '0.0000246'],
  ])('prices %s (%s, %i units for %s × %s)', async (unit, key, count, amount, quantity, cost) => {
    const priced = record({ key, unit, count, amount, from });
    const { service } = await serviceOf([priced]);
    const quote = service.quote(key, quantity);
    expect(quote).toEqual({
      found: true,
      asRecordedAt: new Date(NOW),
      price: {
        id: priced.id,
        productKey: key,
        scope: 'list',
        organizationId: null,
        unitType: unit,
        unitCount: count,
        amount,
        validFrom: new Date(from),
        validUntil: null,
      },
      quantity,
      cost,
    });
    expect(typeof costOf(quote)).toBe('string');
  });

  it('"0.0480" per 730 GiB-hours for 730 GiB-hours costs "0.048"', async () => {
    const { service } = await serviceOf([gp1]);
    expect(costOf(service.quote('storage.gp1', '730'))).toBe('0.048');
    expect(costOf(service.quote('storage.gp1', 730n))).toBe('0.048');
    expect(costOf(service.quote('storage.gp1', '1000000'))).toBe('65.75342465753424657534');
  });

  /** The cost of `quantity` GB of egress at `amount` per `count` GB, quoted through the service. */
  const egressCost = async (amount: string, quantity: string | bigint, count = 1): Promise<string | undefined> =>
    costOf(
      (await serviceOf([record({ key: 'network.vpc_egress', unit: 'gb', count, amount, from })])).service.quote(
        'network.vpc_egress',
        quantity,
      ),
    );

  it.each([
    ['0.1', '3', 1, '0.3'], // 0.1 * 3 === 0.30000000000000004 in floats
    ['0.07', '100', 1, '7'], // 0.07 * 100 === 7.000000000000001
    ['0.1', '0.2', 1, '0.02'], // 0.1 * 0.2 === 0.020000000000000004
    ['1.1', '1.1', 1, '1.21'], // 1.1 * 1.1 === 1.2100000000000002
    ['0.3', '1', 3, '0.1'], // 0.3 / 3 === 0.09999999999999999
  ])('computes %s × %s / %i exactly as %s, where floats would round', async (amount, quantity, count, cost) => {
    expect(await egressCost(amount, quantity, count)).toBe(cost);
  });

  // Amount, quantity, unit count and the exact cost: one rounding, half-even, to 20 decimal places.
  it.each<[string, string, string | bigint, number, string]>([
    ['tiny amounts, never in exponent form', '0.000000012', '1', 1, '0.000000012'],
    ['a tiny quantity', '0.000000012', '0.000000001', 1, '0.000000000000000012'],
    ['a zero quantity', '0.000000012', '0', 1, '0'],
    ['21 decimal places, rounded once to 20', '0.000000012', '0.000000000001', 1, '0.00000000000000000001'],
    [
      'huge amounts and quantities (30+ digits)',
      '123456789012345678901234567890.12345678',
      '987654321098765432109876543210',
      1,
      '121932631137021795226185032733744855954473403443334857491122.2374638',
    ],
    [
      'a huge bigint quantity',
      '123456789012345678901234567890.12345678',
      987654321098765432109876543210n,
      1,
      '121932631137021795226185032733744855954473403443334857491122.2374638',
    ],
    [
      'a 40-character amount, a 60-digit quantity and the largest unit count',
      '123456789012345678901234567890.12345678',
      '987654321098765432109876543210.987654321098765432109876543210',
      2147483647,
      '56779306006525224648746781694988520015310004937402.46047324428464891331',
    ],
    [
      'the largest amount and quantity',
      '99999999999999999999999999999999999999.9',
      '9'.repeat(60),
      7,
      '14285714285714285714285714285714285714271428571428571428571414285714285714285714285714285714285714.3',
    ],
    ['the largest unit count', '1', '1', 2147483647, '0.00000000046566128752'],
    ['a third', '1', '1', 3, '0.33333333333333333333'],
    ['two thirds, rounded up', '2', '1', 3, '0.66666666666666666667'],
    ['a third three times: 1, not 0.99999999999999999999', '1', '3', 3, '1'],
    ['a tie rounded down to even', '0.000000000000000000025', '1', 1, '0.00000000000000000002'],
    ['a tie rounded up to even', '0.000000000000000000035', '1', 1, '0.00000000000000000004'],
    ['a tie at 15', '0.000000000000000000015', '1', 1, '0.00000000000000000002'],
    ['past a tie', '0.0000000000000000000251', '1', 1, '0.00000000000000000003'],
  ])('stays exact: %s', async (_what, amount, quantity, count, cost) => {
    expect(await egressCost(amount, quantity, count)).toBe(cost);
  });

  it('rounds a division that does not terminate once, to 20 decimal places, for seconds too', async () => {
    const per3600 = await serviceOf([
      record({ key: 'compute.g2.4', unit: 'seconds', count: 3600, amount: '0.0610', from }),
    ]);
    expect(costOf(per3600.service.quote('compute.g2.4', '1'))).toBe('0.00001694444444444444');
  });

  it('takes bigint and string quantities, and reports the quantity as a decimal string', async () => {
    const { service } = await serviceOf([gp1]);
    expect(service.quote('storage.gp1', 0n)).toMatchObject({ quantity: '0', cost: '0' });
    expect(service.quote('storage.gp1', 1460n)).toMatchObject({ quantity: '1460', cost: '0.096' });
    expect(service.quote('storage.gp1', 10n ** 40n)).toMatchObject({
      quantity: '1' + '0'.repeat(40),
      cost: '657534246575342465753424657534246575.34246575342465753425',
    });
    expect(service.quote('storage.gp1', '365')).toMatchObject({ quantity: '365', cost: '0.024' });
    expect(service.quote('storage.gp1', '0.5')).toMatchObject({ quantity: '0.5', cost: '0.00003287671232876712' });
  });

  it('uses the organization price for an organization, the list price otherwise', async () => {
    const org = record({ key: 'storage.gp1', org: 'org_42', unit: 'gib_hours', count: 730, amount: '0.0400', from });
    const { service } = await serviceOf([gp1, org]);
    expect(service.quote('storage.gp1', '730', { organizationId: 'org_42' })).toMatchObject({
      price: { scope: 'organization', organizationId: 'org_42', amount: '0.0400' },
      cost: '0.04',
    });
    expect(service.quote('storage.gp1', '730', { organizationId: 'org_7' })).toMatchObject({
      price: { scope: 'list' },
      cost: '0.048',
    });
    expect(service.quote('storage.gp1', '730')).toMatchObject({ price: { scope: 'list' }, cost: '0.048' });
  });

  it('prices at the instant asked for', async () => {
    const old = gp1Priced('0.0480', { from, until: '2026-07-01T00:00:00Z' });
    const next = gp1Priced('0.0730', { from: '2026-07-01T00:00:00Z' });
    const { service } = await serviceOf([old, next]);
    expect(costOf(service.quote('storage.gp1', '730', { at: new Date('2026-06-30T23:59:59.999Z') }))).toBe('0.048');
    expect(costOf(service.quote('storage.gp1', '730', { at: new Date('2026-07-01T00:00:00.000Z') }))).toBe('0.073');
  });

  it.each<[string, string | bigint]>([
    ['negative', '-1'],
    ['negative bigint', -1n],
    ['exponent', '1e3'],
    ['exponent with fraction', '1.5E2'],
    ['empty', ''],
    ['a sign', '+1'],
    ['a leading zero', '01'],
    ['a trailing dot', '1.'],
    ['a leading dot', '.5'],
    ['whitespace', ' 1'],
    ['a comma', '1,5'],
    ['NaN', 'NaN'],
    ['Infinity', 'Infinity'],
    ['hex', '0x10'],
    ['61 digits', '1'.repeat(61)],
  ])('refuses a quantity with %s with INVALID_QUANTITY', async (_label, quantity) => {
    const { service } = await serviceOf([gp1]);
    const error = thrownBy(() => service.quote('storage.gp1', quantity));
    expect(error.code).toBe(PricingErrorCode.InvalidQuantity);
    expect(error.code).toBe('INVALID_QUANTITY');
    expect(error.details).toEqual({ quantity: String(quantity) });
  });

  it('refuses a JavaScript number from an untyped caller with INVALID_QUANTITY', async () => {
    const { service } = await serviceOf([gp1]);
    const error = thrownBy(() => service.quote('storage.gp1', 0.1 as unknown as string));
    expect(error.code).toBe('INVALID_QUANTITY');
  });

  it('accepts a quantity of 60 digits', async () => {
    const egress = (await serviceOf([record({ key: 'network.vpc_egress', unit: 'gb', count: 1, amount: '1', from })]))
      .service;
    expect(costOf(egress.quote('network.vpc_egress', '9'.repeat(60)))).toBe('9'.repeat(60));
    expect(costOf(egress.quote('network.vpc_egress', `0.${'9'.repeat(59)}`))).toBe('1');
  });

  it('answers { found: false } when there is no price, as priceAt does', async () => {
    const scheduled = record({
      key: 'compute.g2.4',
      unit: 'seconds',
      count: 3600,
      amount: '0.0610',
      from: '2026-07-01T00:00:00Z',
    });
    const { service } = await serviceOf([gp1, scheduled]);
    expect(service.quote('storage.snapshot', '1')).toEqual({ found: false, asRecordedAt: new Date(NOW) });
    expect(service.quote('compute.g2.4', '3600')).toEqual({ found: false, asRecordedAt: new Date(NOW) });
    expect(service.quote('storage.gp1', '730', { at: new Date('2025-12-31T23:59:59.999Z') })).toEqual({
      found: false,
      asRecordedAt: new Date(NOW),
    });
    expect(costOf(service.quote('compute.g2.4', '3600', { at: new Date('2026-07-01T00:00:00Z') }))).toBe('0.061');
  });

  it('throws PRICING_UNAVAILABLE when no snapshot can be served', async () => {
    const { service, cache } = await serviceOf([gp1]);
    cache.replace(undefined);
    expect(thrownBy(() => service.quote('storage.gp1', '730')).code).toBe('PRICING_UNAVAILABLE');
  });
});
