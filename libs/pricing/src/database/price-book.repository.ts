// TRANSITIONAL: the names snapshot/ still imports, until the loader reads PriceSnapshotReads
// (price-snapshot-reads.ts) and the listener PRICE_BOOK_CHANNEL from price-book-writes.ts. The
// same class, so one provider serves both names. Not to be used by new code.
export { PriceSnapshotReads as PriceBookRepository } from './price-snapshot-reads';
export { PRICE_BOOK_CHANNEL } from './price-book-writes';
