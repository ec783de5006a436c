import { Client, type Notification } from 'pg';
import { expectApplied, expectNothingToChange, inDays, price, SAMPLE, useCliDatabase } from '../support/price-book-cli';
import { versionOf } from '../support/price-book-cli';

// Every write that changes the price book notifies the services (NOTIFY), and nothing else does.

const CHANNEL = 'pricing_price_book_changed';

describe('NOTIFY on change', () => {
  let listener: Client;
  const received: Notification[] = [];
  let wake: (() => void) | undefined;
  afterAll(async () => {
    await listener?.end(); // declared first: before the database is dropped
  });
  const f = useCliDatabase();

  beforeAll(async () => {
    listener = new Client({ connectionString: f.url });
    await listener.connect();
    listener.on('notification', (n) => {
      received.push(n);
      wake?.();
    });
    await listener.query(`LISTEN ${CHANNEL}`);
  });

  /** Waits for the notifications up to and including one with `payload`, and returns them. */
  async function notificationsUntil(payload: string): Promise<Notification[]> {
    const deadline = Date.now() + 10_000;
    while (!received.some((n) => n.payload === payload)) {
      if (Date.now() > deadline) throw new Error(`no notification "${payload}"; received ${JSON.stringify(received)}`);
      await new Promise<void>((done) => {
        wake = done;
        setTimeout(done, 100);
      });
    }
    const index = received.findIndex((n) => n.payload === payload);
    return received.splice(0, index + 1);
  }

  /** A marker notified by the test after a CLI run: whatever the CLI sent arrives before it. */
  async function notificationsOfLastRun(): Promise<Notification[]> {
    const marker = `marker-${Math.random()}`;
    await f.dataSource.query(`SELECT pg_notify($1, $2)`, [CHANNEL, marker]);
    return (await notificationsUntil(marker)).slice(0, -1);
  }

  it('an import that changes something notifies with the new version', async () => {
    const result = await f.cli('import', SAMPLE);
    expectApplied(result);
    const notes = await notificationsOfLastRun();
    expect(notes.map((n) => [n.channel, n.payload])).toEqual([[CHANNEL, '2']]);
  });

  it('an import that changes nothing, and a refused one, notify nothing', async () => {
    expectNothingToChange(await f.cli('import', SAMPLE));
    await f.expectRefused(['import', await f.bookFile({ prices: [price('foo.bar', '1')] })], 'prices[0].product_key');
    await f.expectRefused(
      ['import', await f.bookFile({ prices: [price('storage.gp1', '1', { valid_from: '2021-01-01T00:00:00Z' })] })],
      'prices[0].valid_from',
    );
    expect(await notificationsOfLastRun()).toEqual([]);
  });

  it('a dry run notifies nothing', async () => {
    const result = await f.cli('import', '--dry-run', await f.bookFile({ prices: [price('compute.d9.1', '1')] }));
    expect(result.stdout).toMatch(/^new +compute\.d9\.1 .*\ndry run at /);
    expect(await notificationsOfLastRun()).toEqual([]);
  });

  it('an availability change and a withdrawal notify', async () => {
    const version = Number(await versionOf(f.dataSource));
    expectApplied(await f.import({ products: [{ product_key: 'storage.gp1', on_sale: false }] }));
    expect((await notificationsOfLastRun()).map((n) => n.payload)).toEqual([String(version + 1)]);
    const at = inDays(20);
    expectApplied(await f.import({ prices: [price('storage.gp1', '0.0500', { valid_from: at })] }));
    expect((await notificationsOfLastRun()).map((n) => n.payload)).toEqual([String(version + 2)]);
    expect((await f.cli('withdraw', 'storage.gp1', '--valid-from', at)).code).toBe(0);
    expect((await notificationsOfLastRun()).map((n) => n.payload)).toEqual([String(version + 3)]);
    // A refused withdrawal notifies nothing.
    await f.expectRefused(['withdraw', 'storage.gp1', '--valid-from', at], 'no list price storage.gp1 starts at');
    expect(await notificationsOfLastRun()).toEqual([]);
  });
});
