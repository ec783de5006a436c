import {
  cost,
  describeChange,
  diffPriceLists,
  exactText,
  familyName,
  feedChange,
  formatEuro,
  parseQuantity,
  productName,
  quantityInUnits,
  unitWords,
  type Price,
  type PriceList,
} from './prices.mjs';

describe('unit words', () => {
  it.each([
    ['seconds', 3600, 'per hour'],
    ['seconds', 7200, 'per 2 hours'],
    ['seconds', 60, 'per minute'],
    ['seconds', 1, 'per second'],
    ['seconds', 90, 'per 90 seconds'],
    ['gib_hours', 730, 'per GiB-month'],
    ['gib_hours', 1460, 'per 2 GiB-months'],
    ['gib_hours', 1, 'per GiB-hour'],
    ['gib_hours', 24, 'per 24 GiB-hours'],
    ['gb', 1, 'per GB'],
    ['gb', 1000, 'per 1,000 GB'],
    ['metric_months', 1, 'per metric-month'],
    ['requests', 1, 'per request'],
    ['requests', 1000, 'per 1,000 requests'],
    ['samples', 1000000, 'per 1,000,000 samples'],
    ['widgets', 5, 'per 5 widgets'],
  ])('%s × %d is "%s"', (unitType, unitCount, words) => {
    expect(unitWords(unitType, unitCount)).toBe(words);
  });
});

describe('names and amounts', () => {
  const price = (product_key: string, dimensions?: Record<string, string>): Price => ({
    product_key,
    dimensions,
    unit_type: 'seconds',
    unit_count: 3600,
    amount: '1',
    valid_from: '2026-01-01T00:00:00Z',
    valid_until: null,
  });

  it('names families in words, and ones it does not know from their identifier', () => {
    expect(familyName('compute_instance')).toBe('Compute instances');
    expect(familyName('network_floating_ip')).toBe('Floating IPs');
    expect(familyName('network_load_balancer')).toBe('Network load balancer');
  });

  it('names a product by its dimension, else in words, else by its key', () => {
    expect(productName('compute_instance', price('compute.g2.4', { instance_type: 'g2.4' }))).toBe('g2.4');
    expect(productName('storage_volume', price('storage.gp1', { storage_class: 'gp1' }))).toBe('gp1');
    expect(productName('network_nat_gateway', price('network.nat_gateway'))).toBe('NAT gateway');
    expect(productName('network_load_balancer', price('network.load_balancer'))).toBe('network.load_balancer');
  });

  it('shows amounts with the digits they were published with', () => {
    expect(formatEuro('0.0305')).toBe('€0.0305');
    expect(formatEuro('0.000012')).toBe('€0.000012');
    expect(formatEuro('0')).toBe('€0');
    expect(formatEuro('1234567.50')).toBe('€1,234,567.50');
  });
});

describe('the calculator', () => {
  it('reads quantities as decimals, refusing commas and anything else', () => {
    expect(parseQuantity(' 1 000.5 ').value?.toFixed()).toBe('1000.5');
    expect(parseQuantity('0.1').value?.toFixed()).toBe('0.1');
    expect(parseQuantity('1,5').error).toMatch(/decimal point/);
    expect(parseQuantity('1e3').error).toBeDefined();
    expect(parseQuantity('-1').error).toBeDefined();
    expect(parseQuantity('').error).toBe('Enter a quantity.');
  });

  it('converts natural units into the price unit exactly', () => {
    expect(quantityInUnits('seconds', { hours: '1.5' }).toFixed()).toBe('5400');
    expect(quantityInUnits('gib_hours', { gib: '100', hours: '24' }).toFixed()).toBe('2400');
    expect(quantityInUnits('gb', { gb: '0.1' }).toFixed()).toBe('0.1');
  });

  it('computes amount × quantity / unit count exactly, and rounds half up to the cent', () => {
    const hourly = cost('0.0305', 3600, quantityInUnits('seconds', { hours: '730' }));
    expect(hourly).toEqual({ cents: '22.27', exact: { whole: '22', fraction: '265', repetend: '', cut: false } });
    expect(exactText(hourly.exact)).toBe('22.265');

    expect(exactText(cost('0.000012', 1000000, '123456789').exact)).toBe('0.001481481468');
    expect(cost('0.1', 1, '0.1').cents).toBe('0.01');
    expect(cost('0.0100', 1000, '2500').cents).toBe('0.03'); // 0.025 rounds up
    expect(cost('1234.5', 1, '1000').exact.whole).toBe('1234500');
    expect(exactText(cost('1234.5', 1, '1000').exact)).toBe('1234500');
  });

  it('shows a repeating expansion with its repetend, never a float', () => {
    const monthly = cost('0.0480', 730, '2400'); // 100 GiB for 24 hours: 288/1825
    expect(monthly.cents).toBe('0.16');
    expect(monthly.exact).toEqual({ whole: '0', fraction: '15', repetend: '78082191' });
    expect(exactText(monthly.exact)).toBe('0.15(78082191)…');
    expect(cost('1', 3, '1').exact).toEqual({ whole: '0', fraction: '', repetend: '3' });
    // 0.1 + 0.2 as floats would show 0.30000000000000004.
    expect(exactText(cost('0.1', 1, '3').exact)).toBe('0.3');
  });

  it('cuts an expansion whose repetend is too long, and says so', () => {
    const exact = cost('1', 1000003, '1').exact; // a prime: the repetend has up to 1,000,002 digits
    expect(exact.cut).toBe(true);
    expect(exact.fraction).toHaveLength(400);
    expect(exactText(exact)).toMatch(/^0\.000000999997000008999973\d{376}…$/);
  });
});

describe('what changed', () => {
  const list = (...prices: [string, string, string | null][]): PriceList => ({
    currency: 'EUR',
    amounts_exclude_vat: true,
    last_changed: null,
    families: [
      {
        family: 'compute_instance',
        prices: prices.map(([product_key, amount, valid_until]) => ({
          product_key,
          unit_type: 'seconds',
          unit_count: 3600,
          amount,
          valid_from: '2026-01-01T00:00:00Z',
          valid_until,
        })),
      },
    ],
  });

  it('names prices that appeared, changed (amount or end) and disappeared', () => {
    const before = list(
      ['compute.g2.2', '0.0305', null],
      ['compute.g2.4', '0.0610', null],
      ['compute.g2.8', '1', null],
    );
    const after = list(
      ['compute.g2.2', '0.0315', null],
      ['compute.g2.4', '0.0610', '2027-01-01T00:00:00Z'],
      ['compute.g2.16', '2', null],
    );
    expect(diffPriceLists(before, after).map((c) => `${c.kind} ${c.productKey}`)).toEqual([
      'changed compute.g2.2',
      'changed compute.g2.4',
      'added compute.g2.16',
      'removed compute.g2.8',
    ]);
    expect(diffPriceLists(before, before)).toEqual([]);
  });
});

describe('feedChange and describeChange: a change of the feed in words', () => {
  const entry = (amount: string, validUntil: string | null = null) => ({
    product_key: 'storage.gp1',
    dimensions: { storage_class: 'gp1' },
    unit_type: 'gib_hours',
    unit_count: 730,
    amount,
    valid_from: '2026-01-01T00:00:00Z',
    valid_until: validUntil,
  });
  const change = (before: ReturnType<typeof entry> | null, after: ReturnType<typeof entry> | null) =>
    feedChange({ at: '2026-01-01T00:00:00Z', product_key: 'storage.gp1', family: 'storage_volume', before, after });
  const date = (iso: string) => iso.slice(0, 10);

  it('says what appeared, went, changed, or got an end', () => {
    expect(describeChange(change(null, entry('0.0480')), date)).toBe('Volumes, gp1: new, €0.0480 per GiB-month');
    expect(describeChange(change(entry('0.0480'), null), date)).toBe(
      'Volumes, gp1: no longer listed (was €0.0480 per GiB-month)',
    );
    expect(describeChange(change(entry('0.0480'), entry('0.0500')), date)).toBe(
      'Volumes, gp1: €0.0480 per GiB-month → €0.0500 per GiB-month',
    );
    expect(describeChange(change(entry('0.0480'), entry('0.0480', '2027-01-01T00:00:00Z')), date)).toBe(
      'Volumes, gp1: €0.0480 per GiB-month, ends 2027-01-01',
    );
    expect(change(entry('1'), entry('2'))).toMatchObject({ kind: 'changed', productKey: 'storage.gp1' });
  });
});
