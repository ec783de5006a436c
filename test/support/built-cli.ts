import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

// The built price book CLI in a process of its own (no @app import: the global setup runs this).

export const CLI = resolve(__dirname, '../../dist/apps/control-plane/src/cli.js');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built price book CLI (`npm run pricing -- ...`) in a process of its own, with the given environment. */
export function runBuiltCli(args: readonly string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  return runCommand(process.execPath, [CLI, ...args], env, stdin);
}

/** Runs a command with the given environment (and PATH), stdin, stdout and stderr on pipes. */
export function runCommand(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}
