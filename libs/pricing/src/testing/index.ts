// Test support for the teams that use PricingModule: `@app/pricing/testing`.
// Pricing in memory for unit specs (no database), price book entries, a price book command line
// run in process, and a clock that stands still. Test databases are the project's own test support
// (test/support/database.ts).
export {
  PricingTestingModule,
  PricingTestingBook,
  type PricingTestingOptions,
  type PriceBookJson,
} from './pricing-testing.module';
export { listPrice, organizationPrice, type PriceEntry } from './price-book-entries';
export { ManualClock } from '@app/clock';
export { seededRandom } from './seeded-random';
export { runPriceBookCommandLine, type CommandLineOptions, type CommandLineResult } from './price-book-command-line';
