import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort } from '@app/control-plane';

/** The service as `npm start` runs it (the built main.js). */
export const MAIN = resolve(__dirname, '../../dist/apps/control-plane/src/main.js');

export interface RunningService {
  readonly process: ChildProcess;
  /** http://127.0.0.1:<PORT> */
  readonly url: string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has ended and its output is read. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the built service in a process of its own, on loopback, with only `env` (and PATH) set. */
export async function startService(env: Record<string, string>): Promise<RunningService> {
  const port = env.PORT ?? String(await freePort());
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env, PORT: port },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  return {
    process: child,
    url: `http://127.0.0.1:${port}`,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    stop: () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
