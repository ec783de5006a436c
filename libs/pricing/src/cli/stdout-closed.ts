/**
 * The reader of stdout went away (`changes | head -1`: EPIPE): the command stops writing and ends
 * quietly, exit 0, as its reader had what it wanted (docs/price-book-cli.md, "Pipes"). The CLI's
 * process throws it from its stdout once a write failed so (apps/control-plane/src/cli.ts).
 */
export class StdoutClosedError extends Error {
  constructor() {
    super('stdout was closed by its reader');
    this.name = 'StdoutClosedError';
  }
}

/** Whether `error` is a closed stdout, or a committed write whose printing a closed stdout stopped. */
export function isStdoutClosed(error: unknown): boolean {
  return error instanceof StdoutClosedError || (error instanceof Error && error.cause instanceof StdoutClosedError);
}
