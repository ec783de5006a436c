import type { Server } from 'node:net';
import { listPrice } from '@app/pricing/testing';
import { useTestDatabase } from './support/database';
import { occupyPort, waitFor } from './support/http';
import { startService, type Service as RunningService } from './support/service';

const TOKEN = 'logs-e2e-token-0123456789';
const WRONG_TOKEN = 'wrong-token-abcdefghijklmnop';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const BOOK = { prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z')] };

interface LogLine {
  readonly level: string;
  readonly time: string;
  readonly msg: string;
  readonly context?: string;
  readonly request_id?: string;
  readonly req?: { id: string; method: string; url: string };
  readonly res?: { statusCode: number };
}

async function call(
  service: RunningService,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; requestId: string | null; text: string }> {
  const res = await fetch(`${service.url}${path}`, init);
  return { status: res.status, requestId: res.headers.get('x-request-id'), text: await res.text() };
}

async function whenReady(service: RunningService): Promise<void> {
  await waitFor(
    'the service to be ready',
    () => call(service, '/health/ready').catch(() => ({ status: 0 })),
    (r) => r.status === 200,
    30_000,
    50,
  );
}

describe('logs of the service as npm start runs it', () => {
  let taken: { server: Server; port: number };
  const running: RunningService[] = [];

  afterAll(async () => {
    // Declared first: runs before the database is dropped.
    await Promise.all(running.map((service) => service.stop()));
    taken?.server.close();
  });
  const db = useTestDatabase({ book: BOOK });

  beforeAll(async () => {
    taken = await occupyPort();
  });

  async function start(env: Record<string, string>): Promise<RunningService> {
    const service = await startService({ DATABASE_URL: db.url, API_TOKENS: TOKEN, ...env });
    running.push(service);
    await whenReady(service);
    return service;
  }

  it('JSON lines on stdout: one per API request with its request id, none per answer of the price list’s resources, no secret', async () => {
    const service = await start({ METRICS_PORT: String(taken.port) });
    const auth = { authorization: `Bearer ${TOKEN}` };

    // The price list: answered, counted in metrics, not logged; no request id on a shared-cacheable answer.
    for (let i = 0; i < 5; i++) {
      const list = await call(service, '/v1/pricing', { headers: { 'x-request-id': `pricing-${i}` } });
      expect({ status: list.status, requestId: list.requestId }).toEqual({ status: 200, requestId: null });
    }
    // Nor the list at an instant and the change feed, which a shared cache stores too: whatever they answer.
    for (const [path, status] of [
      ['/v1/pricing/at/2026-06-01T00:00:00Z', 200],
      ['/v1/pricing/at/not-an-instant', 400],
      ['/v1/pricing/changes', 200],
      ['/v1/pricing/changes?limit=2', 200],
      ['/v1/pricing/changes?limit=0', 400],
    ] as const) {
      const past = await call(service, path, { headers: { 'x-request-id': 'past-list' } });
      expect({ path, status: past.status, requestId: past.requestId }).toEqual({ path, status, requestId: null });
    }
    // The client's id, when it is a sane token, is kept and echoed.
    const created = await call(service, '/v1/volumes', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'x-request-id': 'client-id.1' },
      body: JSON.stringify({ name: 'data-1', size_gib: 10, storage_class: 'gp1' }),
    });
    expect({ status: created.status, requestId: created.requestId }).toEqual({ status: 201, requestId: 'client-id.1' });
    const id = (JSON.parse(created.text) as { id: string }).id;
    // Otherwise one is generated: a new UUID per request.
    const unauthenticated = await call(service, `/v1/volumes/${id}`, { headers: { 'x-request-id': 'not a token!' } });
    const wrongToken = await call(service, `/v1/volumes/${id}`, {
      headers: { authorization: `Bearer ${WRONG_TOKEN}` },
    });
    expect([unauthenticated.status, wrongToken.status]).toEqual([401, 401]);
    expect(unauthenticated.requestId).toMatch(UUID);
    expect(wrongToken.requestId).toMatch(UUID);
    expect(wrongToken.requestId).not.toBe(unauthenticated.requestId);
    const read = await call(service, `/v1/volumes/${id}`, { headers: auth });
    expect(read.status).toBe(200);
    // Probes are not logged.
    expect((await call(service, '/health/live')).status).toBe(200);
    // An unexpected error: its line carries the request's id, and the request's line is an error.
    await db.dataSource.query(`ALTER TABLE volume ADD CONSTRAINT volume_refuses_boom CHECK (name <> 'boom')`);
    const failed = await call(service, '/v1/volumes', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'boom', size_gib: 10, storage_class: 'gp1' }),
    });
    expect(failed.status).toBe(500);

    expect(await service.stop()).toBe(0);
    expect(service.stderr()).toBe('');
    const lines = service
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine); // every line is JSON
    for (const line of lines) {
      expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(line.level);
      expect(new Date(line.time).toISOString()).toBe(line.time);
      expect(typeof line.msg).toBe('string');
      expect(typeof line.context).toBe('string');
    }
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'info', context: 'Main', msg: expect.stringMatching(/^listening on /) }),
    );
    // The metrics port was taken: a warning, and the API served all the same.
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        context: 'Metrics',
        msg: expect.stringMatching(
          new RegExp(`^cannot serve metrics on 127\\.0\\.0\\.1:${taken.port} .*serving without metrics$`),
        ),
      }),
    );

    const requests = lines.filter((line) => line.context === 'HTTP');
    expect(
      requests.map((line) => [line.level, line.req?.method, line.req?.url, line.res?.statusCode, line.request_id]),
    ).toEqual([
      ['info', 'POST', '/v1/volumes', 201, 'client-id.1'],
      ['info', 'GET', `/v1/volumes/${id}`, 401, unauthenticated.requestId],
      ['info', 'GET', `/v1/volumes/${id}`, 401, wrongToken.requestId],
      ['info', 'GET', `/v1/volumes/${id}`, 200, read.requestId],
      ['error', 'POST', '/v1/volumes', 500, failed.requestId],
    ]);
    expect(requests.every((line) => line.req?.id === line.request_id)).toBe(true);
    // The message names the method and the status: request text (the URL) only in its field, cut.
    expect(requests.map((line) => line.msg.replace(/ in \d+ ms$/, ''))).toEqual([
      'POST answered 201',
      'GET answered 401',
      'GET answered 401',
      'GET answered 200',
      'POST answered 500',
    ]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        context: 'ApiExceptionFilter',
        request_id: failed.requestId,
        msg: 'unexpected error',
        err: expect.objectContaining({ message: expect.stringContaining('volume_refuses_boom') }),
      }),
    );
    // Those are all the lines about requests: none for the price list's resources or the probes.
    expect(lines.filter((line) => line.req !== undefined)).toEqual(requests);
    await db.dataSource.query(`ALTER TABLE volume DROP CONSTRAINT volume_refuses_boom`);

    const password = new URL(db.url).password;
    const secrets = [TOKEN, WRONG_TOKEN, ...(password ? [decodeURIComponent(password), password] : [])];
    for (const secret of secrets) expect(service.stdout()).not.toContain(secret);
  }, 60_000);

  it('LOG_LEVEL filters, and LOG_FORMAT=pretty writes text for a person', async () => {
    const service = await start({ LOG_FORMAT: 'pretty', LOG_LEVEL: 'warn', METRICS_PORT: String(taken.port) });
    const volume = await call(service, '/v1/volumes/6f1e0c1a-2b3c-4d5e-8f90-123456789abc');
    expect(volume.status).toBe(401);
    expect(await service.stop()).toBe(0);
    const output = service.stdout();
    expect(output).toMatch(/WARN.*\(Metrics\).*cannot serve metrics on|WARN.*cannot serve metrics on/);
    expect(output).not.toContain('{"level"');
    expect(output).not.toContain('listening on'); // info, below LOG_LEVEL=warn
    expect(output).not.toContain('/v1/volumes'); // the request line is info too
  }, 60_000);
});
