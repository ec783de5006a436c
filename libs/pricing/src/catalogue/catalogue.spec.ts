import { explainProductKey, parseProductKey, PRODUCT_FAMILIES } from './catalogue';

describe('parseProductKey', () => {
  it.each([
    ['compute.g2.4', 'compute_instance', { instance_type: 'g2.4' }],
    ['compute.m3.small.16', 'compute_instance', { instance_type: 'm3.small.16' }],
    ['storage.gp1', 'storage_volume', { storage_class: 'gp1' }],
    ['storage.st1', 'storage_volume', { storage_class: 'st1' }],
    ['storage.io1', 'storage_volume', { storage_class: 'io1' }],
    ['storage.snapshot', 'storage_snapshot', undefined],
    ['network.floating_ip', 'network_floating_ip', undefined],
    ['observability.ingested_sample', 'observability_ingested_sample', undefined],
  ])('splits %s', (key, family, dimensions) => {
    const parts = parseProductKey(key);
    expect(parts?.family.family).toBe(family);
    expect(parts?.dimensions).toEqual(dimensions);
  });

  it.each([
    'compute.g2',
    'compute.G2.4',
    'compute.2g.4',
    'compute.g2.',
    'storage.gp2',
    'storage.',
    'network.vpc',
    'foo.bar',
    '',
    `compute.g2.${'9'.repeat(60)}`,
  ])('refuses %j with a reason', (key) => {
    expect(parseProductKey(key)).toBeUndefined();
    expect(explainProductKey(key)).toEqual(expect.any(String));
  });

  it('has the eleven families of section 2.4 with their unit types', () => {
    expect(PRODUCT_FAMILIES.map((f) => `${f.family}:${f.unitType}`)).toEqual([
      'compute_instance:seconds',
      'network_floating_ip:seconds',
      'network_nat_gateway:seconds',
      'network_vpc_egress:gb',
      'network_vpc_ingress:gb',
      'network_vpc_internal:gb',
      'storage_volume:gib_hours',
      'storage_snapshot:gib_hours',
      'observability_custom_metric:metric_months',
      'observability_api_request:requests',
      'observability_ingested_sample:samples',
    ]);
  });
});
