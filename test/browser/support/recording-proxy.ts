import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** As the browser sent them, names in lower case. */
  readonly headers: IncomingHttpHeaders;
  /** The status the browser got; 0 when the proxy dropped the connection. */
  status: number;
  /** The response's ETag, when it had one. */
  etag?: string;
  /** The response's Retry-After, when it had one. */
  retryAfter?: string;
}

/**
 * An HTTP proxy between the page and the API that records what crossed the wire: method,
 * request headers and status. The page's PRICING_API_URL points at it, so the test sees what
 * the browser really sent (If-None-Match added by its HTTP cache, any CORS preflight).
 */
export interface RecordingProxy {
  readonly url: string;
  /** Every request since the proxy started. */
  readonly all: readonly RecordedRequest[];
  /** Requests since the last `clear()`. */
  recorded(): RecordedRequest[];
  clear(): void;
  /** Where requests go; switched by tests (a rate-limited service, an unavailable one). */
  target: string;
  /** 'drop' closes every connection without an answer: a network error for the page. */
  mode: 'forward' | 'drop';
  close(): Promise<void>;
}

// Hop-by-hop headers are the proxy's own business on each side.
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'];

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const all: RecordedRequest[] = [];
  let since = 0;
  const proxy = {
    target,
    mode: 'forward' as 'forward' | 'drop',
  };

  const server: Server = createServer((req, res) => {
    const record: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, status: 0 };
    all.push(record);
    if (proxy.mode === 'drop') {
      req.socket.destroy();
      return;
    }
    const headers = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    const upstream = request(
      new URL(req.url ?? '/', proxy.target),
      { method: req.method, headers, agent: false },
      (answer) => {
        record.status = answer.statusCode ?? 0;
        const etag = answer.headers.etag;
        if (etag) record.etag = etag;
        const retryAfter = answer.headers['retry-after'];
        if (retryAfter) record.retryAfter = retryAfter;
        const back = { ...answer.headers };
        for (const name of HOP_BY_HOP) delete back[name];
        res.writeHead(record.status, back);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      record.status = 502;
      res.writeHead(502, { 'content-type': 'text/plain' }).end('proxy: upstream failed\n');
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    all,
    recorded: () => all.slice(since),
    clear: () => {
      since = all.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}
