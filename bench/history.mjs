// `npm run bench:history`: what the list's past costs (docs/decisions.md, "One clock"), each figure
// with its target (docs/benchmarks.md, "The list's past"). It reports; it never fails the tests.
//
// 1. Five years of monthly changes: 10,000 list prices, 60 versions each (about 1.2 million
//    change-log rows), written in SQL as the past (no import dates a change months back): the
//    built app's start-up to its first 200, its RSS settled (10 s after the feed is hashed, after
//    two full collections; and before them, as an idle instance holds it), the
//    first /changes page, an /at of a version not prepared yet (and the event loop meanwhile), and
//    a one-price change ready after its commit (the app's log says when it loaded it) with the
//    worst event-loop delay meanwhile; then the same again with the tables' statistics as a bulk
//    import leaves them (none).
// 2. 100,000 list prices: the worst /health/live wait during the first load (both its reads, asked
//    from the spawn on), the worst of three starts; a one-price change right after start-up, ready
//    after its commit; 1,000 distinct instants over three versions and one instant in each of 100
//    versions: one document per version (the app's metrics), RSS growth within the budget of
//    prepared answers.
// Knobs (environment): BENCH_HISTORY_KEYS (10000), BENCH_HISTORY_VERSIONS (60), BENCH_HISTORY_LARGE
// (100000), BENCH_HISTORY_FIRST_LOADS (3: starts whose first load is measured, the worst counts),
// DATABASE_URL (else a throwaway embedded PostgreSQL).
/* global fetch */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  freePort,
  get,
  importBook,
  intEnv,
  log,
  rssMiB,
  runMain,
  scratchDatabase,
  startApp,
  timedGet,
  withClient,
} from './support.mjs';

const KEYS = intEnv('BENCH_HISTORY_KEYS', 10_000);
const VERSIONS = intEnv('BENCH_HISTORY_VERSIONS', 60);
const LARGE = intEnv('BENCH_HISTORY_LARGE', 100_000);
/** Starts whose first load is measured at LARGE (the worst counts): one start's waits vary by half. */
const FIRST_LOADS = intEnv('BENCH_HISTORY_FIRST_LOADS', 3);
const PAST_VERSIONS = 100;
const SETTLE_MS = 10_000;
const BUDGET_MIB = 64;

const GOALS = {
  startMs: 5_000,
  rssMiB: 384,
  readyMs: 500,
  waitMs: 50,
  firstPageMs: 50,
  newVersionMs: 200,
};

const key = (i) => `compute.h${Math.floor(i / 1000)}.${i % 1000}`;

/**
 * A book's past in SQL, as its writes would have left it, but dated months back: `keys` list prices
 * written at version 0, then `versions - 1` writes each re-pricing `perVersion` keys (the first
 * ones after the last re-priced, round robin), `stepMs` apart, each taking effect two weeks after
 * it was written, all in the past. Records carry their end's change (end_set_at...), the log an
 * entry per record set and ended with what the loader reads of it (ids and ends: not what `verify`
 * checks), price_book_write a row per write. The owner's triggers set aside, as a restore would.
 */
async function writePast(url, { keys, versions, perVersion, stepMs, analyze }) {
  const firstMs = Date.now() - versions * stepMs - 30 * 86_400_000;
  return withClient(url, async (client) => {
    const q = (sql, parameters = []) => client.query(sql, parameters);
    await q('BEGIN');
    await q('SET LOCAL session_replication_role = replica');
    await q('ALTER TABLE price_change DISABLE TRIGGER price_change_seal');
    await q('ALTER TABLE price_book_write DISABLE TRIGGER price_book_write_in_time');
    await q(
      `CREATE TEMP TABLE planned (id bigint, key int, version int, next_id bigint, next_version int) ON COMMIT DROP`,
    );
    // Version 0 prices every key; version v re-prices keys (v-1)*perVersion .. v*perVersion - 1 (mod keys).
    // Each row's successor (the key's next version) by a window: a subquery per row is quadratic.
    await q(
      `INSERT INTO planned
       SELECT id, k, v, lead(id) OVER w, lead(v) OVER w FROM (
         SELECT row_number() OVER (ORDER BY v, k) AS id, k, v FROM (
           SELECT 0 AS v, k FROM generate_series(0, $1 - 1) k
           UNION ALL
           SELECT v, ((v - 1) * $2 + j) % $1 FROM generate_series(1, $3 - 1) v, generate_series(0, $2 - 1) j) x) y
       WINDOW w AS (PARTITION BY k ORDER BY v)`,
      [keys, perVersion, versions],
    );
    const instant = (version) =>
      `(to_timestamp($1::float8 / 1000) + make_interval(secs => ${version} * $2::float8 / 1000))`;
    const at = instant('p.version');
    const from = `(${at} + interval '14 days')`;
    // NULL for a key's last version: make_interval is strict.
    const nextAt = instant('p.next_version');
    const nextFrom = `(${nextAt} + interval '14 days')`;
    await q(
      `INSERT INTO price_record (id, product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until,
                                 recorded_at, superseded_by, end_set_at, end_before, end_changes)
       OVERRIDING SYSTEM VALUE
       SELECT p.id, 'compute.h' || (p.key / 1000) || '.' || (p.key % 1000), NULL, 'seconds', 3600,
              ('0.' || lpad(((p.key * 7 + p.version * 13) % 9000 + 1000)::text, 4, '0'))::numeric,
              ${from}, ${nextFrom}, ${at}, p.next_id, ${nextAt}, NULL, CASE WHEN p.next_id IS NULL THEN 0 ELSE 1 END
         FROM planned p`,
      [firstMs, stepMs],
    );
    // The rows the migrations logged (availability) come after the past, as they were written after it.
    await q(`CREATE TEMP TABLE migrated ON COMMIT DROP AS SELECT * FROM price_change`);
    await q('ALTER TABLE price_change DISABLE TRIGGER price_change_append_only');
    await q(`DELETE FROM price_change`);
    const micros = (sql) => `(extract(epoch FROM ${sql}) * 1000000)::bigint::text`;
    await q(
      `INSERT INTO price_change (id, changed_at, product_key, organization_id, change, price_record_id, actor, effect, hash, chain_rule)
       SELECT row_number() OVER (ORDER BY e.at, e.id, e.kind), e.at, e.product_key, NULL, e.change, e.id, 'bench', e.effect,
              repeat('0', 64), 2
         FROM (
           SELECT r.recorded_at AS at, r.id, 1 AS kind, r.product_key, 'set' AS change,
                  jsonb_build_object('record', jsonb_build_object('id', r.id::text, 'valid_until', NULL)) AS effect
             FROM price_record r
           UNION ALL
           SELECT r.end_set_at, r.id, 0, r.product_key, 'end',
                  jsonb_build_object('ends', jsonb_build_array(
                    jsonb_build_object('id', r.id::text, 'valid_until', ${micros('r.valid_until')})))
             FROM price_record r WHERE r.end_changes = 1) e`,
    );
    await q(`UPDATE migrated SET id = id + (SELECT max(id) FROM price_change)`);
    await q(`INSERT INTO price_change SELECT * FROM migrated`);
    await q(
      `INSERT INTO price_book_write (xid, published_at, began_at)
       SELECT (4611686018427387904 + v)::text::xid8, to_timestamp($1::float8 / 1000) + make_interval(secs => v * $2::float8 / 1000),
              to_timestamp($1::float8 / 1000) + make_interval(secs => v * $2::float8 / 1000) - interval '1 second'
         FROM generate_series(0, $3 - 1) v`,
      [firstMs, stepMs, versions],
    );
    await q(`SELECT setval(pg_get_serial_sequence('price_record', 'id'), (SELECT max(id) FROM price_record))`);
    await q(`SELECT setval('price_change_id', (SELECT max(id) FROM price_change))`);
    await q(
      `UPDATE price_book_version SET version = version + $1, record_count = (SELECT count(*) FROM price_record)`,
      [versions],
    );
    await q('ALTER TABLE price_change ENABLE ALWAYS TRIGGER price_change_seal');
    await q('ALTER TABLE price_change ENABLE ALWAYS TRIGGER price_change_append_only');
    await q('ALTER TABLE price_book_write ENABLE ALWAYS TRIGGER price_book_write_in_time');
    await q('COMMIT');
    if (analyze) await q('ANALYZE');
    else {
      // As a bulk import leaves them: no statistics, and none gathered while the bench runs.
      for (const table of ['price_record', 'price_change', 'price_book_write']) {
        await q(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
      }
    }
    const { rows } = await q(`SELECT count(*)::int AS n FROM price_change`);
    return rows[0].n;
  });
}

/** The worst time /health/live took to answer (ms) while `during` runs, asked every 10 ms. */
async function liveWaits(port, during) {
  let worst = 0;
  let done = false;
  const asking = (async () => {
    while (!done) {
      const started = performance.now();
      await get(port, '/health/live').catch(() => undefined);
      worst = Math.max(worst, performance.now() - started);
      await sleep(10);
    }
  })();
  let result;
  try {
    result = await during();
  } finally {
    done = true;
    await asking; // the ask in flight when `during` ended counts too
  }
  return { result, worstMs: worst };
}

/** One price of `key(i)` changed from the write's instant on, through the built CLI; ms from its exit until the app loaded it. */
async function oneChange(app, url, i, amount) {
  const book = { prices: [{ product_key: key(i), unit_type: 'seconds', unit_count: 3600, amount }] };
  const out = await importBook(book, url);
  const exited = performance.now();
  const version = /\(version (\d+)\)/.exec(out)[1];
  const loaded = await app.logged(new RegExp(`prices ${version} loaded`));
  return { readyMs: loaded - exited, publishedAt: /applied at (\S+):/.exec(out)[1] };
}

const ms = (value) => `${value.toFixed(0)} ms`;
const verdict = (met) => (met ? 'met' : 'NOT met');

async function fiveYears(analyze) {
  const url = await scratchDatabase(analyze ? 'history_analyzed' : 'history_fresh');
  log(`writing ${KEYS} list prices × ${VERSIONS} versions ${analyze ? '(analyzed)' : '(no statistics)'}`);
  const rows = await writePast(url, {
    keys: KEYS,
    versions: VERSIONS,
    perVersion: KEYS,
    stepMs: 30 * 86_400_000,
    analyze,
  });
  log(`${rows} change-log rows; starting the app`);
  const started = performance.now();
  const app = await startApp(
    url,
    { LOG_LEVEL: 'debug', METRICS_PORT: 'off', PRICING_RATE_LIMIT: '1000000' },
    { memoryProbe: true, logLines: true },
  );
  const startMs = performance.now() - started;
  await app.logged(/prices \d+ loaded \(\d+ records\)/);
  // Settled is after the start-up's background work: the feed is hashed once every price is
  // loaded (about 10 s at five years), and until then its garbage and its slices count.
  await app.logged(/the feed's \d+ changes hashed/).catch(() => undefined);
  await sleep(SETTLE_MS);
  // What an idle instance holds before any collection: V8 collects on allocation, and an idle app
  // allocates little (reported beside the target, which is what is live).
  const idleMiB = rssMiB(app.child.pid);
  // Asked of the instance as it is, before the collections below: right after them, V8's young
  // generation is at its smallest, and the first request that allocates pays to grow it again.
  // Timed to the last byte as sent, not decoded (timedGet): decoding is the client's work.
  const firstPageMs = (await timedGet(app.port, '/v1/pricing/changes')).ms;
  await app.eventLoopDelay();
  const middle = new Date(Date.now() - (VERSIONS / 2) * 30 * 86_400_000).toISOString();
  const newVersionMs = (await timedGet(app.port, `/v1/pricing/at/${middle}`)).ms;
  const atDelay = await app.eventLoopDelay();
  await app.memory();
  // The pages a full collection frees are given back to the system by a thread of V8's, within
  // about a second: read right after it, RSS counts them (about 100 MiB more here).
  await sleep(2_000);
  const settledMiB = rssMiB(app.child.pid);
  // Both measures from here: the collections above held the event loop.
  await app.eventLoopDelay();
  await app.cpuHold();
  const change = await oneChange(app, url, 7, '0.9999');
  const changeDelay = await app.eventLoopDelay();
  const hold = await app.cpuHold();
  await app.stop();
  return { rows, startMs, idleMiB, settledMiB, firstPageMs, newVersionMs, atDelay, ...change, changeDelay, hold };
}

/** A counter or gauge of the app's /metrics, summed over its series. */
async function metric(port, name) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/**
 * The app started on `url`, its whole first load measured: /health/live asked from the spawn on
 * (refused until the app listens), through its read of the list prices and its second read
 * (organizations' prices: none here); beside the waits, how long the main thread ran between two
 * turns of the loop and V8's pauses (from the first request on: bench/app-probe.mjs).
 */
async function startMeasured(url) {
  const port = await freePort();
  const metricsPort = await freePort();
  const started = performance.now();
  let readyMs;
  const firstLoad = await liveWaits(port, async () => {
    const running = await startApp(
      url,
      {
        LOG_LEVEL: 'debug',
        METRICS_PORT: String(metricsPort),
        PRICING_RATE_LIMIT: '1000000',
        PORT: String(port),
        BENCH_PROBE_FROM_FIRST_REQUEST: '1',
      },
      { memoryProbe: true, logLines: true },
    );
    readyMs = performance.now() - started;
    await running.logged(/prices \d+ loaded \(\d+ records\)/);
    return running;
  });
  const app = firstLoad.result;
  return {
    app,
    metricsPort,
    readyMs,
    firstLoad: { worstMs: firstLoad.worstMs, hold: await app.cpuHold(), gc: await app.gcPauses() },
  };
}

async function large() {
  const url = await scratchDatabase('history_large');
  log(`writing ${LARGE} list prices and ${PAST_VERSIONS} versions of one price each`);
  await writePast(url, { keys: LARGE, versions: PAST_VERSIONS + 1, perVersion: 1, stepMs: 86_400_000, analyze: true });
  // The first loads before the last one: started and stopped again.
  const firstLoads = [];
  for (let n = 1; n < FIRST_LOADS; n++) {
    log(`starting the app (first load ${n} of ${FIRST_LOADS})`);
    const { app, firstLoad } = await startMeasured(url);
    await app.stop();
    firstLoads.push(firstLoad);
  }
  log('starting the app');
  const { app, metricsPort, readyMs, firstLoad } = await startMeasured(url);
  firstLoads.push(firstLoad);
  const rightAfter = await liveWaits(app.port, () => oneChange(app, url, 3, '0.5000'));
  await sleep(SETTLE_MS);
  await app.memory();
  const before = rssMiB(app.child.pid);
  // Three versions: the two one-price changes and the one before them; 1,000 instants over them.
  const second = await oneChange(app, url, 4, '0.6000');
  // Five seconds into the third version: the 1,000 instants (one every ~70 ms) sample each version.
  await sleep(Math.max(0, Date.parse(second.publishedAt) - Date.now()) + 5_000);
  const from = Date.parse(rightAfter.result.publishedAt) - 60_000;
  const to = Date.now();
  let prepared = await metric(metricsPort, 'pricing_past_answers_prepared_total');
  const tags = new Set();
  for (let n = 0; n < 1000; n++) {
    const at = new Date(from + Math.floor(((to - from) * n) / 1000)).toISOString();
    tags.add((await timedGet(app.port, `/v1/pricing/at/${at}`)).headers.etag);
  }
  const preparedOverThree = (await metric(metricsPort, 'pricing_past_answers_prepared_total')) - prepared;
  // One instant in each of the 100 versions of the past (writePast's: a day apart, the first 30 days before).
  const dayMs = 86_400_000;
  const firstMs = Date.now() - (PAST_VERSIONS + 1) * dayMs - 30 * dayMs;
  prepared = await metric(metricsPort, 'pricing_past_answers_prepared_total');
  const pastTags = new Set();
  let worstPastMs = 0;
  for (let v = 1; v <= PAST_VERSIONS; v++) {
    const at = new Date(firstMs + v * dayMs + 3_600_000).toISOString();
    const answer = await timedGet(app.port, `/v1/pricing/at/${at}`);
    pastTags.add(answer.headers.etag);
    worstPastMs = Math.max(worstPastMs, answer.ms);
  }
  const preparedPast = (await metric(metricsPort, 'pricing_past_answers_prepared_total')) - prepared;
  const keptMiB = (await metric(metricsPort, 'pricing_past_answers_bytes')) / 1024 / 1024;
  await app.memory();
  const after = rssMiB(app.child.pid);
  await app.stop();
  return {
    readyMs,
    firstLoads,
    rightAfter,
    versionsOverThree: tags.size,
    preparedOverThree,
    pastVersions: pastTags.size,
    preparedPast,
    worstPastMs,
    keptMiB,
    before,
    after,
  };
}

await runMain(async () => {
  const machine = `${cpus().length} cores, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
  log(`bench:history on ${machine}, ${new Date().toISOString()}`);
  const results = [];
  for (const analyze of [true, false]) results.push([analyze, await fiveYears(analyze)]);
  const big = await large();
  const worstLoad = big.firstLoads.reduce((worst, load) => (load.worstMs > worst.worstMs ? load : worst));
  const lines = [`bench:history, ${new Date().toISOString()}, ${machine}`];
  for (const [analyze, r] of results) {
    lines.push(
      `five years (${KEYS} × ${VERSIONS}, ${r.rows} log rows, ${analyze ? 'analyzed' : 'no statistics'}):`,
      `  start-up to the first 200: ${ms(r.startMs)} (target ≤ ${GOALS.startMs}: ${verdict(r.startMs <= GOALS.startMs)})`,
      `  RSS settled: ${r.settledMiB.toFixed(0)} MiB (target ≤ ${GOALS.rssMiB}: ${verdict(r.settledMiB <= GOALS.rssMiB)}); idle before any collection ${r.idleMiB.toFixed(0)} MiB`,
      `  first /changes page: ${ms(r.firstPageMs)} (target ≤ ${GOALS.firstPageMs}: ${verdict(r.firstPageMs <= GOALS.firstPageMs)})`,
      `  /at of a version not prepared: ${ms(r.newVersionMs)}, worst loop delay ${ms(r.atDelay)} (target ≤ ${GOALS.newVersionMs}: ${verdict(r.newVersionMs <= GOALS.newVersionMs)})`,
      `  one-price change ready after its commit: ${ms(r.readyMs)} (target ≤ ${GOALS.readyMs}: ${verdict(r.readyMs <= GOALS.readyMs)}); worst loop delay ${ms(r.changeDelay)} (target ≤ ${GOALS.waitMs}: ${verdict(r.changeDelay <= GOALS.waitMs)}), longest CPU run ${ms(r.hold.holdMs)} (the longest gap ${ms(r.hold.gapMs)}, waiting for a CPU ${ms(r.hold.waitingMs)} of it)`,
    );
  }
  lines.push(
    `${LARGE} list prices:`,
    `  worst /health/live wait during the first load, of ${big.firstLoads.length} starts: ${ms(worstLoad.worstMs)} (target ≤ ${GOALS.waitMs}: ${verdict(worstLoad.worstMs <= GOALS.waitMs)}); each start ${big.firstLoads.map((load) => ms(load.worstMs)).join(', ')}`,
    ...big.firstLoads.map(
      (load, n) =>
        `    start ${n + 1}: longest CPU run ${ms(load.hold.holdMs)} (the longest gap ${ms(load.hold.gapMs)}, waiting for a CPU ${ms(load.hold.waitingMs)} of it); V8's pauses ${ms(load.gc.longestMs)} at most, ${ms(load.gc.totalMs)} in all (${load.gc.count})`,
    ),
    `  one-price change right after start-up, ready after its commit: ${ms(big.rightAfter.result.readyMs)} (target ≤ ${GOALS.readyMs}: ${verdict(big.rightAfter.result.readyMs <= GOALS.readyMs)}); worst /health/live wait ${ms(big.rightAfter.worstMs)} (target ≤ ${GOALS.waitMs}: ${verdict(big.rightAfter.worstMs <= GOALS.waitMs)})`,
    `  1,000 instants over three versions: ${big.versionsOverThree} distinct ETags, ${big.preparedOverThree} documents prepared (one per version: ${verdict(big.preparedOverThree <= 3)})`,
    `  one instant in each of ${PAST_VERSIONS} versions: ${big.pastVersions} distinct ETags, ${big.preparedPast} documents prepared, the slowest ${ms(big.worstPastMs)}; ${big.keptMiB.toFixed(1)} MiB kept (budget ${BUDGET_MIB}: ${verdict(big.keptMiB <= BUDGET_MIB)}); RSS ${big.before.toFixed(0)} → ${big.after.toFixed(0)} MiB`,
  );
  console.log(lines.join('\n'));
});
