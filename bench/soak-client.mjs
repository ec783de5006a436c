// The load of `npm run soak` (bench/soak.mjs), in a process of its own so that it never shares
// the server's event loop. usage: node bench/soak-client.mjs '<json options>'
//   { port, connections, durationS, reportEveryS, rate?, rateLimitedShare? }
// A mix of requests, in a fixed cycle of 20: 12 plain GETs (no Accept-Encoding, gzip, br in
// turn) from a pool of client addresses, each well under its rate limit; 6 revalidations with
// the latest ETag seen (304, or 200 once after a price change); 2 from one greedy address,
// over its limit (429). Addresses go in X-Forwarded-For (the app trusts loopback). Without
// `rate`, every connection sends its next request when the last one is answered (capacity);
// with it, requests leave on a fixed schedule and their latency counts from it, so a server
// that falls behind shows in the percentiles (no coordinated omission).
// Every 200 is checked: its body, decoded, must hash to its ETag. One line of JSON per report
// on stdout: { t, requests, statuses, errors, p50, p99, max, clientDelay } (ms; clientDelay:
// the worst delay of this process's own event loop).
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

const { port, connections = 50, durationS, reportEveryS = 60, rate } = JSON.parse(process.argv[2]);
const POOL = 10_000;
const GREEDY = '192.0.2.1';
const CYCLE = [...Array(12).fill('plain'), ...Array(6).fill('revalidate'), ...Array(2).fill('greedy')];
const CODINGS = [undefined, 'gzip', 'br'];
const DECODE = { gzip: gunzipSync, br: brotliDecompressSync };

const agent = new Agent({ keepAlive: true, maxSockets: connections });
let etag;
let sent = 0;
let interval = { requests: 0, statuses: {}, errors: 0, latencies: [], firstError: undefined };
// This process's own event loop: a late client shows here, not as the server's latency.
const ownDelay = monitorEventLoopDelay({ resolution: 10 });
ownDelay.enable();

function headersFor(n) {
  const kind = CYCLE[n % CYCLE.length];
  const client = n % POOL;
  const address = kind === 'greedy' ? GREEDY : `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`;
  const headers = { 'x-forwarded-for': address };
  if (kind === 'plain') {
    const coding = CODINGS[Math.floor(n / CYCLE.length) % CODINGS.length];
    if (coding) headers['accept-encoding'] = coding;
  }
  if (kind === 'revalidate' && etag) headers['if-none-match'] = etag;
  return headers;
}

/** The weak ETag the app computes from the plain JSON (libs/pricing/src/rendering/entity-tag.ts). */
function weakTag(body) {
  return `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

function check(status, headers, body) {
  if (status === 304 || status === 429) return undefined;
  if (status !== 200) return `status ${status}`;
  const coding = headers['content-encoding'];
  const plain = coding ? DECODE[coding]?.(body) : body;
  if (!plain) return `unknown content-encoding ${coding}`;
  if (weakTag(plain) !== headers.etag) return `a ${coding ?? 'plain'} body that does not hash to its ETag`;
  etag = headers.etag;
  return undefined;
}

function send(n, scheduledAt) {
  return new Promise((done) => {
    const finish = (status, problem) => {
      interval.requests++;
      interval.statuses[status] = (interval.statuses[status] ?? 0) + 1;
      if (problem) {
        interval.errors++;
        interval.firstError ??= problem;
      }
      interval.latencies.push(performance.now() - scheduledAt);
      done();
    };
    const req = request({ host: '127.0.0.1', port, path: '/v1/pricing', headers: headersFor(n), agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => finish(res.statusCode, check(res.statusCode, res.headers, Buffer.concat(chunks))));
      res.on('error', (error) => finish('error', error.message));
    });
    req.on('error', (error) => finish('error', error.message));
    req.end();
  });
}

function report(t) {
  const latencies = interval.latencies.sort((a, b) => a - b);
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? null;
  const { requests, statuses, errors, firstError } = interval;
  const clientDelay = ownDelay.max / 1e6;
  ownDelay.reset();
  const line = { t, requests, statuses, errors, firstError, p50: at(50), p99: at(99), max: latencies.at(-1) ?? null };
  process.stdout.write(`${JSON.stringify({ ...line, clientDelay })}\n`);
  interval = { requests: 0, statuses: {}, errors: 0, latencies: [], firstError: undefined };
}

const started = performance.now();
const end = started + durationS * 1000;
let nextReport = started + reportEveryS * 1000;
const reporter = setInterval(() => {
  const now = performance.now();
  if (now >= nextReport) {
    report(Math.round((now - started) / 1000));
    nextReport += reportEveryS * 1000;
  }
}, 200);

if (rate) {
  // Open loop: request n leaves at started + n / rate, whether or not earlier ones are answered.
  const inFlight = new Set();
  while (performance.now() < end) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    while (sent < due) {
      const scheduledAt = started + (sent / rate) * 1000;
      const pending = send(sent++, scheduledAt);
      inFlight.add(pending);
      void pending.then(() => inFlight.delete(pending));
    }
    await sleep(2);
  }
  await Promise.all(inFlight);
} else {
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) await send(sent++, performance.now());
    }),
  );
}
clearInterval(reporter);
if (interval.requests > 0) report(Math.round((performance.now() - started) / 1000));
agent.destroy();
