import { DatabaseError } from 'pg';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { CommitOutcomeUnknownError, inTransaction } from './transaction';

// inTransaction on a query runner that records what it is asked; the real commit cut off by a
// proxy is test/price-book-committed.e2e-spec.ts.

function recordingDataSource(commitFails?: Error, commitTakes?: Promise<void>) {
  const calls: string[] = [];
  let active = false;
  /** The transaction's connection: dropping it fails what is in flight on it. */
  let dropped: (reason: Error) => void = () => undefined;
  const inFlight = new Promise<never>((_, fail) => (dropped = fail));
  inFlight.catch(() => undefined);
  const client = {
    drop: (reason: Error) => {
      calls.push('drop');
      dropped(reason);
    },
  };
  const runner = {
    manager: { query: () => inFlight } as unknown as EntityManager,
    get isTransactionActive() {
      return active;
    },
    connect: () => Promise.resolve(calls.push('connect')).then(() => client),
    startTransaction: () => Promise.resolve(calls.push('begin')).then(() => (active = true)),
    commitTransaction: async () => {
      calls.push('commit');
      await commitTakes;
      if (commitFails === undefined) active = false;
      return commitFails === undefined ? undefined : Promise.reject(commitFails);
    },
    rollbackTransaction: () => Promise.resolve(calls.push('rollback')).then(() => (active = false)),
    release: () => Promise.resolve(calls.push('release')),
  };
  return { dataSource: { createQueryRunner: () => runner } as unknown as DataSource, calls };
}

describe('inTransaction', () => {
  it('commits the work and gives its result', async () => {
    const { dataSource, calls } = recordingDataSource();
    await expect(inTransaction(dataSource, () => Promise.resolve(42))).resolves.toBe(42);
    expect(calls).toEqual(['connect', 'begin', 'commit', 'release']);
  });

  it('rolls a dry run back once the work is done', async () => {
    const { dataSource, calls } = recordingDataSource();
    await expect(inTransaction(dataSource, () => Promise.resolve('planned'), { commit: false })).resolves.toBe(
      'planned',
    );
    expect(calls).toEqual(['connect', 'begin', 'rollback', 'release']);
  });

  it('rolls back and throws on when the work throws', async () => {
    const { dataSource, calls } = recordingDataSource();
    const refused = new Error('refused');
    await expect(inTransaction(dataSource, () => Promise.reject(refused))).rejects.toBe(refused);
    expect(calls).toEqual(['connect', 'begin', 'rollback', 'release']);
  });

  it('throws a COMMIT that PostgreSQL refused as it is: it was rolled back', async () => {
    const serialization = Object.assign(new DatabaseError('could not serialize access', 0, 'error'), { code: '40001' });
    const { dataSource } = recordingDataSource(serialization);
    await expect(inTransaction(dataSource, () => Promise.resolve())).rejects.toBe(serialization);
    const wrapped = new QueryFailedError('COMMIT', [], serialization);
    await expect(inTransaction(recordingDataSource(wrapped).dataSource, () => Promise.resolve())).rejects.toBe(wrapped);
  });

  it.each([
    [
      'a socket error whose code has the form of a SQLSTATE',
      Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }),
    ],
    [
      'a lost connection’s SQLSTATE',
      Object.assign(new DatabaseError('terminating connection', 0, 'error'), { code: '57P01' }),
    ],
  ])('says the outcome is unknown for %s', async (_, failure) => {
    const error: unknown = await inTransaction(recordingDataSource(failure).dataSource, () => Promise.resolve()).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CommitOutcomeUnknownError);
    expect(error).toMatchObject({ cause: failure });
  });

  it('says the outcome is unknown when a COMMIT got no answer', async () => {
    const cut = new Error('Connection terminated unexpectedly');
    const { dataSource, calls } = recordingDataSource(cut);
    const error: unknown = await inTransaction(dataSource, () => Promise.resolve()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommitOutcomeUnknownError);
    expect(error).toMatchObject({
      cause: cut,
      message: 'the connection failed while the transaction was committing: Connection terminated unexpectedly',
    });
    expect(calls.at(-1)).toBe('release');
  });

  describe('interrupted (an abort signal)', () => {
    it('drops the connection of work in flight, rolls back and throws the interrupt, never committing', async () => {
      const { dataSource, calls } = recordingDataSource();
      const interrupt = new AbortController();
      const stopped = new Error('interrupted by SIGINT');
      const running = inTransaction(dataSource, (tx) => tx.query('SELECT pg_sleep(60)'), { signal: interrupt.signal });
      await new Promise((next) => setImmediate(next));
      interrupt.abort(stopped);
      await expect(running).rejects.toBe(stopped);
      expect(calls).toEqual(['connect', 'begin', 'drop', 'rollback', 'release']);
    });

    it('does not commit work that ends after the interrupt', async () => {
      const { dataSource, calls } = recordingDataSource();
      const interrupt = new AbortController();
      const stopped = new Error('interrupted by SIGTERM');
      const work = async () => {
        interrupt.abort(stopped);
        return Promise.resolve('done');
      };
      await expect(inTransaction(dataSource, work, { signal: interrupt.signal })).rejects.toBe(stopped);
      expect(calls).not.toContain('commit');
    });

    it('lets a COMMIT that was sent run to its end', async () => {
      let committed: () => void = () => undefined;
      const { dataSource, calls } = recordingDataSource(undefined, new Promise((done) => (committed = done)));
      const interrupt = new AbortController();
      const running = inTransaction(dataSource, () => Promise.resolve(7), { signal: interrupt.signal });
      await new Promise((next) => setImmediate(next));
      interrupt.abort(new Error('interrupted by SIGINT'));
      committed();
      await expect(running).resolves.toBe(7);
      expect(calls).toEqual(['connect', 'begin', 'commit', 'release']);
    });

    it('starts nothing once interrupted', async () => {
      const { dataSource, calls } = recordingDataSource();
      const stopped = new Error('interrupted by SIGINT');
      await expect(
        inTransaction(dataSource, () => Promise.resolve(), { signal: AbortSignal.abort(stopped) }),
      ).rejects.toBe(stopped);
      expect(calls).toEqual([]);
    });
  });
});
