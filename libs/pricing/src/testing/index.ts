// Test support for the teams that use PricingModule: `@app/pricing/testing`.
// Price book entries, a price book command line run in process, and a clock that stands still.
export { listPrice, organizationPrice, type PriceEntry } from './price-book-entries';
export { ManualClock } from '@app/clock';
export { seededRandom } from './seeded-random';
export { runPriceBookCommandLine, type CommandLineOptions, type CommandLineResult } from './price-book-command-line';
