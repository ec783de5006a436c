// CPU time of one GET /v1/pricing through the whole app (Express, Nest, the controller), in
// process and without sockets, for builds of the service compared with one another and with two
// references serving the app's own answer: bare Express (`express`, as bench/baseline-express.mjs)
// and the Nest floor (`floor`, bench/nest/floor.main.ts: one controller writing the same bytes).
// usage: DATABASE_URL=postgres://... node bench/pricing-path-cost.mjs [express] [floor] <name>=<dist dir> ...
// The first build's 200 and 304 (their bytes and headers) are what the references serve. Each build runs in
// a child process of its own (the same script with --child), in turns, for BENCH_ROUNDS turns
// (4); a turn warms up, then times 5 runs of BENCH_REQUESTS requests (30,000) with
// process.cpuUsage(). A request to /health/live goes first, as probes do in production. The
// HTTP server's 'request' event is emitted (so that its listeners run, as in main.ts) and Node's
// http.server diagnostics channels are published as the server would. BENCH_STATUS=304 sends
// If-None-Match with the ETag instead. BENCH_CPU pins every child to that CPU (taskset), which
// steadies the figures on a machine with other work. Prints the median and minimum µs per request
// of each and the difference to the first.
// BENCH_SIDE_BY_SIDE=1, for a machine whose load changes from one turn to the next: every build's
// child starts at once (on BENCH_CPU if set), warms up, then all time BENCH_REQUESTS requests
// (10,000) at the same signal, BENCH_RUNS times (12); prints each build's median µs and the median
// and quartiles of its ratio to the first build within each run, which a change of load hits alike.
// Used for "Cost of metrics and logs" and "What is left on the public route's path" in docs/benchmarks.md.
import { Buffer } from 'node:buffer';
import { execFileSync, spawn } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const sideBySide = process.env.BENCH_SIDE_BY_SIDE === '1';
const requests = Number(process.env.BENCH_REQUESTS ?? (sideBySide ? 10_000 : 30_000));
const status = Number(process.env.BENCH_STATUS ?? 200);
const REFERENCES = ['express', 'floor'];

if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv[4], process.argv[5]);
} else {
  const builds = process.argv.slice(2).map((arg) => (REFERENCES.includes(arg) ? [arg, arg] : arg.split('=')));
  const dists = builds.filter(([, dist]) => !REFERENCES.includes(dist));
  if (builds.length < 2 || dists.length === 0 || !process.env.DATABASE_URL) {
    console.error(
      'usage: DATABASE_URL=postgres://... node bench/pricing-path-cost.mjs [express] [floor] <name>=<dist> ...',
    );
    process.exit(2);
  }
  const work = mkdtempSync(join(tmpdir(), 'path-cost-'));
  const answerFile = join(work, 'answer.json');
  const run = (args) =>
    execFileSync(
      process.env.BENCH_CPU ? 'taskset' : process.execPath,
      [
        ...(process.env.BENCH_CPU ? ['-c', process.env.BENCH_CPU, process.execPath] : []),
        fileURLToPath(import.meta.url),
        ...args,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    ).toString();
  // The first build's answer, for the references to serve.
  writeFileSync(answerFile, /^answer: (.*)$/m.exec(run(['--child', 'capture', resolve(dists[0][1])]))[1]);
  if (sideBySide) {
    try {
      await sideBySideRuns(builds, dists, answerFile);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    process.exit(0);
  }
  const samples = new Map(builds.map(([name]) => [name, []]));
  try {
    for (let round = 0; round < Number(process.env.BENCH_ROUNDS ?? 4); round++) {
      for (const [name, dist] of builds) {
        const kind = REFERENCES.includes(dist) ? dist : 'app';
        const out = run(['--child', kind, resolve(kind === 'app' ? dist : dists[0][1]), answerFile]);
        const times = /^µs per request: (.*)$/m.exec(out)[1].split(' ').map(Number);
        samples.get(name).push(...times);
        console.error(`round ${round + 1} ${name}: ${times.join(' ')} µs`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [first] = builds[0];
  for (const [name, xs] of samples) {
    const m = median(xs);
    const diff = m - median(samples.get(first));
    console.log(
      `${name}\tmedian ${m.toFixed(2)} µs\tmin ${Math.min(...xs).toFixed(2)} µs\t${diff >= 0 ? '+' : ''}${diff.toFixed(2)} µs (${((m / median(samples.get(first)) - 1) * 100).toFixed(1)} %)\tn=${xs.length}`,
    );
  }
}

/** BENCH_SIDE_BY_SIDE: every build's child at once, timing the same runs at the same signals. */
async function sideBySideRuns(builds, dists, answerFile) {
  const children = builds.map(([name, dist]) => {
    const kind = REFERENCES.includes(dist) ? dist : 'app';
    const args = [
      fileURLToPath(import.meta.url),
      '--child',
      kind,
      resolve(kind === 'app' ? dist : dists[0][1]),
      answerFile,
    ];
    const proc = process.env.BENCH_CPU
      ? spawn('taskset', ['-c', process.env.BENCH_CPU, process.execPath, ...args], {
          stdio: ['pipe', 'pipe', 'ignore'],
        })
      : spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
    return { name, proc, line: async () => (await lines.next()).value };
  });
  for (const child of children) if ((await child.line()) !== 'ready') throw new Error(`${child.name} did not start`);
  const times = new Map(builds.map(([name]) => [name, []]));
  const ratios = new Map(builds.map(([name]) => [name, []]));
  for (let run = 0; run < Number(process.env.BENCH_RUNS ?? 12); run++) {
    for (const child of children) child.proc.stdin.write('go\n');
    const got = await Promise.all(children.map((child) => child.line().then(Number)));
    got.forEach((µs, i) => {
      times.get(builds[i][0]).push(µs);
      ratios.get(builds[i][0]).push(µs / got[0]);
    });
    console.error(`run ${run + 1}: ${got.map((µs, i) => `${builds[i][0]} ${µs}`).join('  ')} µs`);
  }
  for (const child of children) child.proc.stdin.end();
  const sorted = (xs) => [...xs].sort((a, b) => a - b);
  const at = (xs, q) => sorted(xs)[Math.floor(xs.length * q)];
  for (const [name, xs] of times) {
    const r = ratios.get(name);
    console.log(
      `${name}\tmedian ${at(xs, 0.5).toFixed(2)} µs\tmin ${Math.min(...xs).toFixed(2)} µs\t÷ ${builds[0][0]}: ${at(r, 0.5).toFixed(3)} (quartiles ${at(r, 0.25).toFixed(3)}–${at(r, 0.75).toFixed(3)})\tn=${xs.length}`,
    );
  }
}

/** The app as main.ts builds it (its HttpDrain included), in this process. */
async function startApp(dist) {
  const load = createRequire(`${dist}/`);
  const { NestFactory } = createRequire(import.meta.url)('@nestjs/core');
  const controlPlane = load('./apps/control-plane/src');
  const { PricingService } = load('./libs/pricing/src');
  const drain = (() => {
    try {
      return load('./apps/control-plane/src/lifecycle/http-drain');
    } catch {
      return {}; // a build from before it
    }
  })();
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    METRICS_PORT: 'off',
    LOG_LEVEL: 'error',
    PRICING_RATE_LIMIT: '100000000',
  };
  const config = controlPlane.loadConfig(env);
  const app = await NestFactory.create(controlPlane.AppModule.forRoot(config, config.databaseUrl), {
    bodyParser: false,
    logger: false,
  });
  if (drain.HttpDrain) new drain.HttpDrain(app.getHttpServer());
  controlPlane.configureExpress(app, config);
  await app.init();
  await app.get(PricingService).whenReady();
  return { server: app.getHttpServer(), close: () => app.close() };
}

/**
 * Bare Express (bench/baseline-express.mjs), or the Nest floor, serving `answer`: the app's own
 * 200 and 304, as bench/run.mjs gives them to its baselines.
 */
async function startReference(kind, dist, answer) {
  const body = Buffer.from(answer.body, 'base64');
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

async function child(kind, dist, answerFile) {
  const answer = answerFile && JSON.parse(readFileSync(answerFile, 'utf8'));
  const { server, close } =
    kind === 'app' || kind === 'capture' ? await startApp(dist) : await startReference(kind, dist, answer);
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

  if (kind === 'app' || kind === 'capture') await send('/health/live'); // the references have no such route
  if (kind === 'capture') {
    const ok = await send('/v1/pricing');
    const headers200 = headerFields(ok.head);
    const notModified = await send('/v1/pricing', { 'if-none-match': headers200.etag });
    const captured = {
      etag: headers200.etag,
      headers200,
      headers304: headerFields(notModified.head),
      body: Buffer.from(ok.body).toString('base64'),
    };
    process.stdout.write(`answer: ${JSON.stringify(captured)}\n`);
  } else {
    const headers = status === 304 ? { 'if-none-match': answer.etag } : {};
    for (let i = 0; i < 20_000; i++) await send('/v1/pricing', headers);
    if (sideBySide) {
      // One run at each `go` from the parent, its µs per request written back.
      process.stdout.write('ready\n');
      for await (const line of createInterface({ input: process.stdin })) {
        if (line !== 'go') break;
        const before = process.cpuUsage();
        for (let i = 0; i < requests; i++) {
          const { status: got } = await send('/v1/pricing', headers);
          if (got !== status) throw new Error(`${got}, not ${status}`);
        }
        const used = process.cpuUsage(before);
        process.stdout.write(`${((used.user + used.system) / requests).toFixed(2)}\n`);
      }
      await close();
      process.exit(0);
    }
    const times = [];
    for (let run = 0; run < 5; run++) {
      const before = process.cpuUsage();
      for (let i = 0; i < requests; i++) {
        const { status: got } = await send('/v1/pricing', headers);
        if (got !== status) throw new Error(`${got}, not ${status}`);
      }
      const used = process.cpuUsage(before);
      times.push(((used.user + used.system) / requests).toFixed(2));
    }
    process.stdout.write(`µs per request: ${times.join(' ')}\n`);
  }
  await close();
  process.exit(0);
}
