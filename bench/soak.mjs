// `npm run soak`: the built app for a long while (SOAK_DURATION_S, default 600) at half of the
// capacity measured first, with a mix of 200, 304 and 429 answers (bench/soak-client.mjs) and a
// price change every SOAK_CHANGE_EVERY_S (60), applied as the CLI applies it. Reports errors (must be
// 0), the app's RSS and heap (after a full GC) at the start and the end (must be flat), and p99
// minute by minute. Not part of `npm test`. Method and latest figures: docs/benchmarks.md, "Soak".
// Knobs (environment): SOAK_DURATION_S, SOAK_CHANGE_EVERY_S, SOAK_CAPACITY_S (10), SOAK_RATE
// (instead of half the capacity), SOAK_CONNECTIONS (50), SOAK_PRICES (generated prices added to
// the sample book, default 0), DATABASE_URL.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import * as bench from './support.mjs';

const DURATION_S = bench.intEnv('SOAK_DURATION_S', 600);
const CHANGE_EVERY_S = bench.intEnv('SOAK_CHANGE_EVERY_S', 60);
const CAPACITY_S = bench.intEnv('SOAK_CAPACITY_S', 10);
const CONNECTIONS = bench.intEnv('SOAK_CONNECTIONS', 50);
const EXTRA_PRICES = bench.intEnv('SOAK_PRICES', 0);
const RATE_LIMIT = 600; // per address and minute: the pool of addresses stays well under it

await bench.runMain(async () => {
  const url = await bench.scratchDatabase('bench_soak');
  const sample = JSON.parse(readFileSync(join(bench.ROOT, 'apps/control-plane/sample/price-book.json'), 'utf8'));
  await bench.importBook(sample, url);
  if (EXTRA_PRICES > 0) await bench.importBook(bench.largeBook(EXTRA_PRICES), url);
  const app = await bench.startApp(
    url,
    { TRUST_PROXY: 'loopback', PRICING_RATE_LIMIT: String(RATE_LIMIT), PRICING_RATE_WINDOW_S: '60' },
    { memoryProbe: true },
  );
  const memory = async () => ({ rssMiB: bench.rssMiB(app.child.pid), ...(await app.memory()) });

  bench.log(`capacity: the mix, closed loop, ${CONNECTIONS} connections, ${CAPACITY_S} s after a warm-up`);
  await client({ port: app.port, connections: CONNECTIONS, durationS: 3, reportEveryS: 60 });
  const cpuBefore = bench.cpuMs(app.child.pid);
  const [capacityRun] = await client({
    port: app.port,
    connections: CONNECTIONS,
    durationS: CAPACITY_S,
    reportEveryS: CAPACITY_S + 60,
  });
  const capacity = capacityRun.requests / CAPACITY_S;
  const appCpuShare = (bench.cpuMs(app.child.pid) - cpuBefore) / (CAPACITY_S * 1000);
  const rate = bench.intEnv('SOAK_RATE', Math.floor(capacity / 2));
  bench.log(
    `capacity ${capacity.toFixed(0)} req/s (app at ${(appCpuShare * 100).toFixed(0)} % of a core); soak at ${rate} req/s for ${DURATION_S} s`,
  );

  const memoryAtStart = await memory();
  await app.eventLoopDelay(); // from here on: the minutes count from the soak's start
  // Each minute: how busy the machine was, and the app's share of a core (all its threads).
  let last = { cpu: bench.cpuMs(app.child.pid), at: performance.now() };
  const soak = client(
    { port: app.port, connections: CONNECTIONS, durationS: DURATION_S, reportEveryS: 60, rate },
    async () => {
      const now = { cpu: bench.cpuMs(app.child.pid), at: performance.now() };
      const minute = {
        loadAverage: loadavg()[0],
        appCpuShare: (now.cpu - last.cpu) / (now.at - last.at),
        rssMiB: bench.rssMiB(app.child.pid), // no GC here: RSS as it is
        appDelay: await app.eventLoopDelay(),
      };
      last = now;
      bench.log(
        `minute done: load average ${minute.loadAverage.toFixed(1)}, app at ${(minute.appCpuShare * 100).toFixed(0)} % of a core, RSS ${minute.rssMiB.toFixed(0)} MiB, worst event-loop delay ${minute.appDelay.toFixed(0)} ms`,
      );
      return minute;
    },
  );
  // Changes are applied as the CLI applies them (PriceBookService), from this process: a CLI
  // process starting every minute would take the cores from the app and the client too.
  const { PriceBookService } = bench.requireFromRoot(
    join(bench.DIST, 'libs/pricing/src/services/price-book.service.js'),
  );
  const priceBook = PriceBookService.on(await bench.openDataSource(url));
  const changes = [];
  const started = performance.now();
  for (let n = 1; performance.now() - started + CHANGE_EVERY_S * 1000 < DURATION_S * 1000; n++) {
    await sleep(started + n * CHANGE_EVERY_S * 1000 - performance.now());
    const t = performance.now();
    await priceBook.apply({
      prices: [{ product_key: 'compute.soak.1', unit_type: 'seconds', unit_count: 3600, amount: `0.${n}` }],
    });
    changes.push(performance.now() - t);
    bench.log(`price change ${n} applied`);
  }
  const minutes = await soak;
  const memoryAtEnd = await memory();
  await app.stop();

  const total = (key) => minutes.reduce((sum, m) => sum + m[key], 0);
  const statuses = {};
  for (const m of minutes)
    for (const [code, n] of Object.entries(m.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  const result = {
    when: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadAverage: loadavg()[0],
    durationS: DURATION_S,
    capacity,
    appCpuShare,
    rate,
    requests: total('requests'),
    errors: total('errors'),
    firstError: minutes.find((m) => m.firstError)?.firstError ?? null,
    statuses,
    priceChanges: changes.length,
    minutes,
    memoryAtStart,
    memoryAtEnd,
  };
  await mkdir(join(bench.ROOT, 'bench/results'), { recursive: true });
  await writeFile(join(bench.ROOT, 'bench/results/soak.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(markdown(result));
});

/** Runs bench/soak-client.mjs with `options`; resolves with its reports, `onReport` adding to each. */
function client(options, onReport = () => ({})) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(bench.ROOT, 'bench/soak-client.mjs'), JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const reports = [];
    let buffered = '';
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      for (let eol = buffered.indexOf('\n'); eol >= 0; eol = buffered.indexOf('\n')) {
        const line = JSON.parse(buffered.slice(0, eol));
        buffered = buffered.slice(eol + 1);
        reports.push(Promise.resolve(onReport()).then((added) => ({ ...line, ...added })));
      }
    });
    child.on('error', fail);
    child.on('exit', (code) =>
      code === 0 ? done(Promise.all(reports)) : fail(new Error(`soak-client exited ${code}`)),
    );
  });
}

function markdown(r) {
  const row = (name, m) =>
    `| ${name} | ${m.rssMiB.toFixed(0)} | ${bench.MiB(m.heapUsed)} | ${bench.MiB(m.heapTotal)} | ${bench.MiB(m.external)} |`;
  const growth = (key) =>
    `${(((r.memoryAtEnd[key] - r.memoryAtStart[key]) / r.memoryAtStart[key]) * 100).toFixed(1)} %`;
  return [
    `Run of ${r.when}, ${r.durationS} s, Node ${r.node}, ${r.cpus} CPUs (load average ${r.loadAverage.toFixed(1)} at the end).`,
    `Capacity with the mix ${r.capacity.toFixed(0)} req/s (app at ${(r.appCpuShare * 100).toFixed(0)} % of a core); soak at ${r.rate} req/s; ${r.priceChanges} price changes.`,
    '',
    `Requests ${r.requests.toLocaleString('en')}: ${Object.entries(r.statuses)
      .map(([code, n]) => `${code} × ${n.toLocaleString('en')}`)
      .join(', ')}. **Errors: ${r.errors}**${r.firstError ? ` (first: ${r.firstError})` : ''}.`,
    '',
    '| app memory | RSS MiB | heap used MiB (after a full GC) | heap total MiB | external MiB |',
    '| --- | --- | --- | --- | --- |',
    row('start', r.memoryAtStart),
    row('end', r.memoryAtEnd),
    `| growth | ${growth('rssMiB')} | ${growth('heapUsed')} | | |`,
    '',
    '| minute | requests | p50 ms | p99 ms | max ms | errors | app CPU (% of a core) | app RSS MiB | app event-loop delay, worst ms | client event-loop delay, worst ms | load average |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...r.minutes.map(
      (m, i) =>
        `| ${i + 1} | ${m.requests.toLocaleString('en')} | ${m.p50?.toFixed(1)} | ${m.p99?.toFixed(1)} | ${m.max?.toFixed(0)} | ${m.errors} | ${(m.appCpuShare * 100).toFixed(0)} | ${m.rssMiB.toFixed(0)} | ${m.appDelay.toFixed(0)} | ${m.clientDelay.toFixed(0)} | ${m.loadAverage.toFixed(1)} |`,
    ),
    '',
  ].join('\n');
}
