import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@app/control-plane';
import { runCli, spawnCli } from './support/cli';
import { startEmbeddedPostgresInChild, type ChildEmbeddedDatabase } from './support/embedded-postgres';
import { queryAt } from './support/sql';

// The embedded PostgreSQL (`npm start` without DATABASE_URL), tighter (docs/operations.md, "The
// embedded PostgreSQL"): its passwords are never readable by others, not even the one initdb reads
// while it runs; permissions are widened only where PostgreSQL needs them, and logged; the app
// connects as a role that is not a superuser.

/**
 * Records every password file embedded-postgres writes for initdb: its mode and its
 * directory's, right after it was written.
 */
const RECORD_INITDB_PASSWORD_FILES = `
const fsp = require('node:fs/promises');
const { dirname } = require('node:path');
globalThis.report = [];
const writeFile = fsp.writeFile;
fsp.writeFile = async function (file, ...rest) {
  const result = await writeFile.call(this, file, ...rest);
  if (/pg-password-/.test(String(file))) {
    const [written, directory] = await Promise.all([fsp.stat(file), fsp.stat(dirname(String(file)))]);
    globalThis.report.push({ file: String(file), mode: written.mode & 0o7777, gid: written.gid, directoryMode: directory.mode & 0o7777 });
  }
  return result;
};
`;

interface InitdbPasswordFile {
  readonly file: string;
  readonly mode: number;
  readonly gid: number;
  readonly directoryMode: number;
}

async function start(dir: string): Promise<ChildEmbeddedDatabase & { initdbPasswordFiles: InitdbPasswordFile[] }> {
  const started = await startEmbeddedPostgresInChild(dir, { prelude: RECORD_INITDB_PASSWORD_FILES });
  return Object.assign(started, { initdbPasswordFiles: started.report as InitdbPasswordFile[] });
}

async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o7777;
}

const asRoot = process.getuid?.() === 0;

describe('the embedded PostgreSQL', () => {
  let dir: string;
  let started: Awaited<ReturnType<typeof start>> | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'embedded-postgres-'));
  });

  afterEach(async () => {
    await started?.stop();
    started = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps its passwords private from the start, initdb’s too, and widens only what PostgreSQL needs', async () => {
    started = await start(dir);

    expect(await modeOf(join(dir, 'postgres-password'))).toBe(0o600);
    expect(await modeOf(join(dir, 'control-plane-password'))).toBe(0o600);
    // Others may at most pass through the data directory (as root, to reach PostgreSQL's data).
    expect((await modeOf(dir)) & 0o007).toBe(asRoot ? 0o001 : 0);
    expect((await modeOf(join(dir, 'postgres'))) & 0o077).toBe(0);

    // The password initdb read: nobody else could read it, or list its directory, while it existed.
    expect(started.initdbPasswordFiles).toHaveLength(1);
    const [initdb] = started.initdbPasswordFiles;
    expect(initdb.mode & 0o007).toBe(0);
    expect(initdb.directoryMode & 0o007).toBe(0);
    expect(existsSync(initdb.file)).toBe(false);
    if (asRoot) {
      // initdb runs as the postgres user: its group, and only it, may read the file.
      expect(initdb.gid).toBe(Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()));
      expect(initdb.mode).toBe(0o640);
      expect(initdb.directoryMode).toBe(0o2750);
      expect(started.output()).toContain('readable by the group postgres while initdb reads the password there');
      expect(started.output()).toMatch(/made .* searchable \(o\+x\)/);
    } else {
      expect(initdb.mode).toBe(0o600);
    }
  }, 60_000);

  it('lets the app connect as control_plane, which owns nothing, and migrate as pricing_owner, which owns everything the migrations make; neither a superuser', async () => {
    started = await start(dir);
    expect(new URL(started.url).username).toBe('control_plane');
    expect(new URL(started.migrationUrl!).username).toBe('pricing_owner');
    expect(await modeOf(join(dir, 'pricing-owner-password'))).toBe(0o600);
    const roleOf = async (url: string): Promise<Record<string, unknown>> =>
      (
        await queryAt<Record<string, unknown>>(
          url,
          `SELECT current_user AS role, current_database() AS database, rolsuper, rolcreatedb, rolcreaterole,
                  pg_get_userbyid(datdba) AS database_owner,
                  has_database_privilege(current_database(), 'CREATE') AS create_schema,
                  has_database_privilege(current_database(), 'TEMPORARY') AS temporary,
                  has_schema_privilege('public', 'CREATE') AS create_in_public
             FROM pg_roles, pg_database WHERE rolname = current_user AND datname = current_database()`,
        )
      )[0];
    const database = { database: 'control_plane', database_owner: 'pricing_owner' };
    const ordinary = { rolsuper: false, rolcreatedb: false, rolcreaterole: false };
    expect(await roleOf(started.url)).toEqual({
      role: 'control_plane',
      ...database,
      ...ordinary,
      create_schema: false,
      temporary: false,
      create_in_public: false,
    });
    expect(await roleOf(started.migrationUrl!)).toEqual({
      role: 'pricing_owner',
      ...database,
      ...ordinary,
      create_schema: true,
      temporary: true,
      create_in_public: true,
    });

    // The CLI migrates as the owner (btree_gist is a trusted extension), and grants control_plane what it needs.
    const migrated = await runCli(['migrate'], {
      DATABASE_URL: started.url,
      DATABASE_MIGRATION_URL: started.migrationUrl!,
    });
    expect(migrated.code).toBe(0);
    const owners = await queryAt<{ owner: string }>(
      started.url,
      `SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(owners).toEqual([{ owner: 'pricing_owner' }]);
    // What only a superuser may do is refused to both; what only the owner may do, to the app's role.
    for (const url of [started.url, started.migrationUrl!]) {
      await expect(queryAt(url, `COPY (SELECT 1) TO PROGRAM 'true'`)).rejects.toMatchObject({ code: '42501' });
      await expect(queryAt(url, `CREATE DATABASE another`)).rejects.toMatchObject({ code: '42501' });
    }
    await expect(queryAt(started.url, `TRUNCATE price_record`)).rejects.toMatchObject({ code: '42501' });
    await expect(
      queryAt(started.url, `ALTER TABLE price_change DISABLE TRIGGER price_change_append_only`),
    ).rejects.toMatchObject({ code: '42501' });

    // Started again on the same data: the same roles and data.
    await started.stop();
    started = await start(dir);
    expect(started.initdbPasswordFiles).toEqual([]);
    const [{ n }] = await queryAt<{ n: number }>(started.url, `SELECT count(*)::int AS n FROM migrations`);
    expect(n).toBeGreaterThan(0);
    // The CLI of the embedded default (DATA_DIR, on the running server) writes with the same two roles.
    const book = join(dir, 'book.json');
    await writeFile(
      book,
      JSON.stringify({
        prices: [{ product_key: 'storage.gp1', unit_type: 'gib_hours', unit_count: 730, amount: '0.05' }],
      }),
    );
    // It says where it writes: the embedded PostgreSQL under DATA_DIR, not a database of yours.
    const imported = await spawnCli(['import', book], { DATA_DIR: dir });
    expect(imported.code).toBe(0);
    expect(imported.target).toMatch(
      new RegExp(
        `^target host=127\\.0\\.0\\.1 port=\\d+ database=control_plane role=control_plane .* via=embedded data_dir=${dir}$`,
      ),
    );
    expect(imported.stderr).toContain(
      `DATABASE_URL is unset: import writes to the embedded PostgreSQL under ${dir} (for development; NODE_ENV=production refuses it)`,
    );
    expect((await spawnCli(['export'], { DATA_DIR: dir })).stdout).toContain('"amount": "0.05"');
    expect(
      await queryAt(started.url, `SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'`),
    ).toEqual([{ owner: 'pricing_owner' }]);
  }, 60_000);

  it('moves a data directory whose control_plane owned everything to pricing_owner once, data kept, and says so', async () => {
    // A data directory of the previous version: control_plane owns its database and what the
    // migrations made (all but the grant functions, which that version lacked); no pricing_owner.
    started = await start(dir);
    const asSuperuser = new URL(started.superuserUrl);
    asSuperuser.pathname = '/control_plane';
    await queryAt(
      asSuperuser.toString(),
      `ALTER DATABASE control_plane OWNER TO control_plane;
       GRANT CONNECT, TEMPORARY ON DATABASE control_plane TO PUBLIC;
       REASSIGN OWNED BY pricing_owner TO control_plane;
       DROP OWNED BY pricing_owner`,
    );
    await queryAt(started.superuserUrl, `DROP ROLE pricing_owner`);
    await rm(join(dir, 'pricing-owner-password'));
    const book = join(dir, 'book.json');
    await writeFile(
      book,
      JSON.stringify({
        prices: [{ product_key: 'storage.gp1', unit_type: 'gib_hours', unit_count: 730, amount: '0.0480' }],
      }),
    );
    const imported = await runCli(['import', book], { DATABASE_URL: started.url }); // as that version did: migrates as control_plane
    expect(imported.code).toBe(0);
    const newer = ['RuntimeGrants1764000010500', 'VolumesRuntimeGrants1764000010600'];
    await queryAt(
      asSuperuser.toString(),
      `DROP FUNCTION pricing_grant_runtime(name);
       DROP FUNCTION volumes_grant_runtime(name);
       ALTER FUNCTION price_record_count() SECURITY INVOKER RESET search_path;
       DELETE FROM migrations WHERE name IN ('${newer.join("', '")}')`,
    );
    const [{ owner }] = await queryAt<{ owner: string }>(
      started.url,
      `SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(owner).toBe('control_plane');
    await started.stop();

    started = await start(dir);
    expect(started.output()).toContain(
      'the role control_plane owned the database control_plane and everything in it: pricing_owner now does',
    );
    const owners = await queryAt<{ owner: string }>(
      started.superuserUrl.replace(/\/postgres$/, '/control_plane'),
      `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relnamespace = 'public'::regnamespace
       UNION SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()`,
    );
    expect(owners).toEqual([{ owner: 'pricing_owner' }]);
    // Until migrated as the owner, control_plane reads only which migrations are applied: the CLI says to migrate.
    const pending = await runCli(['show'], { DATABASE_URL: started.url });
    expect(pending.code).toBe(8);
    expect(pending.stderr).toContain(`lacks migrations: ${newer.join(', ')}`);
    await expect(queryAt(started.url, `TRUNCATE price_record`)).rejects.toMatchObject({ code: '42501' });

    const migrated = await runCli(['migrate'], {
      DATABASE_URL: started.url,
      DATABASE_MIGRATION_URL: started.migrationUrl!,
    });
    expect(migrated.code).toBe(0);
    const exported = await runCli(['export'], { DATABASE_URL: started.url });
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain('"amount": "0.0480"');

    // Once only: the next start finds nothing to move.
    await started.stop();
    started = await start(dir);
    expect(started.output()).not.toContain('owned the database control_plane');
  }, 90_000);

  it('keeps using the superuser on a data directory whose database postgres holds the app (made before the role)', async () => {
    started = await start(dir);
    await queryAt(started.superuserUrl, `CREATE TABLE migrations (id int)`);
    await started.stop();
    started = await start(dir);
    expect(started.url).toBe(started.superuserUrl);
    expect(started.output()).toContain("the database postgres holds the app's tables");
  }, 60_000);

  it('started while the previous server of its data still refuses connections (shutting down), waits for it, then starts its own', async () => {
    started = await start(dir);
    await started.stop();
    // The previous instance's server, still shutting down: its postmaster.pid names a live process
    // that takes no connection (here a process of the test, on a port where nothing listens).
    // It lives long enough for the start, from source and on a loaded machine, to find it alive.
    const previous = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 8000)'], { stdio: 'ignore' });
    const gone = new Promise((done) => previous.once('exit', done));
    const port = await freePort();
    const pidFile = join(dir, 'postgres', 'postmaster.pid');
    await writeFile(pidFile, `${previous.pid}\n${join(dir, 'postgres')}\n0\n${port}\n\n127.0.0.1\n`);
    started = await start(dir);
    await gone;
    expect(started.output()).toMatch(/refuses connections \(ECONNREFUSED\): waiting for it/);
    const [{ one }] = await queryAt<{ one: number }>(started.url, `SELECT 1 AS one`);
    expect(one).toBe(1);
    expect(new URL(started.url).port).not.toBe(String(port));
  }, 60_000);
});
