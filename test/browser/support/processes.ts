import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort } from '@app/control-plane';
import { waitFor } from '../../support/http';
import { FROM_SOURCE, MAIN } from '../../support/source';
const PAGE_SERVER = resolve(__dirname, '../../../apps/price-page/serve.mjs');

/** A Node.js program of the project running in a child process. */
export interface Child {
  readonly url: string;
  output(): string;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
}

/** Starts `node ...args` and resolves once `readyPath` on `url` answers 200; fails if it exits first. */
async function start(
  what: string,
  args: readonly string[],
  url: string,
  readyPath: string,
  env: Record<string, string>,
): Promise<Child> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const handle: Child = {
    url,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  const running = () => child.exitCode === null && child.signalCode === null;
  try {
    await waitFor(
      `${what} to answer ${readyPath}`,
      async () => (running() ? status(`${url}${readyPath}`) : -1),
      (code) => code === 200 || code === -1,
      30_000,
      50,
    );
    if (!running()) throw new Error(`${what} exited: ${output}`);
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return handle;
}

async function status(url: string): Promise<number> {
  try {
    return (await fetch(url)).status;
  } catch {
    return 0;
  }
}

/**
 * The service (main.ts, as `npm start` runs it), with `env` (DATABASE_URL, ...).
 * Resolves once `readyPath` answers 200: /health/ready when the prices can be served,
 * /health/live for an instance that cannot reach its database.
 */
export async function startService(env: Record<string, string>, readyPath = '/health/ready'): Promise<Child> {
  const port = await freePort();
  return start('the service', [...FROM_SOURCE, MAIN], `http://127.0.0.1:${port}`, readyPath, {
    HOST: '127.0.0.1',
    PORT: String(port),
    ...env,
  });
}

/** `npm run page`: the page server for the API at `apiUrl`, on a port of its own. */
export async function startPageServer(apiUrl: string): Promise<Child> {
  const port = await freePort();
  return start('the page server', [PAGE_SERVER], `http://127.0.0.1:${port}`, '/', {
    PAGE_PORT: String(port),
    PAGE_HOST: '127.0.0.1',
    PRICING_API_URL: apiUrl,
  });
}
