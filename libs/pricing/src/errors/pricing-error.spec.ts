import { PRICING_ERROR_STATUS, PricingErrorCode } from './pricing-error';

describe('PRICING_ERROR_STATUS', () => {
  it('gives every code an HTTP error status, and nothing else', () => {
    expect(Object.keys(PRICING_ERROR_STATUS).sort()).toEqual(Object.values(PricingErrorCode).sort());
    for (const status of Object.values(PRICING_ERROR_STATUS)) {
      expect(Number.isInteger(status) && status >= 400 && status <= 599).toBe(true);
    }
    expect(Object.isFrozen(PRICING_ERROR_STATUS)).toBe(true);
  });

  it('maps each code as docs/using-pricing.md ("Errors") says', () => {
    expect(PRICING_ERROR_STATUS).toEqual({
      PRODUCT_UNAVAILABLE: 409,
      UNKNOWN_PRODUCT: 400,
      PRICING_UNAVAILABLE: 503,
      FUTURE_INSTANT: 404,
      INVALID_QUANTITY: 400,
      INVALID_COST: 400,
      INVALID_USAGE: 400,
      PRICE_BOOK_REFUSED: 400,
      PUBLICATION_MISSED: 409,
      PRICE_BOOK_WRITE_DENIED: 500,
      RATE_LIMITED: 429,
      PRICE_BOOK_COMMITTED: 500,
      PRICE_BOOK_COMMIT_UNKNOWN: 500,
      PRICE_BOOK_FILE: 400,
      PRICE_BOOK_USAGE: 400,
      CHANGE_LOG_MISMATCH: 500,
      PRICE_BOOK_LOCKED: 409,
    });
  });
});
