import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { isAnswered } from './database-errors';

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
  { commit = true }: TransactionOptions<T> = {},
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    const result = await work(runner.manager);
    if (typeof commit === 'function' ? commit(result) : commit) await commitOrSayUnknown(runner);
    else await runner.rollbackTransaction();
    return result;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  } finally {
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
