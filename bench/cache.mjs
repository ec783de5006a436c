// `npm run bench:cache`: what nginx with deploy/nginx/pricing.conf saves the instances. Two built
// instances on one PostgreSQL (the sample price book), behind an nginx of the benchmark's own (the
// shipped file with its own upstreams, port and directory in place of the CHANGE values, as
// test/deploy/nginx.ts renders it; NGINX_PATH, else /usr/sbin/nginx, else nginx from PATH).
//
// 1. Steady load through nginx: CACHE_RATE requests/s (default 300) for CACHE_DURATION_S (30),
//    a third each with Accept-Encoding `br`, `gzip` and none (bench/load.mjs, paced), counting what
//    reaches the instances (their pricing_price_list_responses_total on METRICS_PORT). Once as
//    shipped (max-age=300 from the service), once with copies expiring every CACHE_EXPIRY_S (5),
//    the test-only setting of test/deploy, to see revalidations in steady state within the run.
// 2. Capacity, same client (bench/load.mjs, closed loop, CACHE_CONNECTIONS connections, default
//    100, Accept-Encoding `gzip, deflate, br`): one instance directly, and nginx (every answer a
//    hit), CACHE_ROUNDS (3) interleaved rounds of CACHE_CAPACITY_S (10) seconds; the medians, and
//    the CPU per request of the instance, or of nginx's workers.
//
// Prints a JSON summary on stdout and writes it to bench/results/cache.json. DATABASE_URL: as the
// other benchmarks (a scratch database there, else a throwaway embedded PostgreSQL).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as bench from './support.mjs';
/* global fetch */

const RATE = bench.intEnv('CACHE_RATE', 300);
const DURATION_S = bench.intEnv('CACHE_DURATION_S', 30);
const EXPIRY_S = bench.intEnv('CACHE_EXPIRY_S', 5);
const CONNECTIONS = bench.intEnv('CACHE_CONNECTIONS', 100);
const ROUNDS = bench.intEnv('CACHE_ROUNDS', 3);
const CAPACITY_S = bench.intEnv('CACHE_CAPACITY_S', 10);
const NGINX = process.env.NGINX_PATH ?? (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx');
const CODINGS = ['br', 'gzip', undefined];
const BROWSER = { 'accept-encoding': 'gzip, deflate, br' };

/** Every nginx started, stopped on any exit (Ctrl-C included). */
const nginxes = [];
process.on('exit', () => nginxes.forEach((child) => child.exitCode === null && child.kill('SIGTERM')));

/** The shipped file with the values marked CHANGE replaced (each exactly once), as the test does. */
function renderPricingConf({ upstreams, listen, cacheDir, testOnlyExpiryS }) {
  let text = readFileSync(join(bench.ROOT, 'deploy/nginx/pricing.conf'), 'utf8');
  const replaceOnce = (from, to) => {
    const at = text.indexOf(from);
    if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`pricing.conf should have ${from} exactly once`);
    text = text.slice(0, at) + to + text.slice(at + from.length);
  };
  replaceOnce(
    '    server 10.0.0.11:3000;\n    server 10.0.0.12:3000;\n',
    upstreams.map((u) => `    server ${u};\n`).join(''),
  );
  replaceOnce('    listen 80;\n', `    listen ${listen};\n`);
  replaceOnce(' /var/cache/nginx/pricing ', ` ${cacheDir} `);
  if (testOnlyExpiryS)
    replaceOnce(
      '        proxy_cache pricing;\n',
      '        proxy_cache pricing;\n' +
        `        # TEST ONLY: copies expire after ${testOnlyExpiryS} s, not the service's max-age.\n` +
        '        proxy_ignore_headers Cache-Control Expires;\n' +
        `        proxy_cache_valid 200 ${testOnlyExpiryS}s;\n`,
    );
  return text;
}

/** nginx in a scratch directory, one worker per core; its master's pid and port. */
async function startNginx(upstreams, testOnlyExpiryS) {
  const dir = await bench.scratchDir();
  const port = await bench.freePort();
  const conf = renderPricingConf({
    upstreams,
    listen: `127.0.0.1:${port}`,
    cacheDir: join(dir, 'cache'),
    testOnlyExpiryS,
  });
  await writeFile(join(dir, 'pricing.conf'), conf);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t}_temp;`);
  await writeFile(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes auto;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      ...(process.getuid?.() === 0 ? ['user root;'] : []), // workers as nobody could not enter dir
      'events { worker_connections 4096; }',
      'http {',
      '  access_log off;',
      ...temp,
      `  include ${dir}/pricing.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  const child = spawn(NGINX, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  nginxes.push(child);
  const exited = new Promise((done) => child.once('exit', done));
  for (let tries = 0; (await bench.get(port, '/health/live').catch(() => undefined))?.status !== 200; tries++) {
    if (child.exitCode !== null || tries > 100)
      throw new Error(`nginx did not start: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    await sleep(50);
  }
  const workers = () =>
    readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  return {
    port,
    /** CPU time of the master and its workers (cache manager and loader included), ms. */
    cpuMs: () => [child.pid, ...workers()].reduce((sum, pid) => sum + bench.cpuMs(pid), 0),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The instances' answers of /v1/pricing so far, all statuses summed, and those of 304. */
async function originAnswers(instances) {
  let total = 0;
  let notModified = 0;
  for (const { metricsPort } of instances) {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    for (const [, status, value] of text.matchAll(/^pricing_price_list_responses_total\{status="(\d+)"\} (\d+)$/gm)) {
      total += Number(value);
      if (status === '304') notModified += Number(value);
    }
  }
  return { total, notModified };
}

/** CACHE_RATE requests/s through `proxy` for DURATION_S, a third per coding; what reached the instances. */
async function steady(proxy, instances) {
  const before = await originAnswers(instances);
  const runs = await Promise.all(
    CODINGS.map((coding) =>
      bench.load({
        url: `http://127.0.0.1:${proxy.port}/v1/pricing`,
        headers: coding ? { 'accept-encoding': coding } : {},
        rate: RATE / CODINGS.length,
        connections: 10,
        duration: DURATION_S,
        warmup: 0,
      }),
    ),
  );
  const after = await originAnswers(instances);
  const clientRequests = runs.reduce((sum, run) => sum + run.requests, 0);
  const originRequests = after.total - before.total;
  return {
    clientRequests,
    originRequests,
    origin304: after.notModified - before.notModified,
    originPerClientRequest: originRequests / clientRequests,
    statusCodes: runs.map((run) => run.statusCodes),
    p99Ms: Math.max(...runs.map((run) => run.p99)),
  };
}

/** Closed-loop req/s against `port`, and the CPU `cpuMs` counts per request (µs). */
async function capacity(port, cpuMs) {
  const url = `http://127.0.0.1:${port}/v1/pricing`;
  await bench.load({ url, headers: BROWSER, connections: CONNECTIONS, duration: 2, warmup: 0 });
  const cpuBefore = cpuMs();
  const run = await bench.load({ url, headers: BROWSER, connections: CONNECTIONS, duration: CAPACITY_S, warmup: 0 });
  const cpu = cpuMs() - cpuBefore;
  if (Object.keys(run.statusCodes).some((status) => status !== '200'))
    throw new Error(`not all 200: ${JSON.stringify(run.statusCodes)}`);
  return { rps: run.rps, p99Ms: run.p99, cpuUsPerRequest: (cpu * 1000) / run.requests };
}

await bench.runMain(async () => {
  const url = await bench.scratchDatabase('bench_cache');
  await bench.importBook(
    JSON.parse(readFileSync(join(bench.ROOT, 'apps/control-plane/sample/price-book.json'), 'utf8')),
    url,
  );
  const instances = [];
  for (let i = 0; i < 2; i++) {
    const metricsPort = await bench.freePort();
    const app = await bench.startApp(url, {
      TRUST_PROXY: '127.0.0.1',
      PRICING_RATE_LIMIT: '100000000',
      METRICS_PORT: String(metricsPort),
    });
    instances.push({ ...app, metricsPort });
  }
  const upstreams = instances.map((i) => `127.0.0.1:${i.port}`);
  const machine = {
    date: new Date().toISOString(),
    cpus: `${cpus().length} × ${cpus()[0]?.model}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    nginx: spawnSync(NGINX, ['-v'], { encoding: 'utf8' }).stderr.trim(), // nginx -v writes to stderr
    // Other work on the machine skews every figure: the load average (1, 5, 15 min) around the run.
    loadBefore: loadavg()
      .map((l) => l.toFixed(2))
      .join(', '),
  };

  bench.log(`steady load: ${RATE} req/s for ${DURATION_S} s through nginx as shipped (max-age=300)`);
  const shipped = await startNginx(upstreams);
  const asShipped = await steady(shipped, instances);
  bench.log(`  ${asShipped.clientRequests} requests, ${asShipped.originRequests} reached the instances`);

  bench.log(`steady load: the same with copies expiring every ${EXPIRY_S} s (test-only setting)`);
  const short = await startNginx(upstreams, EXPIRY_S);
  const shortExpiry = await steady(short, instances);
  await short.stop();
  bench.log(
    `  ${shortExpiry.clientRequests} requests, ${shortExpiry.originRequests} reached the instances (${shortExpiry.origin304} of them 304)`,
  );

  const direct = instances[0];
  const rounds = { instance: [], nginx: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    bench.log(
      `capacity, round ${round}/${ROUNDS}: one instance directly, then nginx (${CONNECTIONS} connections, ${CAPACITY_S} s each)`,
    );
    rounds.instance.push(await capacity(direct.port, () => bench.cpuMs(direct.child.pid)));
    rounds.nginx.push(await capacity(shipped.port, shipped.cpuMs));
  }
  await shipped.stop();
  machine.loadAfter = loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  const medianOf = (runs) => ({
    rps: Math.round(bench.median(runs.map((r) => r.rps))),
    p99Ms: bench.median(runs.map((r) => r.p99Ms)),
    cpuUsPerRequest: Math.round(bench.median(runs.map((r) => r.cpuUsPerRequest))),
  });
  const result = {
    machine,
    steady: {
      rate: RATE,
      durationS: DURATION_S,
      codings: ['br', 'gzip', 'none'],
      asShipped,
      [`expiry${EXPIRY_S}s`]: shortExpiry,
    },
    capacity: {
      connections: CONNECTIONS,
      seconds: CAPACITY_S,
      rounds: ROUNDS,
      instanceDirectly: medianOf(rounds.instance),
      throughNginx: medianOf(rounds.nginx),
      all: rounds,
    },
  };
  await mkdir(join(bench.ROOT, 'bench/results'), { recursive: true });
  await writeFile(join(bench.ROOT, 'bench/results/cache.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  bench.log('written: bench/results/cache.json');
});
