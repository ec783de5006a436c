// `npm run bench:import`: times the built price book CLI on a book of 100,000 new prices
// against PostgreSQL's own COPY of the same rows, in the same run, on the same server, and
// prints a table (median of the runs). It reports; it never fails the test suite.
// Method and figures: docs/benchmarks.md, "Price book import".
// Knobs (environment): BENCH_IMPORT_PRICES (100000), BENCH_IMPORT_RUNS (3), DATABASE_URL (else
// a throwaway embedded PostgreSQL; scratch databases are created in it and dropped).
import { intEnv, log, median, withClient } from './support.mjs';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath, URL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/apps/control-plane/src/cli.js');
const requireFromRoot = createRequire(join(ROOT, 'package.json'));
const { from: copyFrom } = requireFromRoot('pg-copy-streams');

const PRICES = intEnv('BENCH_IMPORT_PRICES', 100_000);
const RUNS = intEnv('BENCH_IMPORT_RUNS', 3);
const TEMPLATE = 'bench_import_template';
const COLUMNS = 'product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until, recorded_at';

const TWIN = 'COPY into a twin of price_record (its constraints and indexes)';
const PROPOSED = 'COPY into a twin whose exclusions lead with hashtext(product_key)';
// price_record's twin, but each exclusion constraint first compares an integer hash of the key
// (btree_gist on text is what makes every insert slow), then the key itself, so it stays exact.
const PROPOSED_TABLE = `(LIKE price_record INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING CONSTRAINTS,
  PRIMARY KEY (id),
  EXCLUDE USING gist (hashtext(product_key) WITH =, product_key WITH =, tstzrange(valid_from, valid_until) WITH &&)
    WHERE (organization_id IS NULL),
  EXCLUDE USING gist (hashtext(product_key) WITH =, product_key WITH =, organization_id WITH =,
    tstzrange(valid_from, valid_until) WITH &&) WHERE (organization_id IS NOT NULL))`;

const cleanups = [];

function databaseUrl(serverUrl, name) {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The PostgreSQL server: DATABASE_URL, else a throwaway embedded one under `workDir`. */
async function startServer(workDir) {
  if (process.env.DATABASE_URL) {
    log('using the PostgreSQL at DATABASE_URL (scratch databases are created and dropped)');
    return process.env.DATABASE_URL;
  }
  const { Logger } = requireFromRoot('@nestjs/common');
  Logger.overrideLogger(['error', 'fatal']);
  const { startEmbeddedPostgres } = requireFromRoot(
    join(ROOT, 'dist/apps/control-plane/src/database/embedded-postgres.js'),
  );
  log('starting a throwaway embedded PostgreSQL');
  const server = await startEmbeddedPostgres(join(workDir, 'pg'));
  cleanups.push(() => server.stop());
  return server.superuserUrl; // it creates and drops the scratch databases
}

/** Runs the built CLI; resolves with its wall time in ms, exit code, the last line of stdout and stderr. */
function runCli(args, env) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    let bytes = 0;
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length;
      tail = (tail + chunk.toString()).slice(-500);
    });
    child.stderr.on('data', (chunk) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      const lastLine = tail.trimEnd().split('\n').pop() ?? '';
      if (code !== 0) fail(new Error(`cli ${args.join(' ')} exited ${code}: ${stderr.slice(0, 2000)}`));
      else done({ ms, lastLine, bytes });
    });
  });
}

/** A book of `count` new list prices, one per product key, and the same rows as COPY text. */
function generateBook(count) {
  const validFrom = '2026-01-01T00:00:00Z';
  const recordedAt = new Date().toISOString();
  const prices = [];
  const copyLines = [];
  for (let i = 0; i < count; i++) {
    const productKey = `compute.bench${Math.floor(i / 1000)}.${i % 1000}`;
    const amount = `0.${String(1000 + (i % 9000)).padStart(4, '0')}`;
    prices.push({
      product_key: productKey,
      unit_type: 'seconds',
      unit_count: 3600,
      amount,
      valid_from: validFrom,
      valid_until: null,
    });
    copyLines.push(`${productKey}\t\\N\tseconds\t3600\t${amount}\t${validFrom}\t\\N\t${recordedAt}\n`);
  }
  return { json: JSON.stringify({ prices }, null, 2), copyText: copyLines.join('') };
}

/** Creates `table` with `definition` in a scratch database and times COPY of the rows into it. */
async function timeCopy(url, table, definition, copyText) {
  return withClient(url, async (client) => {
    await client.query(`CREATE TABLE ${table} ${definition}`);
    const started = performance.now();
    await pipeline(Readable.from([copyText]), client.query(copyFrom(`COPY ${table} (${COLUMNS}) FROM STDIN`)));
    const ms = performance.now() - started;
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM ${table}`);
    if (rows[0].n !== PRICES) throw new Error(`COPY into ${table} stored ${rows[0].n} rows`);
    return ms;
  });
}

async function main() {
  const workDir = await mkdtemp(join(tmpdir(), 'bench-import-'));
  await chmod(workDir, 0o711); // as root, the embedded PostgreSQL's postgres user passes through
  cleanups.push(() => rm(workDir, { recursive: true, force: true }));
  log(`generating a book of ${PRICES} new prices`);
  const book = generateBook(PRICES);
  const bookFile = join(workDir, 'book.json');
  const emptyFile = join(workDir, 'empty.json');
  await writeFile(bookFile, book.json);
  await writeFile(emptyFile, '{}');

  const serverUrl = await startServer(workDir);
  const created = [];
  cleanups.push(() =>
    withClient(serverUrl, async (admin) => {
      for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }),
  );
  const createDatabase = async (name, template) => {
    await withClient(serverUrl, async (admin) => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
    });
    created.push(name);
    return databaseUrl(serverUrl, name);
  };
  log('migrating a template database with the CLI');
  const templateUrl = await createDatabase(TEMPLATE);
  await runCli(['migrate'], { DATABASE_URL: templateUrl });

  const samples = {};
  const record = (name, ms) => (samples[name] ??= []).push(ms);
  for (let run = 1; run <= RUNS; run++) {
    const url = await createDatabase(`bench_import_run${run}`, TEMPLATE);
    const env = { DATABASE_URL: url };
    log(`run ${run}/${RUNS}: start-up`);
    record('cli --help (process start-up)', (await runCli(['--help'], env)).ms);
    record('cli import of an empty book (start-up + connect + lock)', (await runCli(['import', emptyFile], env)).ms);
    // The dry run gets a fresh copy of its own, and the two take turns going first.
    const dryRunEnv = { DATABASE_URL: await createDatabase(`bench_import_dry${run}`, TEMPLATE) };
    const dryRun = async () => {
      const result = await runCli(['import', '--dry-run', bookFile], dryRunEnv);
      if (!result.lastLine.includes(`: ${PRICES} prices set`)) throw new Error(`dry run said: ${result.lastLine}`);
      record('cli import --dry-run', result.ms);
    };
    const importBook = async () => {
      const result = await runCli(['import', bookFile], env);
      if (!result.lastLine.startsWith('applied at') || !result.lastLine.includes(`: ${PRICES} prices set`)) {
        throw new Error(`import said: ${result.lastLine}`);
      }
      record('cli import', result.ms);
    };
    log(`run ${run}/${RUNS}: import --dry-run, import`);
    for (const step of run % 2 ? [dryRun, importBook] : [importBook, dryRun]) await step();
    log(`run ${run}/${RUNS}: export, show`);
    record('cli export', (await runCli(['export'], env)).ms);
    record('cli show', (await runCli(['show'], env)).ms);
    log(`run ${run}/${RUNS}: COPY of the same rows`);
    record(
      'COPY into a bare table (same columns)',
      await timeCopy(
        url,
        'copy_bare',
        `(product_key text, organization_id text, unit_type text, unit_count integer, amount numeric,
          valid_from timestamptz, valid_until timestamptz, recorded_at timestamptz)`,
        book.copyText,
      ),
    );
    record(TWIN, await timeCopy(url, 'copy_twin', '(LIKE price_record INCLUDING ALL)', book.copyText));
    record(PROPOSED, await timeCopy(url, 'copy_proposed', PROPOSED_TABLE, book.copyText));
  }

  const m = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
  const copy = m['COPY into a bare table (same columns)'];
  const startUp = m['cli import of an empty book (start-up + connect + lock)'];
  const rows = Object.entries(m).map(([name, ms]) => [name, ms, ms / copy]);
  rows.push(['cli import minus start-up', m['cli import'] - startUp, (m['cli import'] - startUp) / copy]);
  const width = Math.max(...rows.map(([name]) => name.length));
  const lines = [
    `Price book import, ${PRICES} new prices, median of ${RUNS} runs (${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
    `${'measure'.padEnd(width)}  ${'ms'.padStart(9)}  ${'× COPY'.padStart(8)}`,
    ...rows.map(
      ([name, ms, ratio]) => `${name.padEnd(width)}  ${ms.toFixed(0).padStart(9)}  ${ratio.toFixed(1).padStart(8)}`,
    ),
    `target: cli import ≤ 5 × COPY into a bare table: ${m['cli import'] <= 5 * copy ? 'met' : 'NOT met'} ` +
      `(${(m['cli import'] / copy).toFixed(1)} ×; COPY into the twin of price_record alone takes ` +
      `${(m[TWIN] / copy).toFixed(1)} ×, with the proposed exclusions ${(m[PROPOSED] / copy).toFixed(1)} ×)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function cleanUp() {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (error) {
      log(`cleanup: ${error.message}`);
    }
  }
}

main().then(
  async () => {
    await cleanUp();
    process.exit(0);
  },
  async (error) => {
    log(`benchmark failed: ${error.stack ?? error}`);
    await cleanUp();
    process.exit(1);
  },
);
