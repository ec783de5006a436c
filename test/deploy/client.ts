import { request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

// A client of the price list with an address of its choosing: loopback is all of 127.0.0.0/8 on
// Linux, so a request sent from 127.0.0.2 reaches 127.0.0.1 and is seen as from 127.0.0.2.

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The bytes as sent. */
  readonly body: Buffer;
  /** nginx's X-Cache-Status (MISS, HIT, STALE, ...); undefined when the answer has none. */
  readonly cache: string | undefined;
  /** The body decoded as its Content-Encoding says, as text. */
  readonly text: string;
}

export interface Ask {
  /** The client's address (default 127.0.0.1). */
  readonly from?: string;
  readonly method?: string;
  readonly path?: string;
  readonly headers?: OutgoingHttpHeaders;
}

/** One request on a connection of its own. */
export function ask(
  port: number,
  { from, method = 'GET', path = '/v1/pricing', headers = {} }: Ask = {},
): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers, localAddress: from, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', fail);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const cache = res.headers['x-cache-status'];
        done({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          cache: typeof cache === 'string' ? cache : undefined,
          text: decode(body, res.headers['content-encoding']).toString('utf8'),
        });
      });
    });
    req.on('error', fail);
    req.end();
  });
}

function decode(body: Buffer, coding: string | undefined): Buffer {
  if (body.length === 0) return body;
  if (coding === 'br') return brotliDecompressSync(body);
  if (coding === 'gzip') return gunzipSync(body);
  return body;
}

/** An instance's `pricing_price_list_responses_total` by status, from its metrics server. */
export async function answersCounted(metricsPort: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const [, status, value] of text.matchAll(/^pricing_price_list_responses_total\{status="(\d+)"\} (\d+)$/gm))
    counts[status] = Number(value);
  return counts;
}
