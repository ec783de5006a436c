import { cliFailure, preparePriceBookCommand, runPriceBookCommand } from '@app/pricing/cli';
import { listPrice } from '@app/pricing/testing';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { runCli } from './support/cli';
import { applyBook, useTestDatabase } from './support/database';
import { useTempDir } from './support/temp-dir';

// A message about data is true: once a write has committed, whatever fails after it (describing or
// printing what it did) is reported as a failure of that, with the change said to be in force; a
// write whose commit the connection cut off is said to be perhaps in force.

describe('a price book write that committed before something failed', () => {
  const test = useTestDatabase();
  const temp = useTempDir('committed');

  async function command(...args: string[]) {
    const file = await temp.write('book.json', {
      prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z')],
    });
    const prepared = await preparePriceBookCommand([...args, file]);
    if (prepared.name === 'help' || prepared.name === 'version') throw new Error('not a command of the database');
    return prepared;
  }

  const brokenOutput = (): never => {
    throw new Error('stdout is closed');
  };

  it('says the change was committed, with its instant and version, when printing it fails', async () => {
    const error: unknown = await runPriceBookCommand(
      await command('import'),
      test.dataSource,
      brokenOutput,
      new Date(),
    ).catch((e: unknown) => e);
    const { exit, message } = cliFailure(error, { writes: true });
    expect(exit).toBe(1);
    expect(message).toMatch(
      /^applied at \d{4}-\d\d-\d\dT[\d:.]+Z \(version 2\): the change was committed and is in force, but printing it failed: stdout is closed$/,
    );
    expect(message).not.toContain('nothing was written');
    const rows: { amount: string }[] = await test.dataSource.query(`SELECT amount::text FROM price_record`);
    expect(rows).toEqual([{ amount: '0.0480' }]);
  });

  it('says a withdrawal was committed, with its instant and version, when printing it fails', async () => {
    const scheduled = listPrice('storage.io1', 'gib_hours', 730, '0.0300', '2099-01-01T00:00:00Z');
    const { version } = await applyBook(test.dataSource, { prices: [scheduled] });
    const withdraw = await preparePriceBookCommand(['withdraw', 'storage.io1', '--valid-from', scheduled.valid_from!]);
    if (withdraw.name !== 'withdraw') throw new Error('not a withdrawal');
    const error: unknown = await runPriceBookCommand(withdraw, test.dataSource, brokenOutput, new Date()).catch(
      (e: unknown) => e,
    );
    const { exit, message } = cliFailure(error, { writes: true });
    expect(exit).toBe(1);
    const committed =
      /^applied at \d{4}-\d\d-\d\dT[\d:.]+Z \(version (\d+)\): the change was committed and is in force, but printing it failed: stdout is closed$/;
    expect(message).toMatch(committed);
    expect(committed.exec(message)?.[1]).toBe(String(Number(version) + 1));
    const rows: unknown[] = await test.dataSource.query(`SELECT 1 FROM price_record WHERE product_key = 'storage.io1'`);
    expect(rows).toEqual([]);
  });

  it('claims nothing of the database when a dry run, which writes nothing, fails to print', async () => {
    const error: unknown = await runPriceBookCommand(
      await command('import', '--dry-run'),
      test.dataSource,
      brokenOutput,
      new Date(),
    ).catch((e: unknown) => e);
    // The book restates what the first test committed: nothing to change, and a dry run besides.
    expect(cliFailure(error).message).toBe('failed: stdout is closed');
  });
});

/**
 * A proxy to the database at `url` that forwards everything until the client sends COMMIT after
 * writing the change log, then cuts the client off as soon as PostgreSQL answers: the commit
 * happened, and the client never hears of it.
 */
async function commitCuttingProxy(url: string): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let wroteLog = false;
    let committing = false;
    client.on('data', (chunk: Buffer) => {
      wroteLog ||= chunk.includes('INSERT INTO price_change');
      committing ||= wroteLog && chunk.includes('COMMIT');
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!committing) return void client.write(chunk);
      client.destroy();
      upstream.destroy();
    });
    client.on('error', () => upstream.destroy()).on('close', () => upstream.destroy());
    upstream.on('error', () => client.destroy()).on('close', () => client.destroy());
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.href,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((closed) => server.close(() => closed()));
    },
  };
}

describe('a price book write whose commit was cut off', () => {
  const test = useTestDatabase();
  const temp = useTempDir('commit-cut');

  it('says the change may be in force, never that nothing was written, and it is in force', async () => {
    const proxy = await commitCuttingProxy(test.url);
    try {
      const file = await temp.write('book.json', {
        prices: [listPrice('compute.k1.1', 'seconds', 3600, '0.5000', '2026-01-01T00:00:00Z')],
      });
      const result = await runCli(['import', file, '--actor', 'ana'], { DATABASE_URL: proxy.url });
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        /^the connection to the database failed while the change was being committed, so it may or may not be in force \(.+\); look with history or export before writing it again\n$/,
      );
      expect(result.stderr).not.toContain('nothing was written');
    } finally {
      await proxy.close();
    }
    const rows: { actor: string }[] = await test.dataSource.query(
      `SELECT c.actor FROM price_change c JOIN price_record r ON r.id = c.price_record_id WHERE r.product_key = 'compute.k1.1'`,
    );
    expect(rows).toEqual([{ actor: 'ana' }]);
  });
});
