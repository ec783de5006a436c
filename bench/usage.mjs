// How many costOfUsage calls one core does per second, for intervals that cross 0, 1 and 10
// price changes, with GiB-hours and with seconds. Loads the built file (`npm run bench:usage`
// builds first); prints a Markdown table on stdout, progress on stderr.
//
// Knobs (environment): BENCH_USAGE_WARMUP_MS (1000), BENCH_USAGE_RUN_MS (1000), BENCH_USAGE_RUNS (5).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUILT = join(ROOT, 'dist/libs/pricing/src/core/usage.js');
if (!existsSync(BUILT)) {
  console.error(`${BUILT} is missing: run npm run build first (npm run bench:usage does)`);
  process.exit(1);
}
const { costOfUsage } = createRequire(import.meta.url)(BUILT);

const WARMUP_MS = Number(process.env.BENCH_USAGE_WARMUP_MS ?? 1000);
const RUN_MS = Number(process.env.BENCH_USAGE_RUN_MS ?? 1000);
const RUNS = Number(process.env.BENCH_USAGE_RUNS ?? 5);

// One product key's history as the snapshot would hold it: a list price a month for two years
// (24 held prices, in order of validFrom, as the snapshot sorts them), each ending where the next
// starts; the last one open.
const MONTHS = 24;
const monthStart = (i) => Date.UTC(2025, i, 1);
function history(unitType, unitCount) {
  return Array.from({ length: MONTHS }, (_, i) => ({
    id: i + 1,
    productKey: unitType === 'seconds' ? 'compute.g2.4' : 'storage.gp1',
    organizationId: null,
    unitType,
    unitCount,
    amount: (0.048 + i / 10000).toFixed(4),
    validFrom: monthStart(i),
    validUntil: i === MONTHS - 1 ? null : monthStart(i + 1),
  }));
}

const DAY = 86_400_000;
// Intervals starting on the 3rd of a month, 20 days long (0 changes), 40 days (1), 10 months
// and 10 days (10); each call shifts the start by a few milliseconds so that no two are equal.
const CASES = [
  { changes: 0, length: (from) => from + 20 * DAY },
  { changes: 1, length: (from) => from + 40 * DAY },
  { changes: 10, length: (from) => Date.UTC(2025, 13, 13) + (from - Date.UTC(2025, 3, 3)) },
];
const FAMILIES = [
  { unitType: 'gib_hours', unitCount: 730, sizeGib: '100' },
  { unitType: 'seconds', unitCount: 3600, sizeGib: undefined },
];

function measure(prices, family, testCase) {
  const base = Date.UTC(2025, 3, 3);
  const usages = Array.from({ length: 1024 }, (_, i) => {
    const from = base + i * 7919;
    return { from: new Date(from), to: new Date(testCase.length(from)), sizeGib: family.sizeGib };
  });
  for (const usage of usages.slice(0, 4)) {
    const lines = costOfUsage(prices, family.unitType, usage).lines.length;
    if (lines !== testCase.changes + 1) throw new Error(`expected ${testCase.changes + 1} lines, got ${lines}`);
  }
  let sink = 0;
  // Calls per second of this process's CPU time (user + system): the rate of one core, whatever
  // else the machine runs at the same time. The wall-clock rate is kept for comparison.
  const run = (ms) => {
    let calls = 0;
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    let now = start;
    while (now - start < ms) {
      for (let i = 0; i < 1024; i++) sink += costOfUsage(prices, family.unitType, usages[i]).lines.length;
      calls += 1024;
      now = performance.now();
    }
    const cpu = process.cpuUsage(cpuStart);
    return { cpu: (calls * 1e6) / (cpu.user + cpu.system), wall: (calls * 1000) / (now - start) };
  };
  run(WARMUP_MS);
  const runs = Array.from({ length: RUNS }, () => run(RUN_MS));
  if (sink === 0) throw new Error('no lines');
  const rates = runs.map((r) => r.cpu).sort((a, b) => a - b);
  const wall = runs.map((r) => r.wall).sort((a, b) => a - b);
  return { median: rates[Math.floor(RUNS / 2)], min: rates[0], max: rates[RUNS - 1], wall: wall[Math.floor(RUNS / 2)] };
}

const rows = [];
for (const family of FAMILIES) {
  const prices = { list: history(family.unitType, family.unitCount), organization: [] };
  for (const testCase of CASES) {
    const rate = measure(prices, family, testCase);
    rows.push([
      family.unitType,
      String(testCase.changes),
      String(testCase.changes + 1),
      Math.round(rate.median).toLocaleString('en-US'),
      (1e6 / rate.median).toFixed(2),
      `${Math.round(rate.min).toLocaleString('en-US')}–${Math.round(rate.max).toLocaleString('en-US')}`,
      Math.round(rate.wall).toLocaleString('en-US'),
    ]);
    console.error(`${family.unitType}, ${testCase.changes} changes: ${Math.round(rate.median)} calls/s`);
  }
}

const header = [
  'unit',
  'price changes crossed',
  'lines',
  'calls per CPU-second (median)',
  'µs/call',
  `range of ${RUNS} runs`,
  'calls per wall-clock second',
];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
console.log(
  `costOfUsage on one core: ${MONTHS} list prices of the key, no organization price; ${WARMUP_MS} ms warm-up, ` +
    `${RUNS} runs of ${RUN_MS} ms, median; load average ${loadavg()[0].toFixed(2)} on ${cpus().length} cores at ` +
    `the end; Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}\n`,
);
console.log(line(header));
console.log(line(widths.map((w) => '-'.repeat(w))));
for (const row of rows) console.log(line(row));
