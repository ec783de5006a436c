import { runPriceBookCli } from '@app/control-plane';
import { Readable, Writable } from 'node:stream';
import { withTarget, type CliResult } from './cli-process';

export { runCommand, spawnCli, withTarget, type CliResult } from './cli-process';
export { CLI, FROM_SOURCE, REGISTER } from './source';

/** What else a run in process is given: standard input, where it was typed, an interrupt. */
export interface RunCliOptions {
  /** What `-` reads. */
  readonly stdin?: string | Buffer;
  /** Where relative paths start (the process's: INIT_CWD, else its own directory). */
  readonly cwd?: string;
  /** Aborted with 'SIGINT' or 'SIGTERM': the CLI's process does so on those signals. */
  readonly interrupt?: AbortSignal;
}

/**
 * Runs the price book CLI in this process, as cli.ts runs it for its own (runPriceBookCli: the
 * same command line, environment, exit code, stdout and stderr), without a Node.js start-up per
 * command. What only its process shows (signals, the embedded PostgreSQL, what reaches a pipe)
 * is tested with spawnCli. The target line is apart (CliResult.target).
 */
export async function runCli(
  args: readonly string[],
  env: Record<string, string>,
  options: RunCliOptions = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const stderrStream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      stderr += chunk.toString();
      done();
    },
  });
  const code = await runPriceBookCli(args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdout: (text) => (stdout += text.toString()),
    stderr: stderrStream,
    stdin: options.stdin === undefined ? undefined : Readable.from([Buffer.from(options.stdin)]),
    cwd: options.cwd,
    interrupt: options.interrupt,
  });
  return withTarget(code, stdout, stderr);
}
