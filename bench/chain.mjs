// `npm run bench:chain`: the change log's hash chain at a million entries (docs/benchmarks.md,
// "The change log's chain"): migration ChangeLogChain1764000010000 on a log written before it,
// then `verify` of the book and its log, through the built CLI as an operator runs them. It
// reports; it never fails the test suite.
//
// A scratch database is migrated, then taken back before the chain (the migration's down); a book
// of BENCH_CHAIN_RECORDS records (10,000 list prices, the rest organizations' prices) and one
// change-log row each are written there in two statements, as writes before the chain left them.
// Then `migrate` chains them, and `verify` checks them: wall time, CPU and the peak RSS of its
// process (GNU time). Knobs: BENCH_CHAIN_RECORDS (1000000), DATABASE_URL (else a throwaway
// embedded PostgreSQL).
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIST, ROOT, intEnv, log, openDataSource, runMain, scratchDatabase, withClient } from './support.mjs';

const RECORDS = intEnv('BENCH_CHAIN_RECORDS', 1_000_000);
const CLI = join(DIST, 'apps/control-plane/src/cli.js');
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Runs the built CLI under GNU time: its exit code, stdout, wall and CPU time, and peak RSS. */
function timedCli(args, url) {
  const started = performance.now();
  const run = spawnSync('/usr/bin/time', ['-v', process.execPath, CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url },
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const field = (name) => new RegExp(`${name}: (\\S+)`).exec(run.stderr)?.[1];
  return {
    code: run.status,
    stdout: run.stdout.trim(),
    stderr: run.stderr,
    ms: performance.now() - started,
    cpuS: Number(field('User time \\(seconds\\)')) + Number(field('System time \\(seconds\\)')),
    rssMiB: Number(field('Maximum resident set size \\(kbytes\\)')) / 1024,
  };
}

await runMain(async () => {
  const url = await scratchDatabase('bench_chain');
  const dataSource = await openDataSource(url);
  // Undone down to the chain's migration, that one included: later migrations come off first.
  const chained = async () =>
    (await dataSource.query(`SELECT 1 FROM migrations WHERE name = 'ChangeLogChain1764000010000'`)).length > 0;
  while (await chained()) await dataSource.undoLastMigration();
  log(`writing ${RECORDS} records and their change-log rows, as before the chain`);
  const started = performance.now();
  await withClient(url, async (client) => {
    await client.query(`SET statement_timeout = 0`);
    await client.query(`
      INSERT INTO price_record (product_key, organization_id, unit_type, unit_count, amount, valid_from)
      SELECT 'compute.s' || (i % 10000) / 1000 || '.' || (i % 1000),
             CASE WHEN i < 10000 THEN NULL ELSE 'org_' || i / 10000 END,
             'seconds', 3600, 0.1 + (i % 9000) / 100000.0, '2026-01-01T00:00:00Z'
        FROM generate_series(0, ${RECORDS - 1}) AS i`);
    await client.query(`
      INSERT INTO price_change (changed_at, product_key, organization_id, change, price_record_id, actor)
      SELECT recorded_at, product_key, organization_id, 'set', id, 'bench' FROM price_record ORDER BY id`);
  });
  log(`written in ${seconds(performance.now() - started)}`);

  const migrated = timedCli(['migrate'], url);
  if (migrated.code !== 0) throw new Error(`migrate failed:\n${migrated.stderr}`);
  const verified = timedCli(['verify'], url);
  if (verified.code !== 0) throw new Error(`verify failed:\n${verified.stderr}`);

  const rows = [
    `| ${RECORDS.toLocaleString('en')} | ${seconds(migrated.ms)} | ${seconds(verified.ms)} | ` +
      `${verified.cpuS.toFixed(1)} s | ${verified.rssMiB.toFixed(0)} MiB |`,
  ];
  process.stdout.write(
    `${new Date().toISOString()}, Node.js ${process.version}, ${cpus().length} CPUs, load ${loadavg()[0].toFixed(2)}\n\n` +
      `| entries and records | migrate (ChangeLogChain1764000010000 and the ones after it) | verify | its CPU | its peak RSS |\n` +
      `|---|---|---|---|---|\n${rows.join('\n')}\n\n${verified.stdout}\n`,
  );
});
