import { runPriceBookCli } from '@app/control-plane';
import { Writable } from 'node:stream';
import type { CliResult } from './cli-process';

export { runCommand, spawnCli, type CliResult } from './cli-process';
export { CLI, FROM_SOURCE, REGISTER } from './source';

/**
 * Runs the price book CLI in this process, as cli.ts runs it for its own (runPriceBookCli: the
 * same command line, environment, exit code, stdout and stderr), without a Node.js start-up per
 * command. What only its process shows (exit codes, the embedded PostgreSQL, what reaches a pipe)
 * is tested with spawnCli.
 */
export async function runCli(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
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
  });
  return { code, stdout, stderr };
}
