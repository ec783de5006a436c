import { isPriceListUrl } from './serve-price-list';

describe('isPriceListUrl', () => {
  it.each(['/v1/pricing', '/v1/pricing/', '/v1/pricing?x=1', '/v1/pricing/?', '/v1/pricing?'])('serves %s', (url) => {
    expect(isPriceListUrl(url)).toBe(true);
  });

  it.each(['/v1/pricingx', '/v1/pricing/x', '/v1/pricing//', '/v1/pricing2?x', '/v1', '/', '/v2/pricing'])(
    'leaves %s to the app',
    (url) => {
      expect(isPriceListUrl(url)).toBe(false);
    },
  );
});
