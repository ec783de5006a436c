// Test support for the teams that use PricingModule: `@app/pricing/testing`.
// Pricing in memory for unit specs (no database); a database of their own (copied from the
// template the project's Jest global setup migrates), price book entries, a price book command
// line run in process, and a clock that stands still.
export { PricingTestingModule, type PricingTestingOptions, type PriceBookJson } from './pricing-testing.module';
export { createTestDatabase, type TestDatabase } from './test-database';
export { newTemplateDatabaseName, TEMPLATE_DATABASE_VARIABLE, withDatabase } from './database-url';
export { listPrice, organizationPrice, type PriceEntry } from './price-book-entries';
export { ManualClock } from '@app/clock';
export { seededRandom } from './seeded-random';
export { runPriceBookCommandLine, type CommandLineOptions, type CommandLineResult } from './price-book-command-line';
