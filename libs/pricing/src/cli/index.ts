// The price book CLI's entry point, `@app/pricing/cli`: its commands and what they need, and
// nothing of the HTTP side (no Swagger, no Redis client, no metrics), so that a command starts
// fast. Hosts import `@app/pricing`; apps/control-plane/src/cli.ts imports this.
export { PRICE_BOOK_USAGE, PriceBookUsageError, preparePriceBookCommand, type PriceBookCommand } from './command-line';
export { runPriceBookCommand } from './price-book-command';
export { cliFailure, type ExplainedError } from './cli-failure';
export { PriceBookCliModule, withPriceBook } from './price-book-cli.module';
export { PriceBookFileError, readPriceBookFile } from './price-book-file';
export { parsePriceBook, type PriceBook } from '../price-book/price-book';
export type { WriteOptions } from '../services/price-book.service';
export { terminalProgress, type ProgressStream } from './terminal-progress';
export { PriceBookCommittedError, PriceBookCommitUnknownError, PriceBookRefusedError } from '../errors/pricing-error';
export { isKeyName } from '../core/signed-note';
