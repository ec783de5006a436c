import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { isAnswered } from './database-errors';
import type { TimedClient } from './timed-client';

/**
 * A COMMIT failed without an answer from PostgreSQL (the connection went away while it committed):
 * the transaction may have been committed or not, and this process cannot tell. `cause` is the
 * driver's error.
 */
export class CommitOutcomeUnknownError extends Error {
  constructor(override readonly cause: unknown) {
    super(
      `the connection failed while the transaction was committing: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'CommitOutcomeUnknownError';
  }
}

export interface TransactionOptions<T = unknown> {
  /**
   * `false`: roll back once the work is done (a dry run: the same statements, nothing kept); a
   * function: whether to commit, given what the work returned (roll back what changed nothing).
   * Default `true`.
   */
  readonly commit?: boolean | ((result: T) => boolean);
  /**
   * Stops the work (an operator's Ctrl-C): until the COMMIT is sent, an abort drops the
   * transaction's connection and ends its backend (pg_terminate_backend), so that PostgreSQL rolls
   * it back whatever it was doing and releases its locks, and the call throws the signal's reason;
   * once the COMMIT is sent, it runs to its end (what a commit that was cut off did, nobody could tell).
   */
  readonly signal?: AbortSignal;
}

/**
 * Runs `work` in one transaction on a connection of its own and commits it, or, with `commit:
 * false`, rolls it back once `work` is done. When `work` throws, the transaction is rolled back and
 * the error thrown on. A COMMIT that PostgreSQL refused (isAnswered, database-errors.ts) was rolled
 * back and is thrown as it is; one that got no answer is CommitOutcomeUnknownError.
 */
export async function inTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
  { commit = true, signal }: TransactionOptions<T> = {},
): Promise<T> {
  signal?.throwIfAborted();
  const runner = dataSource.createQueryRunner();
  // pg's Client keeps its backend's process id (`processID`), which its types leave out.
  const client = (await runner.connect()) as (Partial<TimedClient> & { processID?: number | null }) | undefined;
  let committing = false;
  let ended: Promise<unknown> = Promise.resolve();
  const interrupt = (): void => {
    if (committing) return;
    client?.drop?.(signal?.reason instanceof Error ? signal.reason : new Error('interrupted'));
    // A dropped connection is noticed by its backend only when it next talks to it (after a long
    // statement): ended on a connection of its own, it rolls back and releases its locks at once.
    const pid = client?.processID;
    if (typeof pid === 'number') {
      ended = dataSource.query('SELECT pg_terminate_backend($1)', [pid]).catch(() => undefined);
    }
  };
  signal?.addEventListener('abort', interrupt, { once: true });
  try {
    await runner.startTransaction();
    const result = await work(runner.manager);
    signal?.throwIfAborted();
    committing = true;
    if (typeof commit === 'function' ? commit(result) : commit) await commitOrSayUnknown(runner);
    else await runner.rollbackTransaction();
    return result;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    // What the dropped connection made the work throw is the interrupt's doing.
    if (signal?.aborted && !committing) {
      await ended;
      throw signal.reason;
    }
    throw error;
  } finally {
    signal?.removeEventListener('abort', interrupt);
    await runner.release();
  }
}

async function commitOrSayUnknown(runner: QueryRunner): Promise<void> {
  try {
    await runner.commitTransaction();
  } catch (error) {
    // PostgreSQL answered: the COMMIT failed and was rolled back. Anything else (a socket error
    // such as EPIPE, a lost connection's SQLSTATE) leaves its outcome unknown.
    if (isAnswered(error)) throw error;
    throw new CommitOutcomeUnknownError(error);
  }
}
