import { spawn } from 'node:child_process';
import { CLI, FROM_SOURCE } from './source';

// The price book CLI in a process of its own, from source (no @app import: cheap to load).

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the price book CLI (`npm run pricing -- ...`) in a process of its own, with the given environment. */
export function spawnCli(args: readonly string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  return runCommand(process.execPath, [...FROM_SOURCE, CLI, ...args], env, stdin);
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
