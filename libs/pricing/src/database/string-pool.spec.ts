import { StringPool } from './string-pool';

describe('StringPool', () => {
  it('gives back text equal to the text it was given, and null as null', () => {
    const pool = new StringPool();
    expect(pool.intern('storage.gp1')).toBe('storage.gp1');
    expect(pool.intern(`storage.${'gp1'}`)).toBe('storage.gp1');
    expect(pool.intern('org_1')).toBe('org_1');
    expect(pool.intern(null)).toBeNull();
  });
});
