// The price book CLI's entry point, `@app/pricing/cli`: its commands and what they need, and
// nothing of the HTTP side (no Swagger, no Redis client, no metrics), so that a command starts
// fast. Hosts import `@app/pricing`; apps/control-plane/src/cli.ts imports this.
export {
  PriceBookUsageError,
  prepareCommand,
  preparePriceBookCommand,
  readCommandLine,
  wantsJson,
  type CommandLine,
  type PriceBookCommand,
  type ReadCommandLine,
} from './command-line';
export { runPriceBookCommand, type CommandContext, type DatabaseCommand } from './price-book-command';
export {
  cliFailure,
  CliInterruptedError,
  DatabaseUnreachableError,
  SchemaNotMigratedError,
  type CliFailure,
  type ExplainedError,
} from './cli-failure';
export { COMMANDS, INVOCATION, type CommandName, type OptionName } from './commands';
export { EXIT, exitOfSignal, type ExitCode } from './exit-codes';
export { commandHelp, globalHelp, EXIT_MEANINGS } from './help';
export { readTarget, targetJson, targetLine, hostOf, type Target } from './target';
export { isStdoutClosed, StdoutClosedError } from './stdout-closed';
export { PriceBookCliModule, withPriceBook } from './price-book-cli.module';
export { PriceBookFileError, readPriceBookFile } from './price-book-file';
export { parsePriceBook, type PriceBook } from '../price-book/price-book';
export type { WriteOptions } from '../services/price-book.service';
export { terminalProgress, type ProgressStream, type TerminalSettings } from './terminal-progress';
export { NO_PROGRESS, type Progress } from '../price-book/progress';
export { PriceBookCommittedError, PriceBookCommitUnknownError, PriceBookRefusedError } from '../errors/pricing-error';
export { isKeyName } from '../core/signed-note';
export { runOfflineCommand, type OfflineContext } from './offline-command';
export type { OfflineCommand } from './command-line';
