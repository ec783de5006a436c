import { Logger } from '@nestjs/common';
import { MetricsServer } from '@app/control-plane';
import { PricingService } from '@app/pricing';
import { Agent, get } from 'node:http';
import { dribbledHeads, median } from './support/hostile-load';
import { occupyPort, send } from './support/http';
import { rawRequest } from './support/raw-http';
import { applyBook, useTestDatabase } from './support/database';
import { startTestApp, type TestApp } from './support/test-app';

const TOKEN = 'metrics-e2e-token-0123456789';
const HEADERS_TIMEOUT_S = 2;
const price = (product_key: string, amount: string) => ({
  product_key,
  unit_type: 'seconds',
  unit_count: 3600,
  amount,
  valid_from: '2026-01-01T00:00:00Z',
});
const BOOK = { prices: [price('compute.g2.4', '0.0610'), price('compute.g2.8', '0.1220')] };

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The samples of a Prometheus text exposition. */
function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m) throw new Error(`not a sample: ${line}`);
      const labels = Object.fromEntries(
        [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
      );
      return { name: m[1], labels, value: Number(m[3]) };
    });
}

/** Allocates until the young generation is collected, then lets the GC observers run. */
async function aGarbageCollection(): Promise<void> {
  const ring: unknown[] = new Array(1024);
  for (let i = 0; i < 1_000_000; i++) ring[i % ring.length] = new Array(16).fill(i); // about 150 MB in all
  await new Promise((resolve) => setTimeout(resolve, 50));
}

/** The value of one sample, 0 when it is not there (a counter not moved yet). */
function valueOf(all: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = all.filter(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

const TIMED = 'http_server_request_duration_seconds_count';

/** How many requests of the given labels were timed between two scrapes. */
function timedBetween(before: Sample[], after: Sample[]): (labels: Record<string, string>) => number {
  return (labels) => valueOf(after, TIMED, labels) - valueOf(before, TIMED, labels);
}

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return samples(await res.text());
}

describe('metrics', () => {
  const t = useTestDatabase({
    book: BOOK,
    app: {
      env: {
        API_TOKENS: TOKEN,
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
        HTTP_HEADERS_TIMEOUT_S: String(HEADERS_TIMEOUT_S),
      },
      listen: true,
    },
  });
  let app: TestApp;
  let metricsUrl: string;
  beforeAll(() => {
    app = t.app;
    metricsUrl = app.app.get(MetricsServer).url!;
  });

  it('serves /metrics on METRICS_PORT only: the public port answers 404', async () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(metricsUrl).port).not.toBe(new URL(app.url!).port);
    expect((await send(app, 'GET', {}, '/metrics')).status).toBe(404);
    const other = await fetch(new URL('/v1/pricing', metricsUrl));
    expect(other.status).toBe(404); // and the metrics port serves nothing else
  });

  // Node's defaults on the metrics port held a dribbled head for up to 90 s (60 s, checked every
  // 30 s), and closed idle connections after 5 s, below a scraper's or a proxy's idle timeout.
  it('has the API’s timeouts: drops 200 clients dribbling their heads after HTTP_HEADERS_TIMEOUT_S, scraping meanwhile, and keeps idle connections HTTP_KEEP_ALIVE_TIMEOUT_S', async () => {
    const port = Number(new URL(metricsUrl).port);
    const { probesMs, droppedAfterMs } = await dribbledHeads(
      port,
      'GET /metrics HTTP/1.1\r\nHost: metrics.test\r\n',
      () => rawRequest(port, 'GET', '/metrics'),
      { probeForMs: HEADERS_TIMEOUT_S * 1000, closeWithinMs: (HEADERS_TIMEOUT_S + 3) * 1000 },
    );
    expect(median(probesMs)).toBeLessThan(250);
    expect(Math.max(...droppedAfterMs)).toBeLessThan((HEADERS_TIMEOUT_S + 3) * 1000);

    const agent = new Agent({ keepAlive: true });
    try {
      const keepAlive = await new Promise<string | string[] | undefined>((resolve, reject) => {
        get(metricsUrl, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers['keep-alive']));
        }).on('error', reject);
      });
      expect(keepAlive).toBe('timeout=65');
    } finally {
      agent.destroy();
    }
  }, 30_000);

  it('has every documented metric and the default process and Node.js metrics', async () => {
    await send(app); // one request, so that the request histogram has a series
    await aGarbageCollection(); // the GC histogram has a series from the first collection it saw on
    const names = new Set((await scrape(metricsUrl)).map((s) => s.name));
    for (const name of [
      'pricing_price_list_responses_total',
      'pricing_snapshot_age_seconds',
      'pricing_list_prices',
      'pricing_snapshot_build_seconds_bucket',
      'pricing_snapshot_build_seconds_count',
      'pricing_price_list_render_failures_total',
      'http_server_request_duration_seconds_bucket',
      'http_server_request_duration_seconds_count',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_gc_duration_seconds_count',
    ]) {
      expect([name, names.has(name)]).toEqual([name, true]);
    }
  });

  it('counts every answer of GET /v1/pricing by status: 200, 304, 405, and times it under route /v1/pricing', async () => {
    const before = await scrape(metricsUrl);
    const first = await send(app);
    await send(app, 'HEAD');
    await send(app, 'GET', {}, '/v1/pricing?x=1');
    await send(app, 'GET', { 'if-none-match': first.headers.etag });
    await send(app, 'POST');
    await send(app, 'OPTIONS');
    const after = await scrape(metricsUrl);
    const moved = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    const responses = 'pricing_price_list_responses_total';
    expect([200, 304, 405, 429, 503].map((status) => moved(responses, { status: String(status) }))).toEqual([
      3, 1, 2, 0, 0,
    ]);
    const timed = 'http_server_request_duration_seconds_count';
    expect(moved(timed, { method: 'GET', route: '/v1/pricing', status_code: '200' })).toBe(2);
    expect(moved(timed, { method: 'HEAD', route: '/v1/pricing', status_code: '200' })).toBe(1);
    expect(moved(timed, { method: 'GET', route: '/v1/pricing', status_code: '304' })).toBe(1);
    expect(moved(timed, { method: 'POST', route: '/v1/pricing', status_code: '405' })).toBe(1);
  });

  it('times every other request under its route pattern, never the raw path', async () => {
    const before = await scrape(metricsUrl);
    const id = '6f1e0c1a-2b3c-4d5e-8f90-123456789abc';
    await send(app, 'GET', { authorization: `Bearer ${TOKEN}` }, `/v1/volumes/${id}`);
    await send(app, 'GET', {}, `/v1/volumes/${id}`);
    await send(app, 'GET', {}, '/no/such/path');
    await send(app, 'GET', {}, '/health/live');
    const after = await scrape(metricsUrl);
    const moved = timedBetween(before, after);
    expect(moved({ method: 'GET', route: '/v1/volumes/:id', status_code: '404' })).toBe(1);
    expect(moved({ method: 'GET', route: '/v1/volumes/:id', status_code: '401' })).toBe(1);
    expect(moved({ method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(moved({ method: 'GET', route: '/health/live', status_code: '200' })).toBe(1);
    expect(after.some((s) => s.labels.route?.includes(id))).toBe(false);
  });

  it('labels methods beyond HTTP’s own as _OTHER: a client cannot choose label values', async () => {
    const before = await scrape(metricsUrl);
    for (const method of ['PROPFIND', 'PURGE', 'MKCOL']) await send(app, method, {}, '/v1/pricing');
    await send(app, 'PATCH', {}, '/v1/pricing');
    const after = await scrape(metricsUrl);
    const moved = timedBetween(before, after);
    expect(moved({ method: '_OTHER', route: '/v1/pricing', status_code: '405' })).toBe(3);
    expect(moved({ method: 'PATCH', route: '/v1/pricing', status_code: '405' })).toBe(1);
    const methods = new Set(after.filter((s) => s.name === TIMED).map((s) => s.labels.method));
    expect([...methods].filter((m) => !['GET', 'HEAD', 'POST', 'PATCH', 'OPTIONS', '_OTHER'].includes(m))).toEqual([]);
  });

  it('follows the prices: list prices in force, snapshot builds, the age since the database confirmed them', async () => {
    const before = await scrape(metricsUrl);
    expect(valueOf(before, 'pricing_list_prices')).toBe(2);
    const age = valueOf(before, 'pricing_snapshot_age_seconds');
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(60);
    await applyBook(t.dataSource, { prices: [price('compute.g2.16', '0.2440')] });
    await app.app.get(PricingService).refresh();
    const after = await scrape(metricsUrl);
    expect(valueOf(after, 'pricing_list_prices')).toBe(3);
    const builds = (all: Sample[]) => valueOf(all, 'pricing_snapshot_build_seconds_count');
    expect(builds(after) - builds(before)).toBe(1);
    expect(valueOf(after, 'pricing_snapshot_build_seconds_sum')).toBeGreaterThan(0);
  });

  it('counts lists that did not render, present at 0 from the start', async () => {
    const failures = (await scrape(metricsUrl)).filter((s) => s.name === 'pricing_price_list_render_failures_total');
    expect(failures.map((s) => [s.labels, s.value])).toEqual([[{}, 0]]);
  });

  it('counts 429s, in an app of its own whose registry does not collide with this one', async () => {
    const limited = await startTestApp({
      databaseUrl: t.url,
      // An hour's window: one that turned between the two requests would let the second through.
      env: { HOST: '127.0.0.1', METRICS_PORT: '0', PRICING_RATE_LIMIT: '1', PRICING_RATE_WINDOW_S: '3600' },
      listen: true,
    });
    try {
      expect((await send(limited)).status).toBe(200);
      expect((await send(limited)).status).toBe(429);
      const own = await scrape(limited.app.get(MetricsServer).url!);
      expect(valueOf(own, 'pricing_price_list_responses_total', { status: '429' })).toBe(1);
      expect(valueOf(own, 'pricing_price_list_responses_total', { status: '200' })).toBe(1);
      const first = await scrape(metricsUrl);
      expect(valueOf(first, 'pricing_price_list_responses_total', { status: '429' })).toBe(0);
    } finally {
      await limited.close();
    }
  });

  it('when METRICS_PORT is taken: logs a warning, serves the API without metrics, never crashes', async () => {
    const taken = await occupyPort();
    const warn = jest.spyOn(Logger.prototype, 'warn');
    let other: TestApp | undefined;
    try {
      other = await startTestApp({
        databaseUrl: t.url,
        env: { HOST: '127.0.0.1', METRICS_PORT: String(taken.port) },
        listen: true,
      });
      expect((await send(other)).status).toBe(200);
      expect(other.app.get(MetricsServer).url).toBeUndefined();
      expect(warn).toHaveBeenCalledWith(
        expect.stringMatching(
          new RegExp(`^cannot serve metrics on 127\\.0\\.0\\.1:${taken.port} .*EADDRINUSE.*serving without metrics$`),
        ),
      );
    } finally {
      warn.mockRestore();
      await other?.close();
      taken.server.close();
    }
  });

  it('serves no metrics with METRICS_PORT=off', async () => {
    const off = await startTestApp({ databaseUrl: t.url, env: { HOST: '127.0.0.1', METRICS_PORT: 'off' } });
    try {
      expect(off.app.get(MetricsServer).url).toBeUndefined();
    } finally {
      await off.close();
    }
  });
});
