import { createServer, type Server } from 'node:net';
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { TestApp } from './test-app';

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** A request over a real socket to an app started with `listen: true`; the body as bytes. */
export function send(
  app: TestApp,
  method = 'GET',
  headers: OutgoingHttpHeaders = {},
  path = '/v1/pricing',
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    if (!app.url) return reject(new Error('the app is not listening: start it with listen: true'));
    const req = httpRequest(new URL(path, app.url), { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Polls `probe` every `intervalMs` until `done`, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 20,
): Promise<{ value: T; elapsedMs: number }> {
  const started = performance.now();
  for (;;) {
    const value = await probe();
    const elapsedMs = performance.now() - started;
    if (done(value)) return { value, elapsedMs };
    if (elapsedMs > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A port of loopback held by a listening server of the test's own (a port already taken). */
export function occupyPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (typeof address === 'object' && address) resolve({ server, port: address.port });
    });
  });
}
