// Load generator, run in a process of its own so that it never shares the server's event loop.
// usage: node bench/load.mjs '<json options>'
//   { url, connections, duration, warmup, headers, rate, pid }
// Prints one line of JSON: requests per second, latency percentiles (ms, from every response's
// own time, at sub-millisecond resolution), the status codes seen, and, with `pid`, the CPU time
// (user + system) that process spent during the measured part (the warm-up is a run of its own
// before it, and the measured part starts once the process is idle again).
//
// With `rate`, requests are paced: each connection sends one request every connections/rate
// seconds (staggered), and waits for the answer before the next. autocannon's own
// `overallRate` is not used for this: it gives each connection a budget per second that it
// spends back to back at the start of every second, so at "half the capacity" the server
// would be saturated half of every second and the latencies would be those of a queue.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';
import { cpuMs, waitUntilIdle } from './server-cpu.mjs';

const requireFromHere = createRequire(import.meta.url);
const autocannon = requireFromHere('autocannon');

const options = JSON.parse(process.argv[2] ?? '{}');
const { url, headers = {}, rate, pid } = options;
const duration = options.duration ?? 5;
const warmup = options.warmup ?? 2;
const connections = rate
  ? Math.max(1, Math.min(options.connections ?? 100, Math.floor(rate)))
  : (options.connections ?? 100);

/** Replaces a client's "send the next request now" with "send it at its next slot". */
function pace(client) {
  const intervalMs = (1000 * connections) / rate;
  const sendNow = client._doRequest.bind(client);
  let next = performance.now() + Math.random() * intervalMs;
  client._doRequest = (...args) => {
    const now = performance.now();
    const at = Math.max(next, now);
    next = at + intervalMs;
    setTimeout(() => {
      if (!client.destroyed) sendNow(...args);
    }, at - now);
  };
}

const run = (seconds) =>
  autocannon({ url, connections, duration: seconds, headers, ...(rate && { setupClient: pace }) });
if (warmup > 0) await run(warmup);
if (pid) await waitUntilIdle(pid); // the measured part starts with no backlog of the warm-up

const latencies = [];
const cpuBefore = pid ? cpuMs(pid) : null;
const instance = run(duration);
instance.on('response', (_client, _statusCode, _bytes, responseTime) => latencies.push(responseTime));
const result = await instance;
const serverCpuMs = pid ? cpuMs(pid) - cpuBefore : null;
latencies.sort((a, b) => a - b);
const percentile = (p) =>
  latencies.length === 0
    ? null
    : latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
const statusCodes = Object.fromEntries(
  Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, Number(count)]),
);
process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    duration: result.duration,
    rps: result.requests.total / result.duration,
    connections,
    p50: percentile(50),
    p99: percentile(99),
    max: latencies.at(-1) ?? null,
    statusCodes,
    serverCpuMs,
    errors: result.errors,
    timeouts: result.timeouts,
  })}\n`,
);
process.exit(0);
