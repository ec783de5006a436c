import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { freePort } from '@app/control-plane';
import { dribbledHeads, eightAtOnce, median } from './support/hostile-load';
import { waitFor } from './support/http';
import { rawExchange, type RawResponse } from './support/raw-http';

// `npm run page` (apps/price-page/serve.mjs) against hostile request-targets and methods, sent
// byte for byte over raw sockets (fetch would normalize them): every request gets 400, 404 or
// 405, the process stays up, and nothing but the page's own files is ever served.

const PAGE = resolve(__dirname, '../apps/price-page');
const SERVER = join(PAGE, 'serve.mjs');
const API_URL = 'http://127.0.0.1:9';

/** The page's files as serve.mjs must serve them, by path. */
const FILES: Record<string, Buffer> = {
  '/': readFileSync(join(PAGE, 'public/index.html')),
  '/style.css': readFileSync(join(PAGE, 'public/style.css')),
  '/app.js': readFileSync(join(PAGE, 'public/app.js')),
  '/prices.mjs': readFileSync(join(PAGE, 'public/prices.mjs')),
  '/vendor/decimal.mjs': readFileSync(join(dirname(require.resolve('decimal.js/package.json')), 'decimal.mjs')),
};

let port: number;
let server: ChildProcess;
let output = '';
/** Every answer of the run, to check at the end that no other file was ever served. */
const answers: { request: string; response: RawResponse }[] = [];

/** Sends `head` as bytes and reads the answer to its end (rawExchange), keeping it in `answers`. */
async function raw(head: string): Promise<RawResponse> {
  const response = await rawExchange(port, head);
  answers.push({ request: head, response });
  return response;
}

/** `method target HTTP/1.1` with Host and Connection: close, as raw bytes. */
function request(method: string, target: string): Promise<RawResponse> {
  return raw(`${method} ${target} HTTP/1.1\r\nHost: page.test\r\nConnection: close\r\n\r\n`);
}

function running(): boolean {
  return server.exitCode === null && server.signalCode === null;
}

async function expectAlive(): Promise<void> {
  expect({ running: running(), output }).toMatchObject({ running: true });
  const home = await request('GET', '/');
  expect(home.status).toBe(200);
  expect(home.headers['content-security-policy']).toContain("default-src 'none'");
  expect(home.body.equals(FILES['/'])).toBe(true);
}

function withoutDate(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'date'));
}

function expectSecurityHeaders(response: RawResponse): void {
  expect(response.headers).toMatchObject({
    'content-security-policy': expect.stringContaining(`connect-src ${API_URL}`),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
    'cache-control': 'no-cache',
  });
}

beforeAll(async () => {
  port = await freePort();
  server = spawn(process.execPath, [SERVER], {
    env: { PATH: process.env.PATH ?? '', PAGE_PORT: String(port), PAGE_HOST: '127.0.0.1', PRICING_API_URL: API_URL },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(
    'the page server to listen',
    () => Promise.resolve(output),
    (o) => o.includes('price page on') || !running(),
    10_000,
    10,
  );
  if (!running()) throw new Error(`the page server exited: ${output}`);
});

afterAll(async () => {
  if (server && running()) {
    const exited = new Promise((done) => server.once('exit', done));
    server.kill('SIGTERM');
    await exited;
  }
});

afterEach(() => {
  // A crash shows here first, with what the server wrote; the server writes no error either.
  expect({ running: running(), output }).toEqual({ running: true, output: expect.not.stringContaining('Error') });
});

it('serves the page files, /index.html as /, and /config.js, with the security headers', async () => {
  for (const [path, file] of [...Object.entries(FILES), ['/index.html', FILES['/']] as const]) {
    const response = await request('GET', path);
    expect([path, response.status]).toEqual([path, 200]);
    expect(response.body.equals(file)).toBe(true);
    expect(response.headers['content-length']).toBe(String(file.length));
    expectSecurityHeaders(response);
  }
  const config = await request('GET', '/config.js');
  expect(config.status).toBe(200);
  expect(config.body.toString()).toContain(`export const PRICING_API_URL = "${API_URL}";`);
});

/** `GET target` with more header lines (`Name: value`). */
function requestWith(target: string, lines: string[], method = 'GET'): Promise<RawResponse> {
  return raw(
    `${method} ${target} HTTP/1.1\r\nHost: page.test\r\n${lines.map((l) => `${l}\r\n`).join('')}Connection: close\r\n\r\n`,
  );
}

/** A body as sent, decoded from its Content-Encoding. */
function decoded(response: RawResponse): Buffer {
  const coding = response.headers['content-encoding'];
  return coding === 'br'
    ? brotliDecompressSync(response.body)
    : coding === 'gzip'
      ? gunzipSync(response.body)
      : response.body;
}

it('gives every file a weak ETag, the same on every request and in every coding, and answers If-None-Match with 304', async () => {
  const tags = new Set<string>();
  for (const path of [...Object.keys(FILES), '/config.js']) {
    const first = await request('GET', path);
    const etag = first.headers.etag;
    expect([path, etag]).toEqual([path, expect.stringMatching(/^W\/"[A-Za-z0-9_-]{32}"$/)]);
    tags.add(etag);
    expect((await request('GET', path)).headers.etag).toBe(etag);
    expect(first.headers.vary).toBe('Accept-Encoding');
    expect(first.headers['cache-control']).toBe('no-cache'); // kept, and revalidated on every visit

    for (const ifNoneMatch of [etag, etag.slice(2), `W/"other", ${etag}`, '*']) {
      const revalidated = await requestWith(path, [`If-None-Match: ${ifNoneMatch}`]);
      expect([path, ifNoneMatch, revalidated.status, revalidated.body.length]).toEqual([path, ifNoneMatch, 304, 0]);
      expect(revalidated.headers).toMatchObject({ etag, vary: 'Accept-Encoding', 'cache-control': 'no-cache' });
      expectSecurityHeaders(revalidated);
    }
    const head = await requestWith(path, [`If-None-Match: ${etag}`], 'HEAD');
    expect(head.status).toBe(304);
    for (const other of ['W/"other"', `${etag} junk`, '"unterminated']) {
      expect((await requestWith(path, [`If-None-Match: ${other}`])).status).toBe(200);
    }
  }
  expect(tags.size).toBe(Object.keys(FILES).length + 1); // one tag per file's bytes
});

it('sends each file in brotli or gzip as Accept-Encoding prefers, with its own length and the same ETag', async () => {
  const decimal = FILES['/vendor/decimal.mjs'];
  const plain = await request('GET', '/vendor/decimal.mjs');
  for (const [accept, coding] of [
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0.5, gzip', 'gzip'],
    ['identity', undefined],
    ['br;q=0, gzip;q=0', undefined],
  ] as const) {
    const response = await requestWith('/vendor/decimal.mjs', [`Accept-Encoding: ${accept}`]);
    expect([accept, response.status, response.headers['content-encoding']]).toEqual([accept, 200, coding]);
    expect(response.headers['content-length']).toBe(String(response.body.length));
    expect(response.headers.etag).toBe(plain.headers.etag);
    expect(decoded(response).equals(decimal)).toBe(true);
    if (coding) expect(response.body.length).toBeLessThan(decimal.length / 3); // 128 KB: the point of it
    const head = await requestWith('/vendor/decimal.mjs', [`Accept-Encoding: ${accept}`], 'HEAD');
    expect(withoutDate(head.headers)).toEqual(withoutDate(response.headers));
  }
  for (const path of Object.keys(FILES)) {
    const response = await requestWith(path, ['Accept-Encoding: br']);
    expect([path, response.headers['content-encoding']]).toEqual([path, 'br']);
    expect(decoded(response).equals(FILES[path])).toBe(true);
  }
});

it('reads an absolute-form target as its path, and answers 400 to a bad authority or asterisk-form', async () => {
  // RFC 9112 section 3.2.2: a server must accept absolute-form; the page has one origin, so the
  // authority is checked and otherwise ignored (apps/price-page/page-path.mjs).
  const home = await request('GET', 'http://x/');
  expect(home.status).toBe(200);
  expect(home.body.equals(FILES['/'])).toBe(true);
  const app = await request('GET', 'HTTP://x:3001/app.js?v=1');
  expect(app.status).toBe(200);
  expect(app.body.equals(FILES['/app.js'])).toBe(true);
  expect((await request('GET', 'http://x/../package.json')).status).toBe(404);

  for (const target of ['http://x:99999/', 'http://[::1/', 'http://user@x/', 'http:///', 'ftp://x/', '*']) {
    const response = await request('GET', target);
    expect([target, response.status]).toEqual([target, 400]);
    expect(response.body.toString()).toBe('Bad request\n');
    expectSecurityHeaders(response);
  }
  await expectAlive();
});

const PATH_TRICKS: [string, 400 | 404][] = [
  ['/..', 404],
  ['/../package.json', 404],
  ['/%2e%2e/package.json', 404],
  ['/%2E%2E%2Fpackage.json', 404],
  ['/vendor/../../package.json', 404],
  ['/vendor/../../../../../../etc/passwd', 404],
  ['/vendor/decimal.mjs%00.txt', 404],
  ['/%00', 404],
  ['//', 404],
  ['//etc/passwd', 404],
  ['/app.js/', 404],
  ['/serve.mjs', 404],
  ['/page-path.mjs', 404],
  ['/public/app.js', 404],
  ['/vendor/', 404],
  ['/vendor%2Fdecimal.mjs', 404],
  ['/node_modules/decimal.js/package.json', 404],
  ['/%E0%A4%A', 400],
  ['/%zz', 400],
  ['/%', 400],
];

it.each(PATH_TRICKS)('answers %s with %d and no file', async (target, status) => {
  const response = await request('GET', target);
  expect(response.status).toBe(status);
  expect(response.body.toString()).toBe(status === 400 ? 'Bad request\n' : 'Not found\n');
  expectSecurityHeaders(response);
});

// Node.js accepts heads up to 16 KB. Bounds as the API's (test/hostile.e2e-spec.ts).
it.each([
  ['letters', `/${'a'.repeat(14 * 1024)}`],
  ['dot segments', '/..'.repeat(4800)],
  ['encoded dot segments', `/${'%2e%2e/'.repeat(2000)}`],
])(
  'answers a 14 KB path of %s with 404: eight at once each within 1 s, costing the server under 20 ms of CPU each, GET / meanwhile within 250 ms (median)',
  async (_what, target) => {
    const { answers, probes, cpuMsPerRequest } = await eightAtOnce(
      server.pid,
      () => request('GET', target),
      () => request('GET', '/'),
    );
    for (const { value, ms } of answers) {
      expect([value.status, value.body.toString(), ms < 1_000]).toEqual([404, 'Not found\n', true]);
    }
    expect(cpuMsPerRequest).toBeLessThan(20);
    expect(median(probes)).toBeLessThan(250);
    await expectAlive();
  },
);

it.each([
  ['If-None-Match of many tags', `If-None-Match: ${'W/"a", '.repeat(2000)}`, 200],
  ['If-None-Match, unterminated', `If-None-Match: "${'a'.repeat(14 * 1024)}`, 200],
  ['Accept-Encoding of many elements', `Accept-Encoding: ${'gzip;q=0.5 , '.repeat(1000)}`, 200],
])(
  'answers a 14 KB %s: eight at once each within 1 s, costing the server under 20 ms of CPU each, GET / meanwhile within 250 ms (median)',
  async (_what, line, status) => {
    const { answers, probes, cpuMsPerRequest } = await eightAtOnce(
      server.pid,
      () => requestWith('/vendor/decimal.mjs', [line]),
      () => request('GET', '/'),
    );
    for (const { value, ms } of answers) expect([value.status, ms < 1_000]).toEqual([status, true]);
    expect(cpuMsPerRequest).toBeLessThan(20);
    expect(median(probes)).toBeLessThan(250);
  },
);

// serve.mjs: 10 s for a head, 15 s for a whole request, checked every second (Node.js: 60 s and
// 300 s, checked every 30 s). Both at once, to keep the suite short.
it('drops 200 clients dribbling their heads after 10 s and one dribbling a body after 15 s, serving the page meanwhile', async () => {
  const started = performance.now();
  const body = connect(port, '127.0.0.1');
  body.on('error', () => undefined);
  const bodyDropped = new Promise<number>((done) => body.once('close', () => done(performance.now() - started)));
  body.write('GET / HTTP/1.1\r\nHost: page.test\r\nContent-Length: 1000000\r\n\r\n');
  const drip = setInterval(() => body.write('a'), 250);
  let timer: NodeJS.Timeout | undefined;
  try {
    const { probesMs, droppedAfterMs } = await dribbledHeads(
      port,
      'GET / HTTP/1.1\r\nHost: page.test\r\n',
      () => request('GET', '/'),
      { probeForMs: 10_000, closeWithinMs: 13_000 },
    );
    expect(median(probesMs)).toBeLessThan(250);
    expect(Math.max(...probesMs)).toBeLessThan(1_000);
    expect(Math.max(...droppedAfterMs)).toBeLessThan(13_000);
    const giveUp = new Promise<number>((done) => {
      timer = setTimeout(() => done(Infinity), 18_000 - (performance.now() - started));
    });
    expect(await Promise.race([bodyDropped, giveUp])).toBeLessThan(18_000);
  } finally {
    clearInterval(drip);
    clearTimeout(timer);
    body.destroy();
  }
}, 30_000);

it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'TRACE'])(
  'answers %s with 405 and Allow: GET, HEAD',
  async (method) => {
    for (const target of ['/', '/app.js', '/nothing', 'http://x:99999/']) {
      const response = await request(method, target);
      expect([target, response.status, response.headers.allow]).toEqual([target, 405, 'GET, HEAD']);
      expectSecurityHeaders(response);
    }
  },
);

it('answers OPTIONS * with 405 and Allow: GET, HEAD', async () => {
  const response = await request('OPTIONS', '*');
  expect([response.status, response.headers.allow]).toEqual([405, 'GET, HEAD']);
});

it('answers CONNECT (which Node.js drops unanswered without a listener) with 405 and Allow: GET, HEAD', async () => {
  const response = await request('CONNECT', 'page.test:443');
  expect([response.status, response.headers.allow, response.body.toString()]).toEqual([
    405,
    'GET, HEAD',
    'Method not allowed\n',
  ]);
  expectSecurityHeaders(response);
  await expectAlive();
});

it("leaves a method token Node.js's parser refuses (FOO) to Node.js's own 400", async () => {
  const response = await request('FOO', '/');
  expect(response.status).toBe(400);
  expect(response.headers['content-security-policy']).toBeUndefined();
  await expectAlive();
});

it('answers HEAD with the headers of GET and no body', async () => {
  for (const target of [
    '/',
    '/index.html',
    '/vendor/decimal.mjs',
    '/config.js',
    '/nothing',
    '/%zz',
    'http://x/app.js',
  ]) {
    const [get, head] = await Promise.all([request('GET', target), request('HEAD', target)]);
    expect([target, head.status, withoutDate(head.headers)]).toEqual([target, get.status, withoutDate(get.headers)]);
    expect(head.body.length).toBe(0);
  }
});

it('stays up under all of the above at once, and GET / still answers with the CSP', async () => {
  const targets = [
    ...PATH_TRICKS.map(([target]) => target),
    'http://x:99999/',
    'http://[::1/',
    '*',
    `/${'a'.repeat(14 * 1024)}`,
  ];
  const requests = [
    ...targets.flatMap((target) => [request('GET', target), request('HEAD', target), request('DELETE', target)]),
    request('FOO', '/'),
  ];
  const responses = await Promise.all([...requests, ...requests.map(() => request('GET', 'http://x:99999/'))]);
  expect(new Set(responses.map((r) => r.status))).toEqual(new Set([400, 404, 405]));
  await expectAlive();
});

it('never served anything but the page files and /config.js', () => {
  const served = answers.filter((a) => a.response.status === 200 && a.response.body.length > 0);
  expect(served.length).toBeGreaterThan(0);
  const allowed = Object.values(FILES);
  for (const { request, response } of served) {
    const isPageFile = allowed.some((file) => file.equals(decoded(response)));
    const isConfig = decoded(response).toString().startsWith('// Generated by apps/price-page/serve.mjs');
    expect([request, isPageFile || isConfig]).toEqual([request, true]);
  }
  for (const { response } of answers.filter((a) => a.response.status !== 200)) {
    expect(['', 'Bad request\n', 'Not found\n', 'Method not allowed\n']).toContain(response.body.toString());
  }
});
