import { Client } from 'pg';

// What an owner or a superuser of the database can do behind the price book's back, for the tests
// of `verify` and of output that survives any stored row. The tests' database URL is a superuser's.

/** Runs `statements` on the database at `url`, in one transaction of a connection of its own. */
export async function inOneTransaction(url: string, statements: readonly string[]): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (const statement of statements) await client.query(statement);
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
}

/**
 * Rewrites the change log as its owner can: the append-only trigger set aside for `statements`,
 * then set back to fire in every session, as the migrations leave it.
 */
export function rewriteLog(url: string, ...statements: string[]): Promise<void> {
  return inOneTransaction(url, [
    'ALTER TABLE price_change DISABLE TRIGGER price_change_append_only',
    ...statements,
    'ALTER TABLE price_change ENABLE ALWAYS TRIGGER price_change_append_only',
  ]);
}

/**
 * Rewrites price records as a superuser can: in replica mode, which skips price_record's history
 * triggers, so that amounts, windows and past ends change and no change-log row says so.
 */
export function rewriteRecords(url: string, ...statements: string[]): Promise<void> {
  return inOneTransaction(url, ['SET LOCAL session_replication_role = replica', ...statements]);
}
