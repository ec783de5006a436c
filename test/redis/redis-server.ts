import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '@app/control-plane';
import { Redis } from 'ioredis';

/** The Redis of the suite: REDIS_URL when set, else a redis-server of its own on a free port. */
export interface TestRedis {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  stop(): Promise<void>;
}

export async function startTestRedis(): Promise<TestRedis> {
  const given = process.env.REDIS_URL;
  if (given) {
    const url = new URL(given);
    return { url: given, host: url.hostname, port: Number(url.port || 6379), stop: () => Promise.resolve() };
  }
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
  probe.on('error', () => undefined);
  await probe.connect().catch(() => undefined);
  await probe.ping();
  probe.disconnect();
  return {
    url,
    host: '127.0.0.1',
    port,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
