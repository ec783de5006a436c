// `npm run bench`: GET /v1/pricing in the app as production starts it. Its cost: CPU per request of
// the route above the Nest floor (bench/nest/floor.main.ts: one controller writing the same bytes,
// nothing else), measured in process for the 200 and the 304 (bench/pricing-path-cost.mjs), against
// its target (at most 25 µs). For information, over HTTP and in the same run: req/s and CPU per
// request of the app, the floor, bare Express, the app with @nestjs/throttler and a conventional
// NestJS peer (bench/nest/). Then what else the service claims: no query per request, a scheduled
// price served at its instant, an import served by a second instance, the in-memory limiter's
// bound (bench/limiter-memory.mjs); and a full rebuild at 100,000 prices and RSS, for information.
// It reports; it never fails the test suite (exit code 0 unless the benchmark itself broke).
// Method and latest figures: docs/benchmarks.md. Knobs (environment): BENCH_ROUNDS,
// BENCH_WARMUP_S, BENCH_DURATION_S, BENCH_CONNECTIONS, BENCH_PATH_RUNS, BENCH_PATH_REQUESTS,
// BENCH_LARGE_PRICES, BENCH_LIMITER_ADDRESSES, BENCH_APP_NODE_OPTIONS, BENCH_SERVER_NODE_OPTIONS,
// DATABASE_URL.
import {
  atCleanUp,
  cli,
  DIST,
  freePort,
  importBook,
  untilApplied,
  intEnv,
  largeBook,
  log,
  median,
  openDataSource,
  peakRssMiB,
  requireFromRoot,
  ROOT,
  rssMiB,
  runMain,
  scratchDatabase,
  scratchDir,
} from './support.mjs';
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { pathCost } from './pricing-path-cost.mjs';
import { waitUntilIdle } from './server-cpu.mjs';

const LOG_DIR = join(ROOT, 'bench/results/logs');
const ROUNDS = intEnv('BENCH_ROUNDS', 5);
const WARMUP_S = intEnv('BENCH_WARMUP_S', 1);
const DURATION_S = intEnv('BENCH_DURATION_S', 2);
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 100);
const PATH_RUNS = intEnv('BENCH_PATH_RUNS', 12);
const PATH_REQUESTS = intEnv('BENCH_PATH_REQUESTS', 10_000);
const LARGE_PRICES = intEnv('BENCH_LARGE_PRICES', 100_000);
const LIMITER_ADDRESSES = intEnv('BENCH_LIMITER_ADDRESSES', 1_000_000);
const RATE_LIMIT = '100000000'; // active, but far above what a run sends from one address
/**
 * The conventional peer's throttler window. Its default storage keeps one timestamp per hit of a
 * client within the window and filters them on every request: with the load generator's one
 * address at thousands of req/s, a 60 s window would slow it run after run. 50 ms holds about as
 * many hits as a real client at the app's limit (120 per 60 s) has.
 */
const PEER_RATE_WINDOW_S = '0.05';
/** In the order each round runs them. */
const SERVERS = ['express', 'nest floor', 'app', 'app+throttler', 'peer'];
/** The route's CPU per request above the Nest floor, in process (design: "One way through"). */
const TARGET_ABOVE_FLOOR_US = 25;
/**
 * A change is served this soon after the CLI exits: it takes effect at its publication instant,
 * about a second after the write begins (docs/operations.md, "One clock"). 500 ms before that rule.
 */
const TARGET_SERVED_AFTER_EXIT_MS = 1_500;
/** A scheduled price is served at its instant: this late at most. */
const TARGET_TRANSITION_MS = 100;

const children = new Set();

// ---------------------------------------------------------------------------------------------
// Child processes: their output goes to bench/results/logs/

function startNode(name, args, env = {}, { ipc = false } = {}) {
  const childEnv = { ...process.env, ...env };
  for (const [key, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[key];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: childEnv,
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  let stdout = '';
  child.stdout.on('data', (chunk) => (output.push(chunk), (stdout += chunk)));
  child.stderr.on('data', (chunk) => output.push(chunk));
  const exited = new Promise((done) => child.once('exit', (code) => done(code)));
  children.add(child);
  void exited.then(() => {
    children.delete(child);
    return writeFile(join(LOG_DIR, `${name}.log`), Buffer.concat(output.map((c) => Buffer.from(c)))).catch(
      () => undefined,
    );
  });
  const outputText = () => Buffer.concat(output.map((c) => Buffer.from(c))).toString('utf8');
  return { name, child, exited, stdout: () => stdout, output: outputText };
}

/** Runs `node <args>` to completion; resolves with its stdout, rejects with its output when it fails. */
async function runNode(name, args, env = {}) {
  const proc = startNode(name, args, env);
  if ((await proc.exited) !== 0) throw new Error(`${name} failed:\n${proc.output().slice(-3000)}`);
  return proc.stdout();
}

async function stopAll() {
  await Promise.all(
    [...children].map(async (child) => {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      if ((await Promise.race([exited, sleep(10_000, 'timeout')])) === 'timeout') child.kill('SIGKILL');
    }),
  );
}

/** Resolves once `ready()` holds; rejects when the child exits first or after `ms`. */
async function waitFor(proc, ready, ms = 60_000) {
  const deadline = performance.now() + ms;
  while (!(await ready())) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited:\n${proc.output().slice(-3000)}`);
    if (performance.now() > deadline) throw new Error(`${proc.name} did not become ready`);
    await sleep(50);
  }
}

/** Node options of a server process, on its command line (NODE_OPTIONS refuses --cpu-prof). */
const nodeOptions = (...names) => names.flatMap((name) => process.env[name]?.split(/\s+/).filter(Boolean) ?? []);

// ---------------------------------------------------------------------------------------------
// HTTP client for probes and polls (keep-alive)

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

function get(port, path = '/v1/pricing', headers = {}) {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => done({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

/** The app as production starts it, or `script` with the same environment (the throttler variant). */
async function startApp(name, url, script = join(DIST, 'apps/control-plane/src/main.js')) {
  const port = await freePort();
  const preload = ['--import', pathToFileURL(join(ROOT, 'bench/count-queries.mjs')).href];
  const env = {
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    PRICING_RATE_LIMIT: RATE_LIMIT,
    PRICING_RATE_WINDOW_S: '60',
    REDIS_URL: undefined, // the in-memory rate limiter, whatever the caller's environment says
    TRUST_PROXY: undefined,
  };
  const args = [...nodeOptions('BENCH_SERVER_NODE_OPTIONS', 'BENCH_APP_NODE_OPTIONS'), ...preload, script];
  const proc = startNode(name, args, env, { ipc: true });
  await waitFor(proc, async () => (await get(port, '/health/ready').catch(() => undefined))?.status === 200);
  return { proc, port, pid: proc.child.pid };
}

/** The number of queries the app has sent so far (bench/count-queries.mjs, preloaded). */
function queryCount(app) {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${app.proc.name} did not report its query count`)), 5_000);
    const onMessage = (message) => {
      if (message?.type !== 'query-count') return;
      clearTimeout(timer);
      app.proc.child.off('message', onMessage);
      done(message.count);
    };
    app.proc.child.on('message', onMessage);
    app.proc.child.send({ type: 'query-count' });
  });
}

/** The app's 200 and 304 written to files, for the references and the peer to serve. */
async function captureResponse(port, dir) {
  const full = await get(port);
  const notModified = await get(port, '/v1/pricing', { 'if-none-match': full.headers.etag });
  if (full.status !== 200 || notModified.status !== 304)
    throw new Error(`the app answered ${full.status} and ${notModified.status}`);
  const strip = (headers) => {
    const kept = { ...headers };
    for (const h of ['date', 'connection', 'keep-alive', 'transfer-encoding']) delete kept[h];
    return kept;
  };
  const responseFile = join(dir, 'response.json');
  const bodyFile = join(dir, 'body.json');
  const captured = { etag: full.headers.etag, headers200: strip(full.headers), headers304: strip(notModified.headers) };
  await writeFile(responseFile, JSON.stringify(captured));
  await writeFile(bodyFile, full.body);
  return { etag: full.headers.etag, body: full.body, responseFile, bodyFile };
}

/** bench/load.mjs (autocannon, in a process of its own): its JSON result. */
async function load(port, { headers = {}, pid }) {
  const options = { url: `http://127.0.0.1:${port}/v1/pricing`, connections: CONNECTIONS, duration: DURATION_S };
  const out = await runNode('load', [
    join(ROOT, 'bench/load.mjs'),
    JSON.stringify({ ...options, warmup: WARMUP_S, headers, pid }),
  ]);
  return JSON.parse(out.trim().split('\n').at(-1));
}

// ---------------------------------------------------------------------------------------------
// The benchmark

async function main() {
  const startedAt = performance.now();
  const loadAverage = { before: loadavg() };
  const dir = await scratchDir();
  await mkdir(LOG_DIR, { recursive: true });

  // Alone on the machine, before anything else runs: it measures heap and time per hit.
  log(`in-memory limiter: ${LIMITER_ADDRESSES.toLocaleString('en-US')} distinct addresses in one window`);
  const limiterOut = await runNode('limiter-memory', [
    '--expose-gc',
    join(ROOT, 'bench/limiter-memory.mjs'),
    String(LIMITER_ADDRESSES),
  ]);
  const limiter = JSON.parse(limiterOut.trim().split('\n').at(-1));

  log(`importing the sample book and a generated book of ${LARGE_PRICES.toLocaleString('en-US')} prices`);
  const [sampleUrl, largeUrl] = await Promise.all([scratchDatabase('bench_sample'), scratchDatabase('bench_large')]);
  const importStarted = performance.now();
  const [, largeImport] = await Promise.all([
    cli(['import', join(ROOT, 'apps/control-plane/sample/price-book.json')], sampleUrl),
    importBook(largeBook(LARGE_PRICES), largeUrl),
  ]);
  const importMs = performance.now() - importStarted;
  await untilApplied(largeImport); // the rebuild below reads the list at now
  atCleanUp(stopAll); // the servers stop before their databases are dropped

  log(`a full rebuild of ${LARGE_PRICES.toLocaleString('en-US')} prices in this process`);
  const rebuild = await timeRebuild(largeUrl);

  // In process, before any server runs: every build's child on the last CPU, side by side.
  const cpu = cpus().length - 1;
  const builds = [
    ['floor', 'floor'],
    ['app', DIST],
  ];
  const path = { runs: PATH_RUNS, requests: PATH_REQUESTS, cpu, builds };
  log(`the route's CPU above the Nest floor, in process: ${PATH_RUNS} runs of ${PATH_REQUESTS} requests, CPU ${cpu}`);
  const inProcess = {
    sample: await pathCost({ ...path, databaseUrl: sampleUrl, statuses: [200, 304] }),
    large: await pathCost({ ...path, databaseUrl: largeUrl, statuses: [304] }),
  };

  log('starting the servers');
  const app = await startApp('app', sampleUrl);
  const answer = await captureResponse(app.port, dir);
  const servers = {
    app,
    'app+throttler': await startApp('app-throttler', sampleUrl, join(DIST, 'bench/nest/throttled-app.main.js')),
  };
  for (const [server, script, args, env] of [
    ['express', join(ROOT, 'bench/baseline-express.mjs'), [answer.responseFile, answer.bodyFile]],
    ['nest floor', join(DIST, 'bench/nest/floor.main.js'), [answer.responseFile, answer.bodyFile]],
    // The conventional peer holds the document as an object, parsed from the app's body.
    [
      'peer',
      join(DIST, 'bench/nest/peer.main.js'),
      [answer.bodyFile],
      { PRICING_RATE_LIMIT: RATE_LIMIT, PRICING_RATE_WINDOW_S: PEER_RATE_WINDOW_S },
    ],
  ]) {
    const port = await freePort();
    const name = server.replace(/[: ]/g, '-');
    const proc = startNode(name, [...nodeOptions('BENCH_SERVER_NODE_OPTIONS'), script, String(port), ...args], env);
    await waitFor(proc, () => proc.stdout().includes('ready'));
    servers[server] = { proc, port, pid: proc.child.pid };
  }
  for (const server of SERVERS) {
    const check = await get(servers[server].port);
    if (!check.body.equals(answer.body)) throw new Error(`${server} does not serve the app's body`);
    servers[server].etag = check.headers.etag; // the peer computes its own (equal)
  }

  // Queries per request: the app's own count across its load runs, minus the same across the
  // express runs of the same length (the app idle: its periodic version check only).
  const queries = { load: 0, idle: 0, requests: 0 };
  const cases = [200, 304].map((status) => ({
    id: `${status} sample`,
    status,
    runs: Object.fromEntries(SERVERS.map((s) => [s, []])),
  }));
  log(
    `over HTTP: ${cases.length} cases × ${ROUNDS} rounds × ${SERVERS.length} servers, ${WARMUP_S} + ${DURATION_S} s each`,
  );
  for (const c of cases) {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const server of SERVERS) {
        const { port, pid, etag } = servers[server];
        const counted = server === 'app' || server === 'express';
        const before = counted && (await queryCount(app));
        const result = await load(port, { headers: c.status === 304 ? { 'if-none-match': etag } : {}, pid });
        if (counted) queries[server === 'app' ? 'load' : 'idle'] += (await queryCount(app)) - before;
        if (server === 'app') queries.requests += result.requests;
        result.cpuUs = result.requests > 0 ? (1000 * result.serverCpuMs) / result.requests : null;
        const other = Object.keys(result.statusCodes).filter((code) => Number(code) !== c.status);
        if (other.length > 0 || result.errors)
          log(`${server} UNEXPECTED: ${JSON.stringify(result.statusCodes)}, ${result.errors} errors`);
        if (!(await waitUntilIdle(pid))) log(`${server} still busy a minute after its run; going on`);
        c.runs[server].push(result);
        log(
          `${c.id} round ${round} ${server.padEnd(13)} ${Math.round(result.rps)} req/s ${result.cpuUs?.toFixed(0)} µs CPU/req`,
        );
      }
    }
  }
  const rss = { rssMiB: rssMiB(app.pid), peakMiB: peakRssMiB(app.pid) };

  log('a scheduled price, and an import seen by a second instance');
  const second = await startApp('app-2', sampleUrl);
  const transition = await measureTransition(sampleUrl, app.port, dir);
  const propagation = await measurePropagation(sampleUrl, app.port, second.port, dir);

  await stopAll();
  agent.destroy();
  loadAverage.after = loadavg();
  await report({
    inProcess,
    cases,
    queries,
    rebuild,
    transition,
    propagation,
    rss,
    importMs,
    answer,
    limiter,
    loadAverage,
    totalS: (performance.now() - startedAt) / 1000,
  });
}

/** loadPricingData, then PricingSnapshot.build (index, list, render, hash, compress), 3 times: medians. */
async function timeRebuild(url) {
  const { PriceSnapshotReads } = requireFromRoot(join(DIST, 'libs/pricing/src/database/price-snapshot-reads.js'));
  const { PricingSnapshot } = requireFromRoot(join(DIST, 'libs/pricing/src/snapshot/pricing-snapshot.js'));
  const repository = new PriceSnapshotReads(await openDataSource(url));
  const reads = [];
  const builds = [];
  let bytes = 0;
  for (let i = 0; i < 3; i++) {
    let t = performance.now();
    const data = await repository.loadPricingData();
    reads.push(performance.now() - t);
    t = performance.now();
    const snapshot = await PricingSnapshot.build(data, Date.now());
    builds.push(performance.now() - t);
    bytes = snapshot.priceListAt(Date.now()).body.length;
  }
  return { readMs: median(reads), buildMs: median(builds), bytes };
}

/** Polls back to back until `until(response)` holds; returns the instant (Date.now()) of that response. */
async function pollUntil(port, until, ms = 15_000) {
  const deadline = performance.now() + ms;
  for (;;) {
    const res = await get(port);
    if (res.status === 200 && until(res)) return Date.now();
    if (performance.now() > deadline) return null;
    await sleep(1); // about a thousand polls a second: 1 ms resolution without hogging a core
  }
}

/** A price scheduled a few seconds ahead: how late after its instant the app serves it. */
async function measureTransition(url, port, dir) {
  const leadMs = 6_000; // the CLI takes 1–3 s on a busy machine
  const instant = Math.ceil((Date.now() + leadMs) / 1000) * 1000 + 123;
  const productKey = 'compute.benchscheduled.1';
  const file = join(dir, 'scheduled.json');
  const price = { product_key: productKey, unit_type: 'seconds', unit_count: 3600, amount: '1.5' };
  await writeFile(file, JSON.stringify({ prices: [{ ...price, valid_from: new Date(instant).toISOString() }] }));
  await cli(['import', file], url);
  const importedAheadMs = instant - Date.now();
  const at = await pollUntil(port, (res) => res.body.includes(`"${productKey}"`), leadMs + 10_000);
  return { importedAheadMs, lagMs: at === null ? null : at - instant };
}

/** A price imported in force: how soon after the CLI exits each of two running instances serves it. */
async function measurePropagation(url, firstPort, secondPort, dir) {
  const productKey = 'compute.benchimport.1';
  const file = join(dir, 'immediate.json');
  await writeFile(
    file,
    JSON.stringify({ prices: [{ product_key: productKey, unit_type: 'seconds', unit_count: 3600, amount: '2.5' }] }),
  );
  const includes = (res) => res.body.includes(`"${productKey}"`);
  const served = [pollUntil(firstPort, includes), pollUntil(secondPort, includes)];
  const spawnedAt = Date.now();
  await cli(['import', file], url);
  const exitedAt = Date.now();
  const [first, second] = await Promise.all(served);
  const after = (at) => (at === null ? null : Math.max(0, at - exitedAt));
  return { cliMs: exitedAt - spawnedAt, firstMs: after(first), secondMs: after(second) };
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = {
  int: (v) => (v === null || v === undefined ? '–' : Math.round(v).toLocaleString('en-US')),
  ratio: (v) => (v === null || !Number.isFinite(v) ? '–' : `${v.toFixed(2)}×`),
  us: (v) => (v === null || v === undefined ? '–' : v.toFixed(1)),
  ms: (v) => (v === null || v === undefined ? '–' : v < 10 ? v.toFixed(1) : v.toFixed(0)),
};
const verdict = (met) => (met ? 'met' : 'MISSED');

function textTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function markdownTable(header, rows) {
  const esc = (c) => String(c).replaceAll('|', '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

async function report(results) {
  const { inProcess, cases, queries, rebuild, transition, propagation, rss, limiter, loadAverage } = results;
  const large = `${LARGE_PRICES / 1000}k`;

  const pathHeader = [
    'case',
    'floor µs/req',
    'app µs/req',
    'app − floor µs (quartiles)',
    'app ÷ floor',
    'target',
    'result',
  ];
  const pathRows = [
    ['200 sample', inProcess.sample[200]],
    ['304 sample', inProcess.sample[304]],
    [`304 ${large}`, inProcess.large[304]],
  ].map(([id, { floor, app }]) => {
    const above = app.aboveFirst;
    return [
      id,
      fmt.us(floor.medianUs),
      fmt.us(app.medianUs),
      `${fmt.us(above.median)} (${fmt.us(above.q1)}–${fmt.us(above.q3)})`,
      fmt.ratio(app.ratio.median),
      `≤ ${TARGET_ABOVE_FLOOR_US} µs`,
      verdict(above.median <= TARGET_ABOVE_FLOOR_US),
    ];
  });

  // Over HTTP, for information: medians of the rounds, and the rounds' own ratios (runs seconds
  // apart, which a change of load hits alike).
  const httpHeader = ['case', 'server', 'req/s', 'rounds (min–max)', '× floor', '× express', '× peer', 'CPU µs/req'];
  const httpRows = cases.flatMap((c) =>
    SERVERS.map((server) => {
      const rps = c.runs[server].map((r) => r.rps);
      const own = (base) => median(c.runs[server].map((r, i) => r.rps / c.runs[base][i].rps));
      return [
        c.id,
        server,
        fmt.int(median(rps)),
        `${fmt.int(Math.min(...rps))}–${fmt.int(Math.max(...rps))}`,
        fmt.ratio(own('nest floor')),
        fmt.ratio(own('express')),
        fmt.ratio(own('peer')),
        fmt.int(median(c.runs[server].map((r) => r.cpuUs))),
      ];
    }),
  );

  const perRequest = Math.max(0, queries.load - queries.idle) / queries.requests;
  const { underLimit, overLimit, throttlerDefaultStorage: throttler } = limiter;
  const limiterText = (r) =>
    `heap ${(r.heapBytes / 2 ** 20).toFixed(1)} MiB, ${fmt.int(r.size)} clients held, ${fmt.us(r.usPerHit)} µs a hit`;
  const other = [
    [
      'database queries per request (200 and 304 sample)',
      `${perRequest.toFixed(3)} (${queries.load} during the app's load runs, ${queries.idle} during idle runs of the same length, ${fmt.int(queries.requests)} requests)`,
      '0 (< 0.001)',
      perRequest < 0.001,
    ],
    [
      'scheduled price: served after its instant',
      `${fmt.ms(transition.lagMs)} ms (imported ${(transition.importedAheadMs / 1000).toFixed(1)} s ahead)`,
      `≤ ${TARGET_TRANSITION_MS} ms`,
      transition.lagMs !== null && transition.lagMs <= TARGET_TRANSITION_MS && transition.importedAheadMs > 0,
    ],
    [
      'import: served after the CLI exits, by the second instance',
      `${fmt.ms(propagation.secondMs)} ms (the first: ${fmt.ms(propagation.firstMs)} ms; CLI run ${fmt.ms(propagation.cliMs)} ms)`,
      `≤ ${TARGET_SERVED_AFTER_EXIT_MS} ms`,
      [propagation.firstMs, propagation.secondMs].every((ms) => ms !== null && ms <= TARGET_SERVED_AFTER_EXIT_MS),
    ],
    [
      `in-memory limiter, ${fmt.int(limiter.addresses)} addresses in one window`,
      `${limiterText(underLimit)}; half of them over their limit: ${limiterText(overLimit)}`,
      `≤ ${fmt.int(2 * limiter.maxTracked)} clients held`,
      underLimit.size <= 2 * limiter.maxTracked && overLimit.size <= 2 * limiter.maxTracked,
    ],
    [
      `@nestjs/throttler's default storage, ${fmt.int(throttler.addresses)} addresses`,
      `${limiterText(throttler)}, ${Math.round(throttler.heapBytes / throttler.addresses)} bytes an address`,
      '',
      null,
    ],
    [
      `full rebuild, ${large} prices (in this process)`,
      `read ${fmt.ms(rebuild.readMs)} ms, then PricingSnapshot.build ${fmt.ms(rebuild.buildMs)} ms (body ${(rebuild.bytes / 1e6).toFixed(1)} MB)`,
      '',
      null,
    ],
    [
      'RSS of the app (sample book) after the load',
      `${rss.rssMiB.toFixed(0)} MiB (peak ${rss.peakMiB.toFixed(0)})`,
      '',
      null,
    ],
    [
      'CLI imports (sample and large, at once)',
      `${(results.importMs / 1000).toFixed(1)} s (bodies ${(results.answer.body.length / 1e3).toFixed(1)} kB and ${(rebuild.bytes / 1e6).toFixed(1)} MB)`,
      '',
      null,
    ],
  ];
  const otherHeader = ['measurement', 'value', 'target', 'result'];
  const otherRows = other.map(([name, value, target, met]) => [name, value, target, met === null ? '' : verdict(met)]);

  const when = new Date().toISOString();
  const loads = (l) => l.map((v) => v.toFixed(2)).join(', ');
  const settings =
    `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; load average (1, 5, 15 min) ${loads(loadAverage.before)} before, ${loads(loadAverage.after)} after; ${results.totalS.toFixed(0)} s. ` +
    `In process: floor and app side by side on one CPU, ${PATH_RUNS} runs of ${PATH_REQUESTS} requests (median, and of each run's app − floor). ` +
    `Over HTTP (for information): ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s, ${ROUNDS} rounds; ratios are medians of the rounds' own.`;
  const missed = [
    ...pathRows.filter((r) => r.at(-1) === 'MISSED').map((r) => `${r[0]} above the floor`),
    ...otherRows.filter((r) => r.at(-1) === 'MISSED').map((r) => r[0]),
  ];
  const summary = missed.length ? `Targets missed: ${missed.join('; ')}.` : 'All targets met.';
  const tables = (table) =>
    [
      "The route's CPU per request above the Nest floor, in process:",
      table(pathHeader, pathRows),
      'Over HTTP, for information:',
      table(httpHeader, httpRows),
      table(otherHeader, otherRows),
    ].join('\n\n');

  process.stdout.write(`\nGET /v1/pricing — ${when}\n${settings}\n\n${tables(textTable)}\n\n${summary}\n`);
  const markdown = `# GET /v1/pricing benchmark — ${when}\n\n${settings}\n\n${tables(markdownTable)}\n\n${summary}\n`;
  await mkdir(join(ROOT, 'bench/results'), { recursive: true });
  await writeFile(join(ROOT, 'bench/results/latest.md'), markdown);
  await writeFile(join(ROOT, 'bench/results/latest.json'), JSON.stringify({ when, ...results }, null, 2));
  process.stderr.write('written: bench/results/latest.md, bench/results/latest.json\n');
}

await runMain(main);
