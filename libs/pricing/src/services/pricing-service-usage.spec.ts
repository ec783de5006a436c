import { gp1Priced, record, serviceOf, thrownBy } from './pricing-service.fixture';

describe('PricingService.costOfUsage and costOfEvents', () => {
  const listGp1 = gp1Priced('0.0730', { from: '2026-01-01T00:00:00Z', until: '2026-02-01T00:00:00Z' });
  const listGp1Later = gp1Priced('0.1460', { from: '2026-02-01T00:00:00Z' });
  const orgGp1 = gp1Priced('0', { org: 'org_42', from: '2026-01-25T00:00:00Z', until: '2026-01-26T00:00:00Z' });
  const egress = record({
    key: 'network.vpc_egress',
    unit: 'gb',
    count: 1,
    amount: '0.01',
    from: '2026-01-01T00:00:00Z',
  });

  it('splits a volume at the price change and at the organization price inside it, with public prices', async () => {
    const { service } = await serviceOf([listGp1, listGp1Later, orgGp1, egress]);
    const usage = { from: new Date('2026-01-24T00:00:00Z'), to: new Date('2026-02-02T00:00:00Z'), sizeGib: '10' };
    const cost = service.costOfUsage('storage.gp1', usage, { organizationId: 'org_42' });
    // 10 GiB × 24 h = 240 GiB-hours a day; 0.0730 per 730 is 0.0001 per GiB-hour, then 0.0002.
    expect(cost.lines.map((l) => [l.from.toISOString().slice(5, 10), l.quantity, l.price?.scope, l.cost])).toEqual([
      ['01-24', '240', 'list', '0.024'],
      ['01-25', '240', 'organization', '0'],
      ['01-26', '1440', 'list', '0.144'],
      ['02-01', '240', 'list', '0.048'],
    ]);
    expect(cost).toMatchObject({ total: '0.216', complete: true });
    expect(Object.keys(cost.lines[1].price!).sort()).toEqual(
      [
        'amount',
        'id',
        'organizationId',
        'productKey',
        'scope',
        'unitCount',
        'unitType',
        'validFrom',
        'validUntil',
      ].sort(),
    );
    // Without the organization, list prices only.
    expect(service.costOfUsage('storage.gp1', usage).total).toBe('0.24');
  });

  it('prices metered events, bytes as decimal GB', async () => {
    const { service } = await serviceOf([egress]);
    const cost = service.costOfEvents('network.vpc_egress', [
      { at: new Date('2026-03-01T00:00:00Z'), bytes: 1_500_000_000n },
      { at: new Date('2026-03-02T00:00:00Z'), quantity: '0.5' },
    ]);
    expect(cost).toMatchObject({ total: '0.02', complete: true });
    expect(cost.lines).toHaveLength(1);
    expect(cost.lines[0]).toMatchObject({ quantity: '2', cost: '0.02', price: { productKey: 'network.vpc_egress' } });
  });

  it("gives FOCUS rows of the prices it holds: the organization's agreed price where in force, with both records", async () => {
    const { service } = await serviceOf([listGp1, listGp1Later, orgGp1, egress]);
    const usage = { from: new Date('2026-01-24T00:00:00Z'), to: new Date('2026-02-02T00:00:00Z'), sizeGib: '10' };
    const billing = {
      providerName: 'Example Cloud',
      billingAccountId: 'org_42',
      billingPeriodStart: new Date('2026-01-01T00:00:00Z'),
      billingPeriodEnd: new Date('2026-03-01T00:00:00Z'),
    };
    const cost = service.focusRows('storage.gp1', usage, { organizationId: 'org_42' }, billing);
    expect(cost.complete).toBe(true);
    expect(
      cost.rows.map((row) => [row.ChargePeriodStart, row.ContractedCost, row.ListCost, row.x_PriceRecordId]),
    ).toEqual([
      ['2026-01-24T00:00:00Z', '0.024', '0.024', String(listGp1.id)],
      ['2026-01-25T00:00:00Z', '0', '0.024', String(orgGp1.id)],
      ['2026-01-26T00:00:00Z', '0.144', '0.144', String(listGp1.id)],
      ['2026-02-01T00:00:00Z', '0.048', '0.048', String(listGp1Later.id)],
    ]);
    expect(thrownBy(() => service.focusRows('storage.gp9', usage, {}, billing)).code).toBe('UNKNOWN_PRODUCT');
  });

  it('refuses an unknown product, and answers nothing before prices are loaded', async () => {
    const { service, cache } = await serviceOf([egress]);
    const interval = { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-03-02T00:00:00Z') };
    expect(thrownBy(() => service.costOfUsage('storage.gp9', interval)).code).toBe('UNKNOWN_PRODUCT');
    expect(thrownBy(() => service.costOfUsage('network.vpc_egress', interval)).code).toBe('INVALID_USAGE');
    cache.replace(undefined);
    expect(thrownBy(() => service.costOfEvents('network.vpc_egress', [])).code).toBe('PRICING_UNAVAILABLE');
    const billing = {
      providerName: 'Example Cloud',
      billingAccountId: 'org_42',
      billingPeriodStart: new Date('2026-03-01T00:00:00Z'),
      billingPeriodEnd: new Date('2026-04-01T00:00:00Z'),
    };
    const hour = { from: interval.from, to: new Date('2026-03-01T01:00:00Z'), quantity: '1' };
    expect(thrownBy(() => service.focusRows('network.vpc_egress', hour, {}, billing)).code).toBe('PRICING_UNAVAILABLE');
  });
});
