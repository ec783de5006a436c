// CPU time of one GET /v1/pricing through the whole app (Express, Nest, the controller), in
// process and without sockets, beside references serving the app's own answer: the Nest floor
// (`floor`, bench/nest/floor.main.ts: one controller writing the same bytes, nothing else) and
// bare Express (`express`, as bench/baseline-express.mjs), or beside other builds of the service.
// `npm run bench` runs it (bench/run.mjs: the route's CPU above the floor, its target); by hand:
//   DATABASE_URL=postgres://... node bench/pricing-path-cost.mjs floor app=dist [express] [<name>=<dist>...]
// The app is control-plane's AppModule as main.ts builds it (global guard, pipes, filter, request
// log, metrics, HttpDrain, configureExpress), on the book at DATABASE_URL. Every build runs in a
// child process of its own (this script with --child), all started at once, pinned to CPU
// BENCH_CPU when set; each warms up, then all time BENCH_REQUESTS requests (10,000) at the same
// signal, BENCH_RUNS times (12), with process.cpuUsage(). A request to /health/live goes first,
// as probes do. The HTTP server's 'request' event is emitted (its listeners run, as in main.ts)
// and Node's http.server diagnostics channels are published as the server would. BENCH_STATUS:
// 200 (plain GET), 304 (If-None-Match with the ETag) or both (`200,304`, the default). The first
// build's 200 and 304 (their bytes and headers) are what the references serve. Prints, per build,
// the median µs per request and, within each run (which a change of load hits alike), its
// difference and ratio to the first build: median and quartiles.
import { execFileSync, spawn } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REFERENCES = ['express', 'floor'];
const SCRIPT = fileURLToPath(import.meta.url);

/**
 * Runs every build side by side on the book at `databaseUrl`. `builds`: [name, dist directory or
 * a reference's name], the first one the base of the differences and ratios. Resolves with, per
 * status and build: `us` (µs per request of each run), `medianUs`, and `aboveFirst` and `ratio`
 * ({ median, q1, q3 } of the runs' own differences and ratios to the first build).
 */
export async function pathCost({ databaseUrl, builds, statuses = [200, 304], cpu, runs = 12, requests = 10_000 }) {
  const dists = builds.filter(([, dist]) => !REFERENCES.includes(dist));
  if (dists.length === 0) throw new Error('pathCost needs a build of the service');
  const work = mkdtempSync(join(tmpdir(), 'path-cost-'));
  const answer = join(work, 'answer');
  const node = (args) =>
    cpu === undefined ? [process.execPath, args] : ['taskset', ['-c', String(cpu), process.execPath, ...args]];
  const env = { ...process.env, DATABASE_URL: databaseUrl };
  try {
    // The first build's answer, for the references to serve.
    execFileSync(...node([SCRIPT, '--child', 'capture', resolve(dists[0][1]), answer]), { stdio: 'inherit', env });
    const children = builds.map(([name, dist]) => {
      const kind = REFERENCES.includes(dist) ? dist : 'app';
      const args = [SCRIPT, '--child', kind, resolve(kind === 'app' ? dist : dists[0][1]), answer, statuses.join(',')];
      const proc = spawn(...node(args), { stdio: ['pipe', 'pipe', 'inherit'], env });
      const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
      return { name, proc, line: async () => (await lines.next()).value };
    });
    try {
      for (const child of children)
        if ((await child.line()) !== 'ready') throw new Error(`${child.name} did not start`);
      const results = {};
      for (const status of statuses) {
        results[status] = Object.fromEntries(builds.map(([name]) => [name, { us: [], above: [], ratios: [] }]));
      }
      for (let run = 0; run < runs; run++) {
        for (const status of statuses) {
          for (const child of children) child.proc.stdin.write(`${status} ${requests}\n`);
          const got = await Promise.all(children.map((child) => child.line().then(Number)));
          got.forEach((us, i) => {
            const r = results[status][builds[i][0]];
            r.us.push(us);
            r.above.push(us - got[0]);
            r.ratios.push(us / got[0]);
          });
          process.stderr.write(
            `${status} run ${run + 1}: ${got.map((us, i) => `${builds[i][0]} ${us}`).join('  ')} µs\n`,
          );
        }
      }
      for (const byBuild of Object.values(results)) {
        for (const [name, { us, above, ratios }] of Object.entries(byBuild)) {
          byBuild[name] = {
            us,
            medianUs: quartiles(us).median,
            aboveFirst: quartiles(above),
            ratio: quartiles(ratios),
          };
        }
      }
      return results;
    } finally {
      for (const child of children) {
        child.proc.stdin.end();
        if (child.proc.exitCode === null) await new Promise((done) => child.proc.once('exit', done));
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function quartiles(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
  return { median: at(0.5), q1: at(0.25), q3: at(0.75) };
}

/** The app as main.ts builds it (its HttpDrain included), in this process. */
async function startApp(dist) {
  const load = createRequire(`${dist}/`);
  const { NestFactory } = createRequire(import.meta.url)('@nestjs/core');
  const controlPlane = load('./apps/control-plane/src');
  const { PricingService } = load('./libs/pricing/src');
  const { HttpDrain } = load('./apps/control-plane/src/lifecycle/http-drain');
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    METRICS_PORT: 'off', // the metrics server only: the request-duration histogram still counts
    LOG_LEVEL: 'error',
    PRICING_RATE_LIMIT: '100000000', // counts every request, refuses none
  };
  const config = controlPlane.loadConfig(env);
  const app = await NestFactory.create(controlPlane.AppModule.forRoot(config, config.databaseUrl), {
    bodyParser: false,
    logger: false,
  });
  new HttpDrain(app.getHttpServer());
  controlPlane.configureExpress(app, config);
  await app.init();
  await app.get(PricingService).whenReady();
  return { server: app.getHttpServer(), close: () => app.close() };
}

/** Bare Express or the Nest floor, serving the app's own 200 and 304 (`answer`). */
async function startReference(kind, dist, answer, body) {
  if (kind === 'express') {
    const { expressBaseline } = await import('./baseline-express.mjs');
    return { server: createServer(expressBaseline(answer, body)), close: async () => {} };
  }
  const { NestFactory } = createRequire(import.meta.url)('@nestjs/core');
  const { floorModule } = createRequire(`${dist}/`)('./bench/nest/floor.main.js');
  const app = await NestFactory.create(floorModule(answer, body), { bodyParser: false, logger: false });
  app.disable('x-powered-by');
  app.disable('etag');
  await app.init();
  return { server: app.getHttpServer(), close: () => app.close() };
}

/** The header fields of a response head as Node wrote it, without the connection's own. */
function headerFields(head) {
  return Object.fromEntries(
    head
      .split('\r\n')
      .slice(1)
      .filter((line) => line !== '')
      .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()])
      .filter(([name]) => !['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)),
  );
}

/** A child: `capture` writes the app's answer to `answerFile` (.json and .body); the others measure. */
async function child(kind, dist, answerFile, statuses) {
  const isApp = kind === 'app' || kind === 'capture';
  const answer = !isApp && JSON.parse(readFileSync(`${answerFile}.json`, 'utf8'));
  const { server, close } = isApp
    ? await startApp(dist)
    : await startReference(kind, dist, answer, readFileSync(`${answerFile}.body`));
  const started = channel('http.server.request.start');
  const finished = channel('http.server.response.finish');

  /** One request, as the HTTP server would hand it over; resolves with the response. */
  const send = (url, headers = {}) =>
    new Promise((resolve) => {
      const req = new IncomingMessage(new Socket());
      Object.assign(req, { method: 'GET', url, headers });
      const res = new ServerResponse(req);
      const message = { request: req, response: res, socket: req.socket, server };
      const end = res.end;
      res.end = function (...args) {
        end.apply(this, args);
        res.emit('finish');
        if (finished.hasSubscribers) finished.publish(message);
        res.emit('close');
        // The head as written (Node's own record of it) and the body handed to end().
        resolve({ status: res.statusCode, head: res._header, body: args[0] });
      };
      if (started.hasSubscribers) started.publish(message);
      server.emit('request', req, res);
    });

  if (isApp) await send('/health/live'); // the references have no such route
  if (kind === 'capture') {
    const ok = await send('/v1/pricing');
    const headers200 = headerFields(ok.head);
    const notModified = await send('/v1/pricing', { 'if-none-match': headers200.etag });
    if (ok.status !== 200 || notModified.status !== 304)
      throw new Error(`the app answered ${ok.status}, ${notModified.status}`);
    const captured = { etag: headers200.etag, headers200, headers304: headerFields(notModified.head) };
    writeFileSync(`${answerFile}.json`, JSON.stringify(captured));
    writeFileSync(`${answerFile}.body`, ok.body);
  } else {
    const etag = isApp ? headerFields((await send('/v1/pricing')).head).etag : answer.etag;
    const headersOf = (status) => (status === 304 ? { 'if-none-match': etag } : {});
    for (const status of statuses.split(',').map(Number)) {
      for (let i = 0; i < 20_000; i++) await send('/v1/pricing', headersOf(status));
    }
    process.stdout.write('ready\n');
    // One run at each line `<status> <requests>` from the parent, its µs per request written back.
    for await (const line of createInterface({ input: process.stdin })) {
      const [status, requests] = line.split(' ').map(Number);
      const headers = headersOf(status);
      const before = process.cpuUsage();
      for (let i = 0; i < requests; i++) {
        const { status: got } = await send('/v1/pricing', headers);
        if (got !== status) throw new Error(`${got}, not ${status}`);
      }
      const used = process.cpuUsage(before);
      process.stdout.write(`${((used.user + used.system) / requests).toFixed(2)}\n`);
    }
  }
  await close();
  process.exit(0);
}

if (process.argv[2] === '--child') {
  await child(...process.argv.slice(3));
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const builds = process.argv.slice(2).map((arg) => (REFERENCES.includes(arg) ? [arg, arg] : arg.split('=')));
  if (builds.length < 2 || !builds.some(([, dist]) => !REFERENCES.includes(dist)) || !process.env.DATABASE_URL) {
    console.error('usage: DATABASE_URL=postgres://... node bench/pricing-path-cost.mjs floor app=<dist> [express] ...');
    process.exit(2);
  }
  const results = await pathCost({
    databaseUrl: process.env.DATABASE_URL,
    builds,
    statuses: (process.env.BENCH_STATUS ?? '200,304').split(',').map(Number),
    cpu: process.env.BENCH_CPU,
    runs: Number(process.env.BENCH_RUNS ?? 12),
    requests: Number(process.env.BENCH_REQUESTS ?? 10_000),
  });
  const first = builds[0][0];
  for (const [status, byBuild] of Object.entries(results)) {
    for (const [name, r] of Object.entries(byBuild)) {
      const q = (x, digits) =>
        `${x.median.toFixed(digits)} (quartiles ${x.q1.toFixed(digits)}–${x.q3.toFixed(digits)})`;
      console.log(
        `${status}\t${name}\tmedian ${r.medianUs.toFixed(2)} µs\t− ${first}: ${q(r.aboveFirst, 2)} µs\t÷ ${first}: ${q(r.ratio, 3)}\tn=${r.us.length}`,
      );
    }
  }
}
