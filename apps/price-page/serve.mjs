// `npm run page`: serves the price page (public/) on PAGE_PORT for the API at PRICING_API_URL.
// node:http only. The page learns the API's address from a generated /config.js; decimal.js's
// ESM build is served from node_modules, not copied. Every answer carries a Content-Security-Policy
// that lets the page's scripts talk to the API's origin and nothing else. Which file a request
// names is page-path.mjs's business: an allow-list lookup that answers any request-target.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { ifNoneMatchMatches, preferredCoding } from './conditional.mjs';
import { PAGE_PATHS, pageTarget } from './page-path.mjs';

const PUBLIC = join(dirname(fileURLToPath(import.meta.url)), 'public');
const DECIMAL = join(dirname(createRequire(import.meta.url).resolve('decimal.js/package.json')), 'decimal.mjs');

const JS = 'text/javascript; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';
/** Page path (page-path.mjs's PAGE_PATHS but /config.js) → file and type. Nothing else is served. */
const FILES = new Map([
  ['/', { file: join(PUBLIC, 'index.html'), type: 'text/html; charset=utf-8' }],
  ['/style.css', { file: join(PUBLIC, 'style.css'), type: 'text/css; charset=utf-8' }],
  ['/app.js', { file: join(PUBLIC, 'app.js'), type: JS }],
  ['/prices.mjs', { file: join(PUBLIC, 'prices.mjs'), type: JS }],
  ['/vendor/decimal.mjs', { file: DECIMAL, type: JS }],
]);

// Slow clients cannot hold a connection. A GET or HEAD has no body, so its head is the whole
// request, which a browser sends at once: 10 s for the head and 15 s for the request leave room
// for a slow link (Node.js's defaults are 60 s and 300 s). Node.js checks both on a timer, every
// 30 s by default; every second here, so they hold to the second. An idle keep-alive connection
// is closed after 5 s (Node.js's default, made explicit), a socket with no traffic either way (a
// client that stops reading an answer) after 30 s.
const TIMEOUTS = { headersTimeout: 10_000, requestTimeout: 15_000, connectionsCheckingInterval: 1_000 };
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
const SOCKET_TIMEOUT_MS = 30_000;

// No `send` (or serve-static): with a fixed allow-list it has no path to guard, and what it would
// add (Range, Last-Modified, its own Cache-Control and error pages) would have to be turned off
// or matched to keep the headers test/browser/ and the README rely on.

function fail(message) {
  console.error(`price page: ${message}`);
  process.exit(1);
}

function readConfig(env) {
  const port = env.PAGE_PORT ?? '3001';
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) fail(`PAGE_PORT must be a port number, not "${port}"`);
  let api;
  try {
    api = new URL(env.PRICING_API_URL ?? 'http://localhost:3000');
  } catch {
    fail(`PRICING_API_URL must be a URL such as http://localhost:3000, not "${env.PRICING_API_URL}"`);
  }
  if (api.protocol !== 'http:' && api.protocol !== 'https:') fail('PRICING_API_URL must be an http or https URL');
  return {
    port: Number(port),
    host: env.PAGE_HOST ?? '0.0.0.0',
    apiUrl: api.href.replace(/\/+$/, ''), // the API's base; the page appends /v1/pricing
    apiOrigin: api.origin,
  };
}

/** The hash of index.html's inline import map, so that the CSP allows that one inline script. */
async function importMapHash() {
  const html = await readFile(FILES.get('/').file, 'utf8');
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html);
  if (!importMap) fail('index.html has no import map');
  return `'sha256-${createHash('sha256').update(importMap[1]).digest('base64')}'`;
}

function securityHeaders(config, scriptHash) {
  return {
    'content-security-policy': [
      "default-src 'none'",
      `script-src 'self' ${scriptHash}`,
      "style-src 'self'",
      "img-src 'self' data:",
      `connect-src ${config.apiOrigin}`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
  };
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * A page file as served, prepared once at start (the files do not change while the server runs:
 * restart it after editing one): its bytes, gzip (level 9) and brotli (quality 11: once per file,
 * so the smallest) where smaller, and a weak ETag of the bytes, the same in every coding (RFC
 * 9110 8.8.1), as the API's list has (docs/decisions.md, "The price page server").
 */
async function prepareFile(type, body) {
  const [gzipped, brotli] = await Promise.all([
    gzipAsync(body, { level: 9 }),
    brotliAsync(body, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT },
    }),
  ]);
  const smaller = (encoded) => (encoded.length < body.length ? encoded : undefined);
  const etag = `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
  return { type, etag, bodies: { identity: body, gzip: smaller(gzipped), br: smaller(brotli) } };
}

async function startPageServer(config) {
  const headers = securityHeaders(config, await importMapHash());
  const configJs = `// Generated by apps/price-page/serve.mjs from PRICING_API_URL.\nexport const PRICING_API_URL = ${JSON.stringify(config.apiUrl)};\n`;
  /** Page path → prepared file: every answer of 200 or 304 comes from here, no file is read per request. */
  const prepared = new Map(
    await Promise.all([
      prepareFile(JS, Buffer.from(configJs)).then((file) => ['/config.js', file]),
      ...[...FILES].map(async ([path, { file, type }]) => [path, await prepareFile(type, await readFile(file))]),
    ]),
  );

  const answer = (req, res) => {
    const send = (status, type, body) => {
      res.writeHead(status, {
        ...headers,
        'content-type': type,
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-cache',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return send(405, TEXT, 'Method not allowed\n');
    }
    const target = pageTarget(req.url ?? '');
    if (target.status === 400) return send(400, TEXT, 'Bad request\n');
    if (target.status === 404) return send(404, TEXT, 'Not found\n');
    const file = prepared.get(target.path);
    // no-cache: a browser keeps the file and revalidates it on every visit, a 304 while it is
    // unchanged; Vary, as the coding depends on Accept-Encoding.
    const cached = { ...headers, 'cache-control': 'no-cache', etag: file.etag, vary: 'Accept-Encoding' };
    if (ifNoneMatchMatches(req.headers['if-none-match'], file.etag)) {
      res.writeHead(304, cached);
      return res.end();
    }
    const coding = preferredCoding(req.headers['accept-encoding']);
    const encoded = file.bodies[coding];
    const body = encoded ?? file.bodies.identity;
    res.writeHead(200, {
      ...cached,
      'content-type': file.type,
      ...(encoded && coding !== 'identity' && { 'content-encoding': coding }),
      'content-length': body.length,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  const server = createServer(TIMEOUTS, (req, res) => {
    try {
      answer(req, res);
    } catch (error) {
      // A bug must cost one answer, not the process that serves everyone.
      console.error(`price page: ${req.method} ${JSON.stringify(req.url)}: ${error.stack}`);
      if (res.headersSent) res.destroy();
      else
        res.writeHead(500, { ...headers, 'content-type': TEXT, 'cache-control': 'no-cache' }).end('Internal error\n');
    }
  });
  // Node gives a CONNECT to 'connect' listeners and, with none, drops the connection unanswered:
  // the page answers it as any other method it does not serve.
  server.on('connect', (_req, socket) => {
    socket.on('error', () => {});
    const body = 'Method not allowed\n';
    const head = { ...headers, allow: 'GET, HEAD', 'content-type': TEXT, 'content-length': body.length };
    const lines = Object.entries({ ...head, 'cache-control': 'no-cache', connection: 'close' });
    socket.end(`HTTP/1.1 405 Method Not Allowed\r\n${lines.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n${body}`);
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.timeout = SOCKET_TIMEOUT_MS;

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  return server;
}

for (const path of PAGE_PATHS) {
  if (path !== '/config.js' && !FILES.has(path)) fail(`page-path.mjs allows ${path}, which has no file`);
}
const config = readConfig(process.env);
const server = await startPageServer(config).catch((error) => fail(error.message));
const { port } = server.address();
const wildcard = config.host === '0.0.0.0' || config.host === '::';
const shown = wildcard ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
console.log(`price page on http://${shown}:${port}/ for the API at ${config.apiUrl}`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
