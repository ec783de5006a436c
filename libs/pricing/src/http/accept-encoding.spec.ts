import { negotiateContentCoding } from './accept-encoding';

describe('negotiateContentCoding', () => {
  it.each([
    // Plain names.
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['GZip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['deflate, zstd', 'identity'],
    ['identity', 'identity'],
    // q-values: the highest weight wins; br, then gzip, then the plain body at equal weight.
    ['gzip;q=1, br;q=0.9', 'gzip'],
    ['gzip;q=0.5, br;q=0.5', 'br'],
    ['br;q=0.2, gzip;q=0.8', 'gzip'],
    ['gzip ; q=0.4 ,br;Q=0.3', 'gzip'],
    ['gzip;q=0.001', 'gzip'],
    ['identity;q=0.5, gzip;q=0.4', 'identity'],
    ['identity;q=0.5, gzip;q=0.5', 'gzip'],
    ['gzip;q=1.000, br;q=0.999', 'gzip'],
    // q=0 refuses a coding.
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0.000, gzip;q=0', 'identity'],
    ['gzip;q=0', 'identity'],
    ['identity;q=0, gzip', 'gzip'],
    // `*` weighs every coding the header does not name.
    ['*', 'br'],
    ['*;q=0.5, br;q=0.4', 'gzip'],
    ['br;q=0, *', 'gzip'],
    ['*;q=0', 'identity'],
    ['*;q=0.3, identity;q=0.5', 'identity'],
    ['*;q=0.5, identity', 'identity'],
    // A malformed element counts as absent.
    ['gzip;q=2', 'identity'],
    ['gzip;q=0.0001', 'identity'],
    ['gzip;q=1.5, br;q=', 'identity'],
    ['gzip;level=9', 'identity'],
    ['gzip;q=0.5;x=1, br', 'br'],
    ['g zip, br;q=0.1', 'br'],
    [',, gzip ,', 'gzip'],
  ] as const)('%j: %s', (header, coding) => {
    expect(negotiateContentCoding(header)).toBe(coding);
  });

  it('sends the plain body when every coding, identity included, is refused', () => {
    expect(negotiateContentCoding('identity;q=0, *;q=0')).toBe('identity');
    expect(negotiateContentCoding('identity;q=0')).toBe('identity');
  });
});
