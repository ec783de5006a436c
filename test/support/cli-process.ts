import { spawn } from 'node:child_process';
import { CLI, FROM_SOURCE } from './source';

// The price book CLI in a process of its own, from source (no @app import: cheap to load).

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  /** What it said on stderr but its target line (`target`). */
  readonly stderr: string;
  /**
   * The line the CLI prints first on stderr once connected (docs/price-book-cli.md, "Which
   * database"): `target host=... port=... database=...`, or `{"target":{...}}` with --json;
   * undefined when it printed none (it never connected). Not enumerable: a spec that compares a
   * whole result (`toEqual({ code, stdout, stderr })`) compares what the command said.
   */
  readonly target?: string;
}

/** A CLI's stderr with its target line, the first line when it printed one, apart. */
export function withTarget(code: number | null, stdout: string, stderr: string): CliResult {
  const match = /^(target [^\n]*|\{"target":[^\n]*)\n/.exec(stderr);
  const result = { code, stdout, stderr: match ? stderr.slice(match[0].length) : stderr };
  return Object.defineProperty(result, 'target', { value: match?.[1], enumerable: false });
}

/** Runs the price book CLI (`npm run pricing -- ...`) in a process of its own, with the given environment. */
export async function spawnCli(
  args: readonly string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<CliResult> {
  const { code, stdout, stderr } = await runCommand(process.execPath, [...FROM_SOURCE, CLI, ...args], env, stdin);
  return withTarget(code, stdout, stderr);
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
