import type { Options as RateLimitOptions } from 'express-rate-limit';
import { ReconnectingRedisStore } from './price-list.handler';

/** A stand-in for Redis's command interface: down until `up` is set, then a tiny EVALSHA. */
function fakeRedis(): { up: boolean; calls: string[]; send: (...command: string[]) => Promise<unknown> } {
  const fake = {
    up: false,
    calls: [] as string[],
    send: (...command: string[]): Promise<unknown> => {
      fake.calls.push(command[0]);
      if (!fake.up) return Promise.reject(new Error('Connection is closed.'));
      if (command[0] === 'SCRIPT') return Promise.resolve('sha-1');
      return Promise.resolve([1, 60_000]);
    },
  };
  return fake;
}

describe('ReconnectingRedisStore', () => {
  it('counts again once Redis is back, although its script could not be loaded at start-up', async () => {
    const redis = fakeRedis();
    const store = new ReconnectingRedisStore({ sendCommand: redis.send as never });
    await expect(store.init({ windowMs: 60_000 } as RateLimitOptions)).rejects.toThrow('Connection is closed.');
    await expect(store.increment('1.2.3.4')).rejects.toThrow('Connection is closed.');

    redis.up = true;
    // The failure above reloaded the script: this increment waits for it and counts.
    await expect(store.increment('1.2.3.4')).resolves.toMatchObject({ totalHits: 1 });
    expect(redis.calls.filter((c) => c === 'EVALSHA')).toHaveLength(1);
  });
});
