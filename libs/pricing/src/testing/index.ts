// Test support for the teams that use PricingModule: `@app/pricing/testing`.
// A database of their own (copied from the template the project's Jest global setup migrates),
// price book entries, and a clock that stands still.
export { createTestDatabase, type TestDatabase } from './test-database';
export { TEMPLATE_DATABASE, withDatabase } from './database-url';
export { listPrice, organizationPrice, type PriceEntry } from './price-book-entries';
export { ManualClock } from '@app/clock';
export { seededRandom } from './seeded-random';
