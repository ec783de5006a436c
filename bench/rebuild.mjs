// `npm run bench:rebuild`: rebuilds of the public list at 100,000 prices and what compression
// costs and gives. It reports; it never fails the test suite (exit code 0 unless the benchmark
// itself broke). Method and latest figures: docs/benchmarks.md, "Rebuilds and compression".
//
// 1. Rebuild, in this process with the built library, against a database of 100,000 prices:
//    the list at once, without slices (read, then the public list built, serialized and hashed
//    on the event loop; then with gzip and brotli there too), and the loader's (the first full
//    read, a change of one price read incrementally, a full read again), each with its time, the
//    worst event-loop delay (monitorEventLoopDelay, wall time), the longest the main thread ran
//    on a CPU between two turns of the loop, and how much of the longest gap it waited for a CPU
//    (/proc schedstat: what other processes cost it). Target: the loader's worst delay at most 50 ms.
// 2. Encoding of the 100,000-price body: bytes and time per coding and brotli quality.
// 3. The built app serving the 100,000-price 200 in identity, gzip and br (bench/load.mjs):
//    req/s and bytes on the wire, and the app's memory; beside it, a bare node:http server
//    serving the same bytes, for what the transport and the load generator allow.
// Knobs (environment): BENCH_LARGE_PRICES (100000), BENCH_REBUILD_ROUNDS (3), BENCH_WARMUP_S (2),
// BENCH_DURATION_S (5), BENCH_LARGE_BODY_CONNECTIONS (10), DATABASE_URL.
import { createServer } from 'node:http';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import {
  DIST,
  ROOT,
  get,
  importBook,
  untilApplied,
  intEnv,
  largeBook,
  load,
  log,
  openDataSource,
  MiB,
  requireFromRoot,
  rssMiB,
  runMain,
  scratchDatabase,
  startApp,
  median,
} from './support.mjs';
import { holdSampler } from './schedstat.mjs';

const PRICES = intEnv('BENCH_LARGE_PRICES', 100_000);
const ROUNDS = intEnv('BENCH_REBUILD_ROUNDS', 3);
const WARMUP_S = intEnv('BENCH_WARMUP_S', 2);
const DURATION_S = intEnv('BENCH_DURATION_S', 5);
const CONNECTIONS = intEnv('BENCH_LARGE_BODY_CONNECTIONS', 10);
const CODINGS = ['identity', 'gzip', 'br'];
/** No request waits longer behind a rebuild of 100,000 prices. */
const MAX_DELAY_MS = 50;

const lib = (path) => requireFromRoot(join(DIST, path));
// V8's own full collection, without --expose-gc on this script's command line.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc');
const { brotliQualityFor } = lib('libs/pricing/src/rendering/price-list-response.js');

await runMain(async () => {
  const loadBefore = loadavg()[0];
  const url = await scratchDatabase('bench_rebuild');
  log(`importing ${PRICES.toLocaleString('en')} prices with the CLI`);
  let t = performance.now();
  await untilApplied(await importBook(largeBook(PRICES), url)); // the lists below are of now
  const importMs = performance.now() - t;

  log('rebuilds in this process');
  const rebuilds = await measureRebuilds(url);

  log('encodings of the large body');
  const encodings = measureEncodings(rebuilds.bodies.identity);

  log('the app, and bare node:http serving the same bytes, in each coding');
  const serving = await measureServing(url, rebuilds.bodies);

  const report = {
    when: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadBefore,
    loadAfter: loadavg()[0],
    prices: PRICES,
    importMs,
    rebuilds: { ...rebuilds, bodies: undefined },
    encodings,
    serving,
  };
  await mkdir(join(ROOT, 'bench/results'), { recursive: true });
  await writeFile(join(ROOT, 'bench/results/rebuild.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(markdown(report));
});

/**
 * Runs `work`, after a full collection, while watching the event loop: its time, worst delay
 * (wall), the longest this thread ran on a CPU between two turns of the loop, and how long it
 * waited for a CPU in the longest gap between two turns (what other processes on the machine cost
 * it).
 */
async function watched(work) {
  // What earlier measurements left is collected first: the lists built without slices leave up
  // to 800 MB of garbage at 100,000 prices, which V8 once collected in one pause of 126 ms inside
  // a loader's first load (docs/benchmarks.md, "Rebuilds and compression"). An app's loader never
  // runs beside it: that pause is this process's cost, not the loader's.
  collectGarbage();
  collectGarbage();
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const sampler = holdSampler();
  histogram.enable();
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  await sleep(20); // the turn that ended the work is counted
  const holds = sampler.take();
  sampler.stop();
  histogram.disable();
  return { ms, worstDelayMs: histogram.max / 1e6, longestRunMs: holds.holdMs, waitingMs: holds.waitingMs, result };
}

/** Median of each figure over the rounds. */
function summary(runs) {
  const keys = ['ms', 'worstDelayMs', 'longestRunMs', 'waitingMs'];
  return Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => r[k]))]));
}

async function measureRebuilds(url) {
  const { PriceSnapshotReads } = lib('libs/pricing/src/database/price-snapshot-reads.js');
  const { PriceBookLoader } = lib('libs/pricing/src/snapshot/price-book-loader.js');
  const { PricingState } = lib('libs/pricing/src/snapshot/pricing-state.js');
  const { resolvePricingOptions } = lib('libs/pricing/src/options/pricing-options.js');
  const { ListHistory } = lib('libs/pricing/src/core/list-history.js');
  const { runNow } = lib('libs/pricing/src/core/slices.js');
  const { renderPriceListNow } = lib('libs/pricing/src/rendering/price-list-response.js');
  const { SystemClock } = lib('libs/clock/src/clock.js');

  const dataSource = await openDataSource(url);
  const repository = new PriceSnapshotReads(dataSource);
  const rounds = { synchronous: [], synchronousCompressed: [], fullRead: [], oneChange: [], fullReadAgain: [] };
  /** The public list read, built, serialized and hashed at once (runNow), without slices. */
  const listAtOnce = async () => {
    const data = await repository.loadPricingData();
    const now = Date.now();
    const sources = { records: data.records, ends: data.ends, writes: data.listWrites, lastChangeId: 0 };
    return renderPriceListNow(runNow(ListHistory.build(sources, { hashed: false })).listAt(now)).body;
  };
  let bodies;
  for (let round = 1; round <= ROUNDS; round++) {
    rounds.synchronous.push(await watched(listAtOnce));
    rounds.synchronousCompressed.push(await watched(async () => compress(await listAtOnce())));

    // The loader and the state served, as PricingModule wires them; the database connection is
    // only asked for its state at bootstrap, which is not run here.
    const clock = new SystemClock();
    const options = resolvePricingOptions({});
    const loader = new PriceBookLoader(options, repository, {}, clock);
    const state = new PricingState(options, loader, clock);
    try {
      rounds.fullRead.push(await watched(() => loader.check()));
      await importBook(
        {
          prices: [{ product_key: 'compute.bench0.0', unit_type: 'seconds', unit_count: 3600, amount: `${round}.5` }],
        },
        url,
      );
      rounds.oneChange.push(await watched(() => loader.check()));
      // A version moved without a change-log entry: the loader reads everything again.
      await dataSource.query(
        `WITH moved AS (UPDATE price_book_version SET version = version + 1 RETURNING 1) SELECT 1`,
      );
      rounds.fullReadAgain.push(await watched(() => loader.check()));
      const list = state.priceList();
      bodies = Object.fromEntries(CODINGS.map((coding) => [coding, list.ok[coding].body]));
    } finally {
      loader.onApplicationShutdown();
    }
    log(
      `round ${round}: ${Object.entries(rounds)
        .map(
          ([k, runs]) =>
            `${k} ${runs.at(-1).ms.toFixed(0)} ms (worst delay ${runs.at(-1).worstDelayMs.toFixed(0)}, longest run ${runs.at(-1).longestRunMs.toFixed(0)})`,
        )
        .join('; ')}`,
    );
  }
  return {
    ...Object.fromEntries(Object.entries(rounds).map(([k, runs]) => [k, summary(runs)])),
    encodedBytes: Object.fromEntries(CODINGS.map((c) => [c, bodies[c].length])),
    bodies,
  };
}

/** gzip and brotli as the app codes the list, on this thread. */
function compress(body) {
  return [gzipSync(body), brotli(brotliQualityFor(body.length))(body)];
}

function brotli(quality) {
  return (body) =>
    brotliCompressSync(body, {
      params: {
        [zlib.BROTLI_PARAM_QUALITY]: quality,
        [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
        [zlib.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    });
}

function measureEncodings(body) {
  const time = (encode) => {
    const runs = [];
    let bytes;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      bytes = encode(body).length;
      runs.push(performance.now() - t);
    }
    return { bytes, ms: median(runs) };
  };
  return {
    identity: { bytes: body.length, ms: 0 },
    'gzip (level 6)': time(gzipSync),
    ...Object.fromEntries(
      [2, 3, 4, 5, 6].map((q) => [
        `br quality ${q}${q === brotliQualityFor(body.length) ? ' (used)' : ''}`,
        time(brotli(q)),
      ]),
    ),
  };
}

/**
 * The app's req/s per coding, interleaved with a bare node:http server in this process serving
 * the same bytes: what the transport and the load generator allow for bodies of these sizes.
 */
async function measureServing(url, bodies) {
  const app = await startApp(url, { PRICING_RATE_LIMIT: '100000000' }, { memoryProbe: true });
  const bare = createServer((req, res) => {
    const coding = CODINGS.includes(req.headers['accept-encoding']) ? req.headers['accept-encoding'] : 'identity';
    const body = bodies[coding];
    const encoding = coding === 'identity' ? {} : { 'content-encoding': coding };
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, ...encoding });
    res.end(body);
  });
  await new Promise((listening) => bare.listen(0, '127.0.0.1', listening));
  try {
    const bytes = {};
    for (const coding of CODINGS) {
      const res = await get(app.port, '/v1/pricing', { 'accept-encoding': coding });
      if (res.status !== 200 || (res.headers['content-encoding'] ?? 'identity') !== coding)
        throw new Error(`the app did not answer in ${coding}`);
      bytes[coding] = res.length;
    }
    const memoryAfterStart = { rssMiB: rss(app), ...(await app.memory()) };
    const runs = {};
    const bareRuns = {};
    const run = (port, coding) =>
      load({
        url: `http://127.0.0.1:${port}/v1/pricing`,
        headers: { 'accept-encoding': coding },
        connections: CONNECTIONS,
        warmup: WARMUP_S,
        duration: DURATION_S,
      });
    for (const coding of CODINGS) {
      runs[coding] = await run(app.port, coding);
      bareRuns[coding] = await run(bare.address().port, coding);
      log(`${coding}: app ${runs[coding].rps.toFixed(0)} req/s, node:http ${bareRuns[coding].rps.toFixed(0)} req/s`);
    }
    const memoryAfterLoad = { rssMiB: rss(app), ...(await app.memory()) };
    return { bytes, runs, bareRuns, memoryAfterStart, memoryAfterLoad };
  } finally {
    bare.close();
    await app.stop();
  }
}

function rss(app) {
  return rssMiB(app.child.pid);
}

function markdown(r) {
  const ms = (v) => (v === null || v === undefined ? '–' : v < 10 ? v.toFixed(1) : v.toFixed(0));
  const rows = [
    ['without slices: read, then list, serialize, hash on the event loop', r.rebuilds.synchronous],
    ['the same with gzip and brotli on the event loop', r.rebuilds.synchronousCompressed],
    ['PriceBookLoader: first load (list prices, then every price)', r.rebuilds.fullRead],
    ['PriceBookLoader: after a change of one price (incremental read)', r.rebuilds.oneChange],
    ['PriceBookLoader: full read again (version moved by hand)', r.rebuilds.fullReadAgain],
  ];
  const { runs, bareRuns } = r.serving;
  const loader = rows.slice(2).map(([, s]) => s);
  const worst = Math.max(...loader.map((s) => s.worstDelayMs));
  const longestRun = Math.max(...loader.map((s) => s.longestRunMs));
  return [
    `Run of ${r.when}, Node ${r.node}, ${r.cpus} CPUs, load average ${r.loadBefore.toFixed(1)} before and ${r.loadAfter.toFixed(1)} after; ${r.prices.toLocaleString('en')} prices (CLI import ${(r.importMs / 1000).toFixed(1)} s); median of ${ROUNDS} rounds.`,
    '',
    '| rebuild | time ms | worst event-loop delay ms (wall) | longest run between two turns ms (CPU) | of the longest gap, waiting for a CPU ms |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      ([name, s]) => `| ${name} | ${ms(s.ms)} | ${ms(s.worstDelayMs)} | ${ms(s.longestRunMs)} | ${ms(s.waitingMs)} |`,
    ),
    '',
    `Target: the loader's worst event-loop delay ≤ ${MAX_DELAY_MS} ms: ${ms(worst)} ms, ${worst <= MAX_DELAY_MS ? 'met' : 'MISSED'} ` +
      `(its main thread ran at most ${ms(longestRun)} ms on a CPU between two turns of the loop).`,
    '',
    '| encoding of the body | bytes | time ms |',
    '| --- | --- | --- |',
    ...Object.entries(r.encodings).map(([name, e]) => `| ${name} | ${e.bytes.toLocaleString('en')} | ${ms(e.ms)} |`),
    '',
    `| 200, ${r.prices.toLocaleString('en')} prices | body bytes | app req/s | × identity | p50 ms | p99 ms | body MB/s | node:http req/s | × identity |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...CODINGS.map((c) => {
      const [app, bare] = [runs[c], bareRuns[c]];
      const times = (rps, base) => `${(rps / base.identity.rps).toFixed(1)}×`;
      return `| ${c} | ${r.serving.bytes[c].toLocaleString('en')} | ${app.rps.toFixed(0)} | ${times(app.rps, runs)} | ${ms(app.p50)} | ${ms(app.p99)} | ${((app.rps * r.serving.bytes[c]) / 1e6).toFixed(0)} | ${bare.rps.toFixed(0)} | ${times(bare.rps, bareRuns)} |`;
    }),
    '',
    `Encoded copies held by the app: ${MiB(r.rebuilds.encodedBytes.gzip + r.rebuilds.encodedBytes.br)} MiB ` +
      `(gzip ${MiB(r.rebuilds.encodedBytes.gzip)}, br ${MiB(r.rebuilds.encodedBytes.br)}) beside the ${MiB(r.rebuilds.encodedBytes.identity)} MiB JSON.`,
    `App memory after start: RSS ${r.serving.memoryAfterStart.rssMiB.toFixed(0)} MiB, heap used ${MiB(r.serving.memoryAfterStart.heapUsed)} MiB (after a full GC); after the load: RSS ${r.serving.memoryAfterLoad.rssMiB.toFixed(0)} MiB.`,
    '',
  ].join('\n');
}
