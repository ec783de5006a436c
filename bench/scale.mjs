// `npm run bench:scale`: the price book at 10,000, 100,000 and 1,000,000 records (at most 10,000
// list prices in force, the rest organization prices), through the built CLI and the built app,
// each size in a scratch database of its own. It reports; it never fails the test suite.
// Method, goals and latest figures: docs/benchmarks.md, "A large price book".
//
// Per size: the whole import against PostgreSQL's COPY of the same rows into a twin of
// price_record (its constraints and indexes), and beside it with the change-log rows the import
// also writes (each with its effect and hash) copied into a twin of price_change; an import of one changed price against the same
// import into an empty book; the app's start-up until its first 200 of /v1/pricing (and the CPU
// time it used until then), and its RSS once loaded and settled (settledRssMiB); the worst event-loop delay of the app while a change is applied, the longest its
// main thread ran between two turns of the loop and how long it waited for a CPU in the longest
// gap (bench/app-probe.mjs), and the time from the CLI's
// exit until the app serves the change; PricingService.priceAt and
// costOfUsage calls per second in this process, on the same book.
// Knobs (environment): BENCH_SCALE_SIZES (10000,100000,1000000), BENCH_SCALE_CHANGES (3),
// DATABASE_URL (else a throwaway embedded PostgreSQL).
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  cli,
  cpuMs,
  DIST,
  get,
  intEnv,
  log,
  median,
  requireFromRoot,
  rssMiB,
  runMain,
  scratchDatabase,
  untilApplied,
  scratchDir,
  openDataSource,
  peakRssMiB,
  startApp,
  withClient,
} from './support.mjs';

const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const CHANGES = intEnv('BENCH_SCALE_CHANGES', 3);
const MAX_LIST_PRICES = 10_000;
const SETTLE_MS = 10_000;
const VALID_FROM = '2026-01-01T00:00:00Z';
const COLUMNS = 'product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until, recorded_at';
const CHANGE_COLUMNS = 'changed_at, product_key, organization_id, change, price_record_id, actor, effect, hash';

const GOALS = {
  importOverCopy: 2,
  oneChangeOverEmptyMs: 1_000,
  startMs: 5_000,
  rssMiB: 384,
  reloadDelayMs: 50,
  // A change takes effect at its publication instant, about a second after the write begins
  // (docs/operations.md, "One clock"): served within 1.5 s of the CLI's exit. 500 ms before that rule.
  changeServedMs: 1_500,
};

const listKey = (i) => `compute.s${Math.floor(i / 1000)}.${i % 1000}`;
const amount = (i) => `0.${String(1000 + (i % 9000)).padStart(4, '0')}`;

/** A book of `size` records written as the CLI's file, and the same rows as COPY text. */
async function writeBook(size, dir) {
  const lists = Math.min(MAX_LIST_PRICES, Math.floor(size / 10));
  const recordedAt = new Date().toISOString();
  const recordedMicros = String(BigInt(Date.parse(recordedAt)) * 1000n);
  const validFromMicros = String(BigInt(Date.parse(VALID_FROM)) * 1000n);
  const file = join(dir, `book-${size}.json`);
  // Built in parts: a 1,000,000-record book is about 150 MB of JSON.
  const parts = ['{"prices":[\n'];
  const copy = [];
  const changes = [];
  for (let i = 0; i < size; i++) {
    const key = listKey(i % lists);
    const organization = i < lists ? null : `org_${Math.floor(i / lists)}`;
    const entry = {
      product_key: key,
      unit_type: 'seconds',
      unit_count: 3600,
      amount: amount(i),
      valid_from: VALID_FROM,
    };
    if (organization) entry.organization_id = organization;
    parts.push(`${i === 0 ? '' : ',\n'}${JSON.stringify(entry)}`);
    copy.push(`${key}\t${organization ?? '\\N'}\tseconds\t3600\t${amount(i)}\t${VALID_FROM}\t\\N\t${recordedAt}\n`);
    // What the import's row holds: the record as written (change-log-chain.ts) and a SHA-256.
    const effect = JSON.stringify({
      record: {
        amount: amount(i),
        id: String(i + 1),
        organization_id: organization,
        product_key: key,
        recorded_at: recordedMicros,
        superseded_by: null,
        unit_count: '3600',
        unit_type: 'seconds',
        valid_from: validFromMicros,
        valid_until: null,
      },
    });
    const hash = createHash('sha256').update(effect).digest('hex');
    changes.push(`${recordedAt}\t${key}\t${organization ?? '\\N'}\tset\t${i + 1}\tbench\t${effect}\t${hash}\n`);
  }
  parts.push('\n]}\n');
  await writeFile(file, parts.join(''));
  return { file, lists, copyText: copy.join(''), changeText: changes.join('') };
}

/** Runs the built CLI and returns its wall time (ms) and output; throws when it fails. */
async function timedCli(args, url) {
  const started = performance.now();
  const out = await cli(args, url);
  return { ms: performance.now() - started, out };
}

/**
 * COPY of the rows into a twin of price_record (its constraints and indexes), and of the
 * change-log rows an import also writes, one per record, into a twin of price_change; the twins
 * are dropped after. Milliseconds of each.
 */
async function timeCopy(url, copyText, changeText, size) {
  const { from: copyFrom } = requireFromRoot('pg-copy-streams');
  const copyInto = (client, table, columns, text) =>
    pipeline(Readable.from([text]), client.query(copyFrom(`COPY ${table} (${columns}) FROM STDIN`)));
  return withClient(url, async (client) => {
    await client.query(`CREATE TABLE price_record_twin (LIKE price_record INCLUDING ALL)`);
    await client.query(`CREATE TABLE price_change_twin (LIKE price_change INCLUDING ALL)`);
    // The log's ids come from a sequence its seal trigger reads (migration 1764000011000), which a
    // twin does not copy: a sequence of its own, as a default.
    await client.query(`CREATE SEQUENCE price_change_twin_id`);
    await client.query(`ALTER TABLE price_change_twin ALTER COLUMN id SET DEFAULT nextval('price_change_twin_id')`);
    let started = performance.now();
    await copyInto(client, 'price_record_twin', COLUMNS, copyText);
    const recordsMs = performance.now() - started;
    started = performance.now();
    await copyInto(client, 'price_change_twin', CHANGE_COLUMNS, changeText);
    const changesMs = performance.now() - started;
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM price_record_twin`);
    if (rows[0].n !== size) throw new Error(`COPY stored ${rows[0].n} rows, not ${size}`);
    await client.query(`DROP TABLE price_record_twin, price_change_twin`);
    await client.query(`DROP SEQUENCE price_change_twin_id`);
    return { recordsMs, changesMs };
  });
}

/** A book of one change: a new list price of key `i` from `validFrom`. */
async function oneChange(dir, i, validFrom) {
  const file = join(dir, `change-${i}-${validFrom.slice(0, 10)}.json`);
  const entry = {
    product_key: listKey(i),
    unit_type: 'seconds',
    unit_count: 3600,
    amount: '9.9999',
    valid_from: validFrom,
  };
  await writeFile(file, JSON.stringify({ prices: [entry] }));
  return file;
}

/** Instants a day apart, from a year ahead: each change is a scheduled one the book accepts. */
const ahead = (n) => new Date(Date.now() + (365 + n) * 86_400_000).toISOString().slice(0, 10) + 'T00:00:00Z';

/** Calls of `work` per second over about half a second, after a warm-up. */
function callsPerSecond(work) {
  for (let i = 0; i < 20_000; i++) work(i);
  let calls = 0;
  const started = performance.now();
  while (performance.now() - started < 500) {
    for (let i = 0; i < 1_000; i++) work(calls + i);
    calls += 1_000;
  }
  return (calls * 1000) / (performance.now() - started);
}

/**
 * What an instance's start-up spends on the book, in this process with the built library: reading
 * every record (PriceSnapshotReads.loadPricingData, in pages) and indexing them into a snapshot
 * (PricingSnapshot.build). Milliseconds of each.
 */
async function loadBreakdown(url) {
  const { PriceSnapshotReads } = requireFromRoot(join(DIST, 'libs/pricing/src/database/price-snapshot-reads.js'));
  const { PricingSnapshot } = requireFromRoot(join(DIST, 'libs/pricing/src/snapshot/pricing-snapshot.js'));
  const dataSource = await openDataSource(url);
  let started = performance.now();
  const data = await new PriceSnapshotReads(dataSource).loadPricingData();
  const readMs = performance.now() - started;
  started = performance.now();
  await PricingSnapshot.build(data, Date.now());
  const indexMs = performance.now() - started;
  await dataSource.destroy();
  return { readMs, indexMs };
}

/** PricingService in this process, on the book at `url` (the built library, as a host module uses it). */
async function serviceCalls(url, lists, size) {
  const { NestFactory } = requireFromRoot('@nestjs/core');
  const { AppModule, loadConfig } = requireFromRoot(join(DIST, 'apps/control-plane/src/index.js'));
  const { PricingService } = requireFromRoot(join(DIST, 'libs/pricing/src/index.js'));
  const { DatabaseConnection } = requireFromRoot(join(DIST, 'libs/database/src/index.js'));
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'error', METRICS_PORT: 'off' });
  const app = await NestFactory.create(AppModule.forRoot(config, url), { logger: ['error'], bodyParser: false });
  try {
    await app.init();
    await app.get(DatabaseConnection).whenReady();
    const pricing = app.get(PricingService);
    await pricing.refresh();
    const at = new Date('2026-06-01T00:00:00Z');
    const organizations = Math.max(1, Math.floor(size / lists) - 1);
    const query = (i) => ({ at, organizationId: `org_${1 + (i % organizations)}` });
    const usage = { from: new Date('2026-02-01T00:00:00Z'), to: new Date('2026-03-01T00:00:00Z') };
    const check = pricing.priceAt(listKey(1), query(0));
    if (!check.found) throw new Error(`priceAt found no price for ${listKey(1)}`);
    return {
      priceAt: callsPerSecond((i) => pricing.priceAt(listKey(i % lists), query(i))),
      costOfUsage: callsPerSecond((i) => pricing.costOfUsage(listKey(i % lists), usage, query(i))),
    };
  } finally {
    await app.close();
  }
}

/**
 * The app's RSS once settled: 10 s on, after a full garbage collection. For seconds after a load,
 * V8 and malloc still hold pages the load freed and give them back as they go idle (RSS 1 s after
 * loading is also reported); what a book costs to hold is what stays.
 */
async function settledRssMiB(app) {
  await sleep(SETTLE_MS);
  await app.memory();
  return rssMiB(app.child.pid);
}

async function measureSize(size, dir, emptyUrl) {
  log(`${size}: writing the book`);
  const { file, lists, copyText, changeText } = await writeBook(size, dir);
  const url = await scratchDatabase(`bench_scale_${size}`);

  log(`${size}: importing the whole book with the CLI`);
  const whole = await timedCli(['import', file], url);
  if (!/\(version 2\)\n$/.test(whole.out))
    throw new Error(`the import did not end as expected:\n${whole.out.slice(-500)}`);
  const summary = whole.out.trimEnd().split('\n').at(-1);
  log(`${size}: ${summary}`);
  log(`${size}: COPY of the same rows into a twin of price_record`);
  const { recordsMs: copyMs, changesMs: copyChangesMs } = await timeCopy(url, copyText, changeText, size);

  log(`${size}: imports of one change, beside the same into an empty book`);
  const oneMs = [];
  const emptyMs = [];
  let lastOut = whole.out;
  for (let n = 0; n < CHANGES; n++) {
    const one = await timedCli(['import', await oneChange(dir, n, ahead(n))], url);
    oneMs.push(one.ms);
    lastOut = one.out;
    emptyMs.push((await timedCli(['import', await oneChange(dir, size + n, ahead(n))], emptyUrl)).ms);
  }
  // The changes timed below are served from their publication instants, which follow these
  // writes': a large import publishes minutes after it began (docs/operations.md, "One clock").
  log(`${size}: waiting until the writes take effect (${/applied at (\S+):/.exec(lastOut)?.[1] ?? 'now'})`);
  await untilApplied(lastOut);

  log(`${size}: starting the app`);
  const started = performance.now();
  // No rate limit: the changes below poll /v1/pricing without pause, and a 429 has no ETag (with
  // the default limit, a third change's polling could see nothing but 429s for 30 s).
  const app = await startApp(
    url,
    { LOG_LEVEL: 'debug', PRICING_RATE_LIMIT: '1000000' },
    { memoryProbe: true, logLines: true },
  );
  while ((await get(app.port).catch(() => undefined))?.status !== 200) await sleep(20);
  const startMs = performance.now() - started;
  const startCpuMs = cpuMs(app.child.pid); // every thread's, from /proc: what the machine's load does not inflate
  // The list prices are read first (snapshot/price-book-loader.ts); every price, organizations'
  // included, when the loader says so.
  const everyPriceMs = (await app.logged(/PriceBookLoader.*loaded \(\d+ records\)/)) - started;
  await sleep(1_000);
  const heap = (await app.memory()).heapUsed / 1024 / 1024; // after a full garbage collection
  const firstRss = rssMiB(app.child.pid);
  const rss = await settledRssMiB(app);

  log(`${size}: changes applied while the app runs`);
  const delays = [];
  const holds = [];
  const served = [];
  for (let n = 0; n < CHANGES; n++) {
    const first = await get(app.port);
    if (first.status !== 200) throw new Error(`GET /v1/pricing answered ${first.status}`);
    const before = first.headers.etag;
    await app.eventLoopDelay(); // resets the probe's histogram
    await app.cpuHold(); // and its CPU holds
    await timedCli(['import', await oneChange(dir, 2 * size + n, ahead(100 + n))], url);
    const exited = performance.now();
    while ((await get(app.port)).headers.etag === before) {
      if (performance.now() - exited > 30_000)
        throw new Error(
          `the change was not served within 30 s; the app's log ends:\n${app.lines().slice(-30).join('\n')}`,
        );
      await sleep(5);
    }
    served.push(performance.now() - exited);
    await sleep(1_000); // whatever the reload still does after the change is served
    delays.push(await app.eventLoopDelay());
    holds.push(await app.cpuHold());
  }
  const afterRss = await settledRssMiB(app);
  const peakRss = peakRssMiB(app.child.pid);
  await app.stop();

  log(`${size}: reading and indexing the book in this process`);
  const load = await loadBreakdown(url);
  log(`${size}: PricingService calls in this process`);
  const calls = await serviceCalls(url, lists, size);
  return {
    size,
    lists,
    importMs: whole.ms,
    copyMs,
    copyChangesMs,
    oneMs: median(oneMs),
    emptyMs: median(emptyMs),
    startMs,
    startCpuMs,
    everyPriceMs,
    firstRss,
    rss,
    afterRss,
    peakRss,
    heap,
    reloadDelayMs: Math.max(...delays),
    reloadHoldMs: Math.max(...holds.map((h) => h.holdMs)),
    // The longest gap between two turns of the loop, and how much of it was waiting for a CPU.
    reloadGap: holds.reduce((worst, h) => (h.gapMs > worst.gapMs ? h : worst)),
    changeServedMs: median(served),
    ...load,
    ...calls,
  };
}

const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
const n = (value) => Math.round(value).toLocaleString('en-US');
const signed = (ms) => `${ms < 0 ? '−' : '+'}${s(Math.abs(ms))}`;
const verdict = (met) => (met ? 'met' : '**missed**');

function markdown(results) {
  const lines = [
    `${new Date().toISOString()}, Node.js ${process.version}, ${cpus().length} CPUs, load ${loadavg()[0].toFixed(2)}; ` +
      `${CHANGES} changes per size (median; the worst for the event loop). RSS after a full garbage collection, settled (10 s on; in brackets 1 s after loading); peak: VmHWM.`,
    '',
    '| records (list prices) | whole import | COPY into a twin | import ÷ COPY | COPY of the change log too | import ÷ both | one change | same, empty book | start to first 200 (app CPU); to every price (read, index) | RSS loaded (1 s after), after changes (peak) | heap used | worst loop delay, reload (longest CPU run) | change served after exit | priceAt / s | costOfUsage / s |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    lines.push(
      `| ${n(r.size)} (${n(r.lists)}) | ${s(r.importMs)} | ${s(r.copyMs)} | ${(r.importMs / r.copyMs).toFixed(2)}× | ${s(r.copyMs + r.copyChangesMs)} | ${(r.importMs / (r.copyMs + r.copyChangesMs)).toFixed(2)}× | ${s(r.oneMs)} | ${s(r.emptyMs)} | ` +
        `${s(r.startMs)} (${s(r.startCpuMs)}); ${s(r.everyPriceMs)} (${s(r.readMs)}, ${s(r.indexMs)}) | ${r.rss.toFixed(0)} (${r.firstRss.toFixed(0)}), ${r.afterRss.toFixed(0)} MiB (${r.peakRss.toFixed(0)}) | ${r.heap.toFixed(0)} MiB | ${r.reloadDelayMs.toFixed(1)} ms (${r.reloadHoldMs.toFixed(1)}) | ` +
        `${r.changeServedMs.toFixed(0)} ms | ${n(r.priceAt)} | ${n(r.costOfUsage)} |`,
    );
  }
  const largest = results.at(-1);
  lines.push(
    '',
    `Goals at ${n(largest.size)} records:`,
    `- whole import ≤ ${GOALS.importOverCopy}× COPY: ${(largest.importMs / largest.copyMs).toFixed(2)}×, ${verdict(largest.importMs <= GOALS.importOverCopy * largest.copyMs)} ` +
      `(${(largest.importMs / (largest.copyMs + largest.copyChangesMs)).toFixed(2)}× COPY of the records and their change-log rows)`,
    `- one change ≤ 1 s beside an empty book: ${signed(largest.oneMs - largest.emptyMs)}, ${verdict(largest.oneMs - largest.emptyMs <= GOALS.oneChangeOverEmptyMs)}`,
    `- start-up to the first 200 ≤ 5 s: ${s(largest.startMs)}, ${verdict(largest.startMs <= GOALS.startMs)} ` +
      `(the app's CPU time until then, every thread: ${s(largest.startCpuMs)}; every price, organizations' included, loaded at ${s(largest.everyPriceMs)})`,
    `- RSS ≤ ${GOALS.rssMiB} MiB (after a garbage collection, settled): ${largest.rss.toFixed(0)} MiB loaded (${largest.firstRss.toFixed(0)} 1 s after loading), ${largest.afterRss.toFixed(0)} MiB after the changes, ` +
      `${verdict(Math.max(largest.rss, largest.afterRss) <= GOALS.rssMiB)}; the most it held: ${largest.peakRss.toFixed(0)} MiB, while loading`,
    `- worst event-loop delay during a reload ≤ ${GOALS.reloadDelayMs} ms: ${largest.reloadDelayMs.toFixed(1)} ms, ${verdict(largest.reloadDelayMs <= GOALS.reloadDelayMs)} ` +
      `(the main thread ran at most ${largest.reloadHoldMs.toFixed(1)} ms between two turns of the loop; ` +
      `${largest.reloadGap.waitingMs.toFixed(1)} ms of the longest gap, ${largest.reloadGap.gapMs.toFixed(1)} ms, it waited for a CPU)`,
    `- change served ≤ ${GOALS.changeServedMs} ms after the CLI exits: ${largest.changeServedMs.toFixed(0)} ms, ${verdict(largest.changeServedMs <= GOALS.changeServedMs)}`,
  );
  return lines.join('\n');
}

await runMain(async () => {
  const dir = await scratchDir();
  const emptyUrl = await scratchDatabase('bench_scale_empty');
  const results = [];
  for (const size of SIZES) results.push(await measureSize(size, dir, emptyUrl));
  process.stdout.write(`${markdown(results)}\n`);
});
