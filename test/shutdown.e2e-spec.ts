import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { Agent, get as httpGet } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SAMPLE_PRICE_BOOK } from '@app/control-plane';
import { useTestDatabase } from './support/database';
import { waitFor } from './support/http';
import { tcpSockets } from './support/proc-net';
import { startService, waitUntilReady, type Service } from './support/service';
import { passableTempDir } from './support/temp-dir';

// Shutdown on SIGTERM/SIGINT (docs/operations.md, "Shutdown"): readiness turns 503 at once, requests
// in flight finish, keep-alive connections close after their current response, and the process
// exits within SHUTDOWN_TIMEOUT_S even while clients keep sending. The service in a process of
// its own, as `npm start` runs it.

const TOKEN = 'shutdown-e2e-token-0123456789';

const db = useTestDatabase({ book: async () => JSON.parse(await readFile(SAMPLE_PRICE_BOOK, 'utf8')) as unknown });
const running: Service[] = [];

afterEach(async () => {
  for (const service of running.splice(0)) {
    service.process.kill('SIGKILL');
    await service.exited;
  }
});

async function start(env: Record<string, string> = {}): Promise<Service> {
  const service = await startService({
    DATABASE_URL: db.url,
    API_TOKENS: TOKEN,
    PRICING_RATE_LIMIT: '1000000',
    ...env,
  });
  running.push(service);
  await waitUntilReady(service);
  return service;
}

/** Sends the signal, and resolves with the exit code and how long the process took to exit. */
async function stopWith(service: Service, signal: NodeJS.Signals): Promise<{ code: number | null; ms: number }> {
  const sentAt = performance.now();
  service.process.kill(signal);
  const code = await service.exited;
  running.splice(running.indexOf(service), 1);
  return { code, ms: performance.now() - sentAt };
}

/** A raw connection to the service, for requests sent a piece at a time. */
interface RawConnection {
  readonly socket: Socket;
  /** Everything the service sent until it closed the connection. */
  readonly received: Promise<string>;
  /** Resolves once the service has accepted the connection and read all that was sent (Linux: /proc). */
  allRead(): Promise<void>;
}

async function openRaw(service: Service): Promise<RawConnection> {
  const socket = connect(service.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
  const received = new Promise<string>((resolve) => socket.once('close', () => resolve(data)));
  socket.on('error', () => undefined);
  return {
    socket,
    received,
    allRead: async () => {
      await waitFor(
        'the service to read what was sent',
        tcpSockets,
        (sockets) =>
          sockets.some(
            (s) =>
              s.localPort === service.port && s.remotePort === socket.localPort && s.inode !== '0' && s.unread === 0,
          ),
        5_000,
        10,
      );
    },
  };
}

/** Status, headers and body of the one response in `raw`. */
function parseResponse(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = raw.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(end + 4) };
}

describe('shutdown', () => {
  it('keep-alive clients that never pause: every response complete, the process gone in time', async () => {
    const service = await start({ SHUTDOWN_TIMEOUT_S: '10' });
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const outcome = { complete: 0, completeAfterSignal: 0, cutShort: [] as string[], failed: [] as string[] };
    let signalled = false;

    /** One request; 'refused' once the service no longer takes connections. */
    const request = (): Promise<'done' | 'refused'> =>
      new Promise((resolve) => {
        let responded = false;
        const req = httpGet(`${service.url}/v1/pricing`, { agent }, (res) => {
          responded = true;
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const length = Buffer.concat(chunks).length;
            if (res.statusCode === 200 && res.complete && length === Number(res.headers['content-length'])) {
              outcome.complete += 1;
              if (signalled) outcome.completeAfterSignal += 1;
            } else {
              outcome.cutShort.push(`${res.statusCode} with ${length} of ${res.headers['content-length']} bytes`);
            }
            resolve('done');
          });
        });
        req.on('error', (error: NodeJS.ErrnoException) => {
          if (responded) outcome.cutShort.push(`${error.code}: ${error.message}`);
          else if (error.code === 'ECONNREFUSED') return resolve('refused');
          else outcome.failed.push(`${error.code}: ${error.message}`);
          resolve('done');
        });
      });
    const client = async (): Promise<void> => {
      while ((await request()) !== 'refused');
    };
    const clients = Promise.all([client(), client(), client(), client()]);

    await waitFor(
      'responses before the signal',
      () => Promise.resolve(outcome.complete),
      (n) => n >= 200,
      20_000,
    );
    signalled = true;
    const { code, ms } = await stopWith(service, 'SIGTERM');
    await clients;
    agent.destroy();

    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
    expect(outcome.cutShort).toEqual([]);
    expect(outcome.failed).toEqual([]);
    expect(outcome.completeAfterSignal).toBeGreaterThan(0); // requests in flight at the signal were answered
    expect(service.output()).not.toContain('SHUTDOWN_TIMEOUT_S');
  }, 40_000);

  it('readiness answers 503 from the signal on, while requests in flight finish and their connections close', async () => {
    const service = await start({ SHUTDOWN_TIMEOUT_S: '10' });
    // A readiness probe whose request is not complete yet, and a volume order whose body is.
    const probe = await openRaw(service);
    probe.socket.write('GET /health/ready HTTP/1.1\r\nHost: test\r\n');
    const order = await openRaw(service);
    const body = JSON.stringify({ name: 'slow-1', size_gib: 10, storage_class: 'gp1' });
    order.socket.write(
      `POST /v1/volumes HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await probe.allRead();
    await order.allRead();

    service.process.kill('SIGTERM');
    await service.waitForOutput('SIGTERM: shutting down');
    // No new connection is taken.
    const refused = await new Promise<string>((resolve) =>
      connect(service.port, '127.0.0.1')
        .once('connect', () => resolve('connected'))
        .once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error')),
    );
    expect(refused).toBe('ECONNREFUSED');

    probe.socket.write('\r\n');
    const ready = parseResponse(await probe.received);
    expect(ready.status).toBe(503);
    expect(ready.headers.connection).toBe('close');
    expect(JSON.parse(ready.body)).toMatchObject({ status: 'stopping' });

    order.socket.write(body.slice(10));
    const created = parseResponse(await order.received);
    expect(created.status).toBe(201);
    expect(created.headers.connection).toBe('close');
    expect(JSON.parse(created.body)).toMatchObject({ name: 'slow-1', size_gib: 10, storage_class: 'gp1' });

    expect(await service.exited).toBe(0);
    running.splice(running.indexOf(service), 1);
  }, 40_000);

  it('closes the connections still open at SHUTDOWN_TIMEOUT_S and exits', async () => {
    const service = await start({ SHUTDOWN_TIMEOUT_S: '2' });
    const stuck = await openRaw(service);
    stuck.socket.write('GET /health/ready HTTP/1.1\r\nHost: test\r\n'); // never finished
    await stuck.allRead();

    const { code, ms } = await stopWith(service, 'SIGTERM');
    expect(code).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(2_000 - 100);
    expect(ms).toBeLessThan(2_000 + 3_000);
    expect(await stuck.received).toBe(''); // closed without an answer
    expect(service.output()).toContain('closed the connections still open after SHUTDOWN_TIMEOUT_S (2 s)');
  }, 30_000);
});

describe('a second signal', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await passableTempDir('pricing-shutdown');
  });

  afterAll(async () => {
    // A PostgreSQL left running by a process that was killed (its PID is in postmaster.pid).
    const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
    if (existsSync(pidFile)) {
      const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGINT');
      await waitFor(
        'the orphan PostgreSQL to stop',
        () => Promise.resolve(existsSync(pidFile)),
        (e) => !e,
        10_000,
      );
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('closes every connection at once, and still stops the embedded PostgreSQL cleanly', async () => {
    const service = await startService({ DATA_DIR: dataDir, SHUTDOWN_TIMEOUT_S: '60' });
    running.push(service);
    await waitUntilReady(service);
    const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
    expect(existsSync(pidFile)).toBe(true);
    const stuck = await openRaw(service);
    stuck.socket.write('GET /health/ready HTTP/1.1\r\nHost: test\r\n'); // never finished
    await stuck.allRead();

    service.process.kill('SIGTERM');
    await service.waitForOutput('SIGTERM: shutting down');
    const { code, ms } = await stopWith(service, 'SIGINT');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
    expect(await stuck.received).toBe('');
    expect(service.output()).toContain('SIGINT again');
    expect(existsSync(pidFile)).toBe(false); // PostgreSQL stopped with the service
  }, 60_000);
});
