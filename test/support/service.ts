import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '@app/control-plane';
import { waitFor } from './http';
import { FROM_SOURCE, MAIN } from './source';

export interface Service {
  readonly process: ChildProcess;
  readonly port: number;
  /** http://127.0.0.1:<PORT> */
  readonly url: string;
  /** stdout and stderr, as they came. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null when a signal ended it) once its output is read. */
  readonly exited: Promise<number | null>;
  /** Waits until the service has written `text` to stdout or stderr. */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the service (main.ts, as `npm start` runs it) on loopback, with only `env` (and PATH) set. */
export async function startService(env: Record<string, string>): Promise<Service> {
  const port = Number(env.PORT ?? (await freePort()));
  const child = spawn(process.execPath, [...FROM_SOURCE, MAIN], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  return {
    process: child,
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForOutput: async (text, timeoutMs = 10_000) => {
      await waitFor(
        `the service to write ${JSON.stringify(text)}`,
        () => Promise.resolve(output),
        (o) => o.includes(text),
        timeoutMs,
        10,
      );
    },
    stop: () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A GET with fetch; status 0 when no answer came. */
export async function get(url: string): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(url);
    return { status: res.status, text: await res.text() };
  } catch {
    return { status: 0, text: '' };
  }
}

/** Waits until the service answers /health/ready with 200. */
export async function waitUntilReady(service: Service, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    'the service to be ready',
    () => get(`${service.url}/health/ready`),
    (r) => r.status === 200,
    timeoutMs,
    100,
  );
}
