import 'reflect-metadata';
import { exitOfSignal, StdoutClosedError } from '@app/pricing/cli';
import { runPriceBookCli } from './price-book-cli';

// The price book CLI's process (`npm run -s pricing -- <command>`): price-book-cli.ts on this
// process's arguments, environment and streams (docs/price-book-cli.md).
//
// - Ctrl-C and SIGTERM stop the run: a write is rolled back (unless its COMMIT was sent), the
//   progress bar is erased, what happened is said, and the exit code is 130 or 143. A second one
//   ends the process at once.
// - A reader that closes stdout (`changes | head -1`) ends the run quietly: writes to a closed pipe
//   fail with EPIPE as an 'error' event, which would otherwise end the process with a stack trace.
// - Relative paths start where the command was typed: npm runs scripts from the project's directory
//   and says where it was typed in INIT_CWD.
// It exits once stdout has gone out (writes to a pipe are asynchronous).

const interrupt = new AbortController();
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) {
      process.stderr.write(`${signal} again: exiting at once\n`);
      process.exit(exitOfSignal(signal));
    }
    stopping = true;
    interrupt.abort(signal);
  });
}

let stdoutClosed = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') stdoutClosed = true;
  else throw error;
});
// stderr's reader may go too: nothing more can be said then.
process.stderr.on('error', () => undefined);

void runPriceBookCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => {
    if (stdoutClosed) throw new StdoutClosedError();
    process.stdout.write(text);
  },
  stderr: process.stderr,
  stdin: process.stdin,
  cwd: process.env.INIT_CWD || process.cwd(),
  interrupt: interrupt.signal,
}).then((code) => {
  // Nothing more goes out to a reader that left.
  if (stdoutClosed) process.exit(code);
  process.stdout.write('', () => process.exit(code));
});
