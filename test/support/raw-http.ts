import { connect } from 'node:net';

// Requests sent byte for byte over a socket of their own (fetch and http.request would normalize
// a request-target or refuse a header): for the hostile-input suites.

export interface RawResponse {
  readonly status: number;
  /** Names in lower case; the last of repeated ones. */
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/**
 * Sends `head` (the request line and headers, then an empty line; with `Connection: close`) as
 * bytes and reads the answer until the server closes the connection.
 */
export function rawExchange(port: number, head: string, timeoutMs = 5_000): Promise<RawResponse> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.from(head, 'latin1')));
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`no answer in ${timeoutMs} ms to ${JSON.stringify(head.slice(0, 200))}`)),
    );
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', fail);
    socket.on('end', () => {
      const response = parseRawResponse(Buffer.concat(chunks));
      if (!response) return fail(new Error(`no complete answer to ${JSON.stringify(head.slice(0, 200))}`));
      done(response);
    });
  });
}

/** `method target HTTP/1.1` with Host, Connection: close and `headers`, as raw bytes. */
export function rawRequest(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const lines = Object.entries({ Host: 'api.test', ...headers, Connection: 'close' }).map(([n, v]) => `${n}: ${v}\r\n`);
  return rawExchange(port, `${method} ${target} HTTP/1.1\r\n${lines.join('')}\r\n`);
}

/** Status, headers and body of an answer read to its end; undefined when the head is incomplete. */
export function parseRawResponse(bytes: Buffer): RawResponse | undefined {
  const split = bytes.indexOf('\r\n\r\n');
  if (split < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, split).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = bytes.subarray(split + 4);
  const body = headers['transfer-encoding'] === 'chunked' ? unchunked(rest) : rest;
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** The body of a chunked answer (Node.js chunks an answer without Content-Length). */
function unchunked(bytes: Buffer): Buffer {
  const chunks: Buffer[] = [];
  for (let at = 0; ;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(chunks);
    chunks.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
