import { Client } from 'pg';

/** Runs one statement on the database at `url`, on a connection of its own; its rows. */
export async function queryAt<T>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}
