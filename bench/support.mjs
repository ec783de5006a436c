// What the benchmarks share (bench/*.mjs): a PostgreSQL (DATABASE_URL, or a throwaway
// embedded one), scratch databases migrated and filled with the built CLI, the built app as a
// child process, and a few small HTTP and /proc readers. Everything started is stopped by
// `cleanUp()` (and whatever a script registers with `atCleanUp`), also on an error or Ctrl-C.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, URL } from 'node:url';
/* global fetch */

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');
/** `require` from the repository: node_modules and the built code (dist/). */
export const requireFromRoot = createRequire(join(ROOT, 'package.json'));
const CLI = join(DIST, 'apps/control-plane/src/cli.js');
const MAIN = join(DIST, 'apps/control-plane/src/main.js');

const startedAt = performance.now();
const cleanups = [];

export function log(message) {
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);
}

/** The median of the finite numbers among `values`; null when there are none. */
export function median(values) {
  const sorted = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A TCP port free on loopback now: the app's own (built) helper. */
export const { freePort } = requireFromRoot(join(DIST, 'apps/control-plane/src/database/embedded-postgres.js'));

export function intEnv(name, fallback) {
  const value = process.env[name];
  return value && /^\d+$/.test(value) ? Number(value) : fallback;
}

/** Runs `cleanUp` on exit of `main`, on an error and on Ctrl-C; exits with 1 when `main` threw. */
export async function runMain(main) {
  const interrupted = () => void cleanUp().finally(() => process.exit(130));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    await main();
  } catch (error) {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}

/** `cleanup` runs at the end, before whatever was registered earlier (it is undone first). */
export function atCleanUp(cleanup) {
  cleanups.push(cleanup);
}

export async function cleanUp() {
  while (cleanups.length > 0)
    await cleanups
      .pop()()
      .catch(() => undefined);
}

/** A scratch directory removed at the end. */
export async function scratchDir() {
  const dir = await mkdtemp(join(tmpdir(), 'pricing-bench-'));
  // Passable by other users (as root, the embedded PostgreSQL's postgres user), not listable.
  await chmod(dir, 0o711);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The PostgreSQL the scratch databases are made in: one per run. */
let serverUrl;

/** DATABASE_URL, else a throwaway embedded PostgreSQL (stopped at the end); its superuser's URL. */
async function startServer() {
  const { Logger } = requireFromRoot('@nestjs/common');
  Logger.overrideLogger(['warn', 'error', 'fatal']);
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const { startEmbeddedPostgres } = requireFromRoot(join(DIST, 'apps/control-plane/src/database/embedded-postgres.js'));
  log('starting a throwaway embedded PostgreSQL');
  const database = await startEmbeddedPostgres(join(await scratchDir(), 'pg'), { port: await freePort() });
  cleanups.push(() => database.stop());
  return database.superuserUrl; // it creates and drops the scratch databases
}

/**
 * A migrated, empty database of its own: a scratch database at DATABASE_URL (dropped at the end),
 * else in a throwaway embedded PostgreSQL. Returns its URL.
 */
export async function scratchDatabase(name) {
  const adminUrl = await (serverUrl ??= startServer());
  const { Client } = requireFromRoot('pg');
  const database = `${name}_${process.pid}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  cleanups.push(async () => {
    const dropper = new Client({ connectionString: adminUrl });
    await dropper.connect();
    await dropper.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await dropper.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  await cli(['migrate'], url.href);
  return url.href;
}

/** Runs `work` with a pg client of its own on `url`, closed after. */
export async function withClient(url, work) {
  const { Client } = requireFromRoot('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A TypeORM DataSource on `databaseUrl` with the app's settings (the built code), destroyed at the end. */
export async function openDataSource(databaseUrl) {
  const { DataSource } = requireFromRoot('typeorm');
  const { dataSourceOptions } = requireFromRoot(join(DIST, 'libs/database/src/data-source-options.js'));
  const { appDatabaseOptions } = requireFromRoot(join(DIST, 'apps/control-plane/src/database/app-database.js'));
  const dataSource = new DataSource(dataSourceOptions(appDatabaseOptions(databaseUrl)));
  await dataSource.initialize();
  cleanups.push(() => dataSource.destroy());
  return dataSource;
}

/** Runs the built price book CLI; resolves with its stdout, rejects with its output when it fails. */
export function cli(args, databaseUrl) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done(out) : fail(new Error(`cli ${args[0]} exited ${code}:\n${out}`))));
  });
}

/** Imports a price book given as JSON with the CLI. */
export async function importBook(book, databaseUrl) {
  const file = join(await scratchDir(), 'book.json');
  await writeFile(file, JSON.stringify(book));
  return cli(['import', file], databaseUrl);
}

/**
 * Waits until the write the CLI's output `out` reports ("applied at <instant>:") takes effect: a
 * large import publishes seconds after it commits (docs/decisions.md, "One clock"), and until then
 * the list does not show it.
 */
export async function untilApplied(out) {
  const at = /applied at (\S+):/.exec(out)?.[1];
  if (at) await sleep(Math.max(0, Date.parse(at) - Date.now()) + 10);
}

/** `count` current compute prices: the same book as bench/run.mjs generates. */
export function largeBook(count) {
  const { listPrice } = requireFromRoot(join(DIST, 'libs/pricing/src/testing/price-book-entries.js'));
  const key = (i) => `compute.bench${Math.floor(i / 1000)}.${i % 1000}`;
  const amount = (i) => `0.${String(i + 1).padStart(6, '0')}`;
  return {
    description: `GENERATED for the benchmark: ${count} current prices`,
    prices: Array.from({ length: count }, (_, i) =>
      listPrice(key(i), 'seconds', 3600, amount(i), '2026-01-01T00:00:00Z'),
    ),
  };
}

/**
 * The built app (`node dist/.../main.js`) on `databaseUrl`, on a free port of loopback, once
 * /health/ready answers 200. With `memoryProbe`, `memory()` asks it for its memory usage after
 * two full garbage collections, `eventLoopDelay()` for the worst delay of its event loop since the
 * last ask, `cpuHold()` for the longest its main thread ran between two turns of the loop and
 * how long it waited for a CPU in the longest gap, and `gcPauses()` for V8's pauses
 * (bench/app-probe.mjs). Stopped with SIGTERM by `stop()` or at the end.
 */
export async function startApp(databaseUrl, env = {}, { memoryProbe = false, logLines = false } = {}) {
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT); // a caller's, to watch the start-up
  // --expose-gc: the probe collects garbage before it reads the heap, so that heaps compare.
  const probe = ['--expose-gc', '--import', new URL('./app-probe.mjs', import.meta.url).href];
  // BENCH_APP_NODE_OPTIONS: node options on the app's command line (e.g. --cpu-prof, which Node
  // refuses in NODE_OPTIONS).
  const options = process.env.BENCH_APP_NODE_OPTIONS?.split(/\s+/).filter(Boolean) ?? [];
  const args = [...START_OPTIONS, ...options, ...(memoryProbe ? probe : []), MAIN];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...START_ENVIRONMENT,
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', logLines ? 'pipe' : 'ignore', 'pipe', ...(memoryProbe ? ['ipc'] : [])],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-5_000)));
  // With `logLines`, the log's lines as they come, for `logged` (the app logs JSON on stdout).
  const lines = [];
  const waiting = new Set();
  if (logLines) {
    let partial = '';
    child.stdout.on('data', (chunk) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop();
      for (const line of parts) {
        lines.push(line);
        for (const check of waiting) check();
      }
    });
  }
  /** Resolves with performance.now() once the app logged a line matching `pattern` (at most 120 s). */
  const logged = (pattern) =>
    new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`the app did not log ${pattern}`)), 120_000);
      const check = () => {
        if (!lines.some((line) => pattern.test(line))) return;
        clearTimeout(timer);
        waiting.delete(check);
        done(performance.now());
      };
      waiting.add(check);
      check();
    });
  const exited = new Promise((done) => child.once('exit', done));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    if ((await Promise.race([exited, sleep(15_000, 'timeout')])) === 'timeout') child.kill('SIGKILL');
  };
  cleanups.push(stop);
  const deadline = performance.now() + 120_000;
  while ((await get(port, '/health/ready').catch(() => undefined))?.status !== 200) {
    if (child.exitCode !== null) throw new Error(`the app exited with ${child.exitCode}:\n${stderr}`);
    if (performance.now() > deadline) throw new Error(`the app did not become ready:\n${stderr}`);
    await sleep(100);
  }
  return {
    child,
    port,
    stop,
    logged,
    /** The log's lines so far (with `logLines`). */
    lines: () => lines,
    memory: () => ask(child, 'memory'),
    eventLoopDelay: () => ask(child, 'event-loop'),
    cpuHold: () => ask(child, 'cpu-hold'),
    gcPauses: () => ask(child, 'gc'),
  };
}

/** Asks the app's probe (bench/app-probe.mjs) for `type`; resolves with its answer. */
function ask(child, type) {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the app did not answer ${type}`)), 5_000);
    const onMessage = (message) => {
      if (message?.type !== type) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      done(message.value);
    };
    child.on('message', onMessage);
    child.send({ type });
  });
}

/**
 * One request with fetch: status, headers, and the body's length on the wire (Content-Length:
 * fetch decodes gzip and br itself).
 */
export async function get(port, path = '/v1/pricing', headers = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
  await res.arrayBuffer();
  return {
    status: res.status,
    headers: Object.fromEntries(res.headers),
    length: Number(res.headers.get('content-length')),
  };
}

/** `npm start`'s command (package.json: `exec env NAME=value ... node [--flag ...] script`), as the app is measured. */
const START = /^exec env ((?:\w+=\S+ )+)node ((?:--\S+ )*)/.exec(
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start,
);
/** The variables it sets. */
const START_ENVIRONMENT = Object.fromEntries([...(START?.[1] ?? '').matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
/** Its node options (docs/operations.md, "Threads"). */
const START_OPTIONS = (START?.[2] ?? '').split(' ').filter(Boolean);

/**
 * A GET as a cache or a browser receives it, timed from the request to the body's last byte
 * (milliseconds): gzip and brotli accepted, the body counted as it comes, never decoded. `fetch`
 * decodes a compressed body in this process, and its time was the client's, not the server's:
 * 60-190 ms for a 2 MB list in brotli, more than the answer took to arrive.
 */
export function timedGet(port, path) {
  const begun = performance.now();
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { 'accept-encoding': 'gzip, br' } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => (bytes += chunk.length));
      res.on('end', () => done({ status: res.statusCode, headers: res.headers, bytes, ms: performance.now() - begun }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

/** bench/load.mjs (autocannon, in a process of its own) with these options; its JSON result. */
export function load(options) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(ROOT, 'bench/load.mjs'), JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done(JSON.parse(out)) : fail(new Error(`load exited ${code}`))));
  });
}

/** A memory field of a process's /proc status (VmRSS, VmHWM, ...), MiB. */
function statusMiB(pid, field) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)[1]) / 1024;
}

/** VmRSS of a process, MiB. */
export function rssMiB(pid = process.pid) {
  return statusMiB(pid, 'VmRSS');
}

/** VmHWM of a process, MiB: the most it has held resident. */
export function peakRssMiB(pid = process.pid) {
  return statusMiB(pid, 'VmHWM');
}

/** CPU time of a process, all its threads (ms; Linux, in steps of 10 ms). */
export function cpuMs(pid = process.pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export const MiB = (bytes) => (bytes / 1024 / 1024).toFixed(1);
