// Compares GET /v1/pricing throughput and CPU time per request of builds of the service on one
// database, interleaved.
// usage: DATABASE_URL=postgres://... node bench/compare-builds.mjs <name>=<path/to/main.js> <name>=<path/to/main.js> ...
// Each build runs as `npm start` runs it (HOST=127.0.0.1, rate limit out of the way); the load comes
// from bench/load.mjs in a process of its own. For every case (200, and 304 revalidation), each round
// measures every build once, in order; the medians over the rounds are printed, with the ratio to
// the first build: req/s, and the server's CPU time (user + system, from /proc) per request, which
// a busy machine disturbs far less than throughput. Knobs: BENCH_ROUNDS (3), BENCH_WARMUP_S (2), BENCH_DURATION_S (5),
// BENCH_CONNECTIONS (100). Used for "Cost of metrics and logs" in docs/benchmarks.md.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, URL } from 'node:url';

const builds = process.argv.slice(2).map((arg) => {
  const [name, main] = arg.split('=');
  return { name, main };
});
if (builds.length < 2 || !process.env.DATABASE_URL) {
  console.error(
    'usage: DATABASE_URL=postgres://... node bench/compare-builds.mjs <name>=<main.js> <name>=<main.js> ...',
  );
  process.exit(2);
}
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const warmup = Number(process.env.BENCH_WARMUP_S ?? 2);
const duration = Number(process.env.BENCH_DURATION_S ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 100);

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function start(build) {
  const port = await freePort();
  const child = spawn(process.execPath, [build.main], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: process.env.DATABASE_URL,
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      PRICING_RATE_LIMIT: '100000000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}/v1/pricing`;
  for (let i = 0; i < 300; i++) {
    const res = await head(url);
    if (res?.statusCode === 200) return { ...build, child, url, etag: res.headers.etag };
    await sleep(100);
  }
  throw new Error(`${build.name} did not serve the price list`);
}

const TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S; // utime, stime
}

/** The response to a GET (body discarded), or undefined when nothing answers. */
function head(url) {
  return new Promise((resolve) => {
    get(url, (res) => {
      res.resume();
      res.on('end', () => resolve(res));
    }).on('error', () => resolve(undefined));
  });
}

function load(url, headers, seconds = duration) {
  const options = { url, connections, duration: seconds, warmup: 0, headers };
  const out = execFileSync(process.execPath, [
    fileURLToPath(new URL('./load.mjs', import.meta.url)),
    JSON.stringify(options),
  ]);
  return JSON.parse(out.toString());
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const running = [];
try {
  for (const build of builds) running.push(await start(build));
  const cases = [
    { name: '200', headers: () => ({}), status: '200' },
    { name: '304', headers: (app) => ({ 'if-none-match': app.etag }), status: '304' },
  ];
  for (const c of cases) {
    const rps = new Map(running.map((app) => [app.name, []]));
    const cpu = new Map(running.map((app) => [app.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const app of running) {
        if (warmup > 0) load(app.url, c.headers(app), warmup);
        const before = cpuSeconds(app.child.pid);
        const result = load(app.url, c.headers(app));
        const usPerRequest = ((cpuSeconds(app.child.pid) - before) * 1e6) / result.requests;
        const unexpected = Object.keys(result.statusCodes).filter((code) => code !== c.status);
        if (unexpected.length > 0)
          throw new Error(`${app.name}: unexpected statuses ${JSON.stringify(result.statusCodes)}`);
        rps.get(app.name).push(result.rps);
        cpu.get(app.name).push(usPerRequest);
        console.error(
          `${c.name} round ${round + 1} ${app.name}: ${Math.round(result.rps)} req/s, ${usPerRequest.toFixed(1)} µs CPU/request`,
        );
      }
    }
    const baseRps = median(rps.get(running[0].name));
    const baseCpu = median(cpu.get(running[0].name));
    for (const app of running) {
      const r = median(rps.get(app.name));
      const u = median(cpu.get(app.name));
      console.log(
        [
          c.name,
          app.name,
          `${Math.round(r)} req/s`,
          `${(r / baseRps).toFixed(3)}×`,
          `${u.toFixed(1)} µs CPU/request`,
          `${(u / baseCpu).toFixed(3)}×`,
          `min ${Math.min(...cpu.get(app.name)).toFixed(1)} µs (${(Math.min(...cpu.get(app.name)) / Math.min(...cpu.get(running[0].name))).toFixed(3)}×)`,
          `rounds: ${rps.get(app.name).map(Math.round).join(', ')} req/s; ${cpu
            .get(app.name)
            .map((x) => x.toFixed(1))
            .join(', ')} µs`,
        ].join('\t'),
      );
    }
  }
} finally {
  for (const app of running) app.child.kill('SIGTERM');
}
