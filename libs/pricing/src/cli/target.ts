import type { DataSource } from 'typeorm';
import { escapeWord } from '../errors/bounded-text';

// Where a command reads and writes (docs/price-book-cli.md, "Which database"): printed first on
// stderr, one line of key=value words, so that an operator sees it and a script can grep it.

/** The database a command runs on, as its connection and the server report it. Never a password. */
export interface Target {
  /** The host (or socket directory) connected to, as the URL names it. */
  readonly host: string;
  readonly port: number;
  /** As the server reports it (current_database()). */
  readonly database: string;
  /** The role the command runs as (current_user). */
  readonly role: string;
  /** PostgreSQL's server_version. */
  readonly serverVersion: string;
  /** The price book's version; null where the database has no price book schema yet. */
  readonly priceBookVersion: string | null;
  /** Where the URL came from: DATABASE_URL, or the embedded PostgreSQL under `dataDir`. */
  readonly via: 'DATABASE_URL' | 'embedded';
  /** The embedded PostgreSQL's data directory, absolute. */
  readonly dataDir?: string;
}

/** The host and port a PostgreSQL URL names (a `host` parameter, a socket directory, wins), never its password. */
export function hostOf(url: string): { readonly host: string; readonly port: number } {
  const parsed = new URL(url);
  const socket = parsed.searchParams.get('host');
  return {
    host: socket ?? (decodeURIComponent(parsed.hostname) || 'localhost'),
    port: Number(parsed.searchParams.get('port') ?? parsed.port) || 5432,
  };
}

/** Reads what the server says of the connection of `dataSource`, and the price book's version when it has one. */
export async function readTarget(
  dataSource: DataSource,
  url: string,
  via: Pick<Target, 'via' | 'dataDir'>,
): Promise<Target> {
  const [row] = await dataSource.query<{ database: string; role: string; server: string; book: boolean }[]>(
    `SELECT current_database() AS database, current_user AS role, current_setting('server_version') AS server,
            to_regclass('price_book_version') IS NOT NULL AS book`,
  );
  let priceBookVersion: string | null = null;
  if (row.book) {
    // A role the migrations have not granted yet may not read it: the target says so rather than failing.
    priceBookVersion = await dataSource
      .query<{ version: string }[]>(`SELECT version::text AS version FROM price_book_version`)
      .then(
        ([found]) => found?.version ?? null,
        () => 'unreadable',
      );
  }
  return {
    ...hostOf(url),
    database: row.database,
    role: row.role,
    serverVersion: row.server,
    priceBookVersion,
    ...via,
  };
}

/**
 * The target as one line of `key=value` words, each value escaped (escapeWord: no space, nothing
 * a terminal acts on): `target host=db.internal port=5432 database=pricing role=pricing_cli
 * postgresql=18.1 price_book_version=12 via=DATABASE_URL`.
 */
export function targetLine(target: Target): string {
  const words: [string, string][] = [
    ['host', target.host],
    ['port', String(target.port)],
    ['database', target.database],
    ['role', target.role],
    ['postgresql', target.serverVersion],
    ['price_book_version', target.priceBookVersion ?? 'none'],
    ['via', target.via],
    ...(target.dataDir !== undefined ? [['data_dir', target.dataDir] as [string, string]] : []),
  ];
  return `target ${words.map(([key, value]) => `${key}=${escapeWord(value)}`).join(' ')}`;
}

/** The target as `--json` prints it on stderr: `{ "target": { ... } }`. */
export function targetJson(target: Target): Record<string, unknown> {
  return {
    target: {
      host: target.host,
      port: target.port,
      database: target.database,
      role: target.role,
      postgresql: target.serverVersion,
      price_book_version: target.priceBookVersion,
      via: target.via,
      ...(target.dataDir !== undefined ? { data_dir: target.dataDir } : {}),
    },
  };
}
