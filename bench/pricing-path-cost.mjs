// CPU time of one GET /v1/pricing through the whole app (Express, Nest, the controller), in
// process and without sockets, for builds of the service compared with one another.
// usage: DATABASE_URL=postgres://... node bench/pricing-path-cost.mjs <name>=<dist dir> <name>=<dist dir> ...
// Each build runs in a child process of its own (the same script with --child), in turns, for
// BENCH_ROUNDS turns (4); a turn warms up, then times 5 runs of BENCH_REQUESTS requests (30,000)
// with process.cpuUsage(). A request to /health/live goes first, as probes do in production.
// Node's http.server diagnostics channels are published as the HTTP server would. Prints the
// median and minimum µs per request of each build and the difference to the first.
// Used for "Cost of metrics and logs" in docs/benchmarks.md (with bench/compare-builds.mjs).
import { execFileSync } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const requests = Number(process.env.BENCH_REQUESTS ?? 30_000);

if (process.argv[2] === '--child') {
  await child(process.argv[3]);
} else {
  const builds = process.argv.slice(2).map((arg) => arg.split('='));
  if (builds.length < 2 || !process.env.DATABASE_URL) {
    console.error(
      'usage: DATABASE_URL=postgres://... node bench/pricing-path-cost.mjs <name>=<dist> <name>=<dist> ...',
    );
    process.exit(2);
  }
  const samples = new Map(builds.map(([name]) => [name, []]));
  for (let round = 0; round < Number(process.env.BENCH_ROUNDS ?? 4); round++) {
    for (const [name, dist] of builds) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', resolve(dist)], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const times = /^µs per request: (.*)$/m.exec(out.toString())[1].split(' ').map(Number);
      samples.get(name).push(...times);
      console.error(`round ${round + 1} ${name}: ${times.join(' ')} µs`);
    }
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

async function child(dist) {
  const load = createRequire(`${dist}/`);
  const { NestFactory } = createRequire(import.meta.url)('@nestjs/core');
  const controlPlane = load('./apps/control-plane/src');
  const { PricingService } = load('./libs/pricing/src');
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
  controlPlane.configureExpress(app, config);
  await app.init();
  await app.get(PricingService).whenReady();
  const express = app.getHttpAdapter().getInstance();
  const server = app.getHttpServer();
  const started = channel('http.server.request.start');
  const finished = channel('http.server.response.finish');

  /** One request, as the HTTP server would hand it over; resolves with the status. */
  const send = (url) =>
    new Promise((resolve) => {
      const req = new IncomingMessage(new Socket());
      Object.assign(req, { method: 'GET', url, headers: {} });
      const res = new ServerResponse(req);
      const message = { request: req, response: res, socket: req.socket, server };
      const end = res.end;
      res.end = function (...args) {
        end.apply(this, args);
        res.emit('finish');
        if (finished.hasSubscribers) finished.publish(message);
        res.emit('close');
        resolve(res.statusCode);
      };
      if (started.hasSubscribers) started.publish(message);
      express(req, res);
    });

  await send('/health/live');
  for (let i = 0; i < 20_000; i++) await send('/v1/pricing');
  const times = [];
  for (let run = 0; run < 5; run++) {
    const before = process.cpuUsage();
    for (let i = 0; i < requests; i++) if ((await send('/v1/pricing')) !== 200) throw new Error('not 200');
    const used = process.cpuUsage(before);
    times.push(((used.user + used.system) / requests).toFixed(2));
  }
  process.stdout.write(`µs per request: ${times.join(' ')}\n`);
  await app.close();
  process.exit(0);
}
