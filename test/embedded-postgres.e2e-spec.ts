import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { appDatabaseOptions } from '@app/control-plane';
import { dataSourceOptions } from '@app/database';
import { runCli, spawnCli } from './support/cli';
import { startEmbeddedPostgresInChild, type ChildEmbeddedDatabase } from './support/embedded-postgres';
import { waitFor } from './support/http';
import { get, startService, waitUntilReady } from './support/service';
import { queryAt } from './support/sql';
import { passableTempDir } from './support/temp-dir';
import { withDatabase } from './support/template-database';

// The embedded PostgreSQL (`npm start` without DATABASE_URL), tighter (docs/operations.md, "The
// embedded PostgreSQL"): its passwords are never readable by others, not even the one initdb reads
// while it runs; permissions are widened only where PostgreSQL needs them, and logged; the app
// connects as a role that is not a superuser: the service as a reader of the price book, the CLI as
// a writer (docs/operations.md, "Readers and writers").

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
const postgresGid = (): number => Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());

describe('the embedded PostgreSQL', () => {
  /** A folder of the test's own, passable by the postgres user (test/support/temp-dir.ts). */
  let parent: string;
  /** DATA_DIR: made by the start itself, inside `parent`. */
  let dir: string;
  let started: Awaited<ReturnType<typeof start>> | undefined;

  beforeEach(async () => {
    parent = await passableTempDir('embedded-postgres');
    dir = join(parent, 'data');
  });

  afterEach(async () => {
    await started?.stop();
    started = undefined;
    await rm(parent, { recursive: true, force: true });
  });

  it('keeps its passwords private from the start, initdb’s too, and lets the group postgres pass only the folders it made', async () => {
    started = await start(dir);

    expect(await modeOf(join(dir, 'postgres-password'))).toBe(0o600);
    expect(await modeOf(join(dir, 'control-plane-password'))).toBe(0o600);
    expect(await modeOf(join(dir, 'pricing-cli-password'))).toBe(0o600);
    // The data directory it made: others may not even pass; as root, the group postgres may pass
    // (to reach PostgreSQL's data), not list. The folder above it, not its own, is as it was.
    expect(await modeOf(dir)).toBe(asRoot ? 0o710 : 0o700);
    if (asRoot) expect((await stat(dir)).gid).toBe(postgresGid());
    expect(await modeOf(parent)).toBe(0o711);
    expect((await modeOf(join(dir, 'postgres'))) & 0o077).toBe(0);

    // The password initdb read: nobody else could read it, or list its directory, while it existed.
    expect(started.initdbPasswordFiles).toHaveLength(1);
    const [initdb] = started.initdbPasswordFiles;
    expect(initdb.mode & 0o007).toBe(0);
    expect(initdb.directoryMode & 0o007).toBe(0);
    expect(existsSync(initdb.file)).toBe(false);
    if (asRoot) {
      // initdb runs as the postgres user: its group, and only it, may read the file.
      expect(initdb.gid).toBe(postgresGid());
      expect(initdb.mode).toBe(0o640);
      expect(initdb.directoryMode).toBe(0o2750);
      expect(started.output()).toContain('readable by the group postgres while initdb reads the password there');
      expect(started.output()).toContain(`made ${dir} passable (not readable) by the group postgres`);
      expect(started.output()).not.toContain('searchable (o+x)');
    } else {
      expect(initdb.mode).toBe(0o600);
    }
  }, 60_000);

  it('lets the service connect as control_plane (a reader), the CLI as pricing_cli (a writer), both owning nothing, and migrate as pricing_owner, which owns everything the migrations make; none a superuser', async () => {
    started = await start(dir);
    expect(new URL(started.url).username).toBe('control_plane');
    expect(new URL(started.writerUrl).username).toBe('pricing_cli');
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
    for (const [url, role] of [
      [started.url, 'control_plane'],
      [started.writerUrl, 'pricing_cli'],
    ]) {
      expect(await roleOf(url)).toEqual({
        role,
        ...database,
        ...ordinary,
        create_schema: false,
        temporary: false,
        create_in_public: false,
      });
    }
    // The group roles, made by the superuser: the owner needs no CREATEROLE.
    const memberships = await queryAt<{ login: string; groups: string }>(
      started.superuserUrl,
      `SELECT r.rolname AS login, string_agg(g.rolname, ',' ORDER BY g.rolname) AS groups
         FROM pg_roles r JOIN pg_auth_members m ON m.member = r.oid JOIN pg_roles g ON g.oid = m.roleid
        WHERE r.rolname IN ('control_plane', 'pricing_cli', 'pricing_owner') GROUP BY 1 ORDER BY 1`,
    );
    expect(memberships).toEqual([
      { login: 'control_plane', groups: 'pricing_reader,volumes_writer' },
      { login: 'pricing_cli', groups: 'pricing_writer' },
    ]);
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
    for (const url of [started.url, started.writerUrl]) {
      await expect(queryAt(url, `TRUNCATE price_record`)).rejects.toMatchObject({ code: '42501' });
      await expect(
        queryAt(url, `ALTER TABLE price_change DISABLE TRIGGER price_change_append_only`),
      ).rejects.toMatchObject({ code: '42501' });
    }
    // The service's role reads the price book and may write none of it; the CLI's may.
    const [{ n: read }] = await queryAt<{ n: number }>(started.url, `SELECT count(*)::int AS n FROM price_change`);
    expect(read).toBe(2); // the first migration's availability (InitialAvailabilityLogged1764000012100)
    await expect(queryAt(started.url, `SELECT pricing_publication_instant()`)).rejects.toMatchObject({ code: '42501' });
    await expect(queryAt(started.url, `UPDATE price_book_version SET version = version`)).rejects.toMatchObject({
      code: '42501',
    });
    expect(await queryAt(started.writerUrl, `UPDATE price_book_version SET version = version`)).toEqual([]);

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
        `^target host=127\\.0\\.0\\.1 port=\\d+ database=control_plane role=pricing_cli .* via=embedded data_dir=${dir}$`,
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
    // As that version did: migrates as control_plane (owner of everything), then writes.
    const imported = await runCli(['import', book], { DATABASE_URL: started.url });
    expect(imported.code).toBe(0);
    const newer = [
      'RuntimeGrants1764000010500',
      'VolumesRuntimeGrants1764000010600',
      'GroupRoles1764000013000',
      'VolumesGroupRole1764000013100',
    ];
    await queryAt(
      asSuperuser.toString(),
      `DROP FUNCTION pricing_grant_roles(name, name);
       DROP FUNCTION volumes_grant_roles(name);
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
    // Until migrated as the owner, the logins read only which migrations are applied: the CLI says to migrate.
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

  it('keeps a data directory where control_plane was granted what it needed itself: it becomes the reader, pricing_cli writes, data kept', async () => {
    // A data directory of the previous version: control_plane granted the price book and volumes
    // itself by the migrations, no group roles, no pricing_cli.
    started = await start(dir);
    const book = join(dir, 'book.json');
    await writeFile(
      book,
      JSON.stringify({
        prices: [{ product_key: 'storage.gp1', unit_type: 'gib_hours', unit_count: 730, amount: '0.0480' }],
      }),
    );
    expect(
      (
        await runCli(['import', book], {
          DATABASE_URL: started.writerUrl,
          DATABASE_MIGRATION_URL: started.migrationUrl!,
        })
      ).code,
    ).toBe(0);
    const owner = new DataSource({ ...dataSourceOptions(appDatabaseOptions(started.migrationUrl!)), logging: false });
    await owner.initialize();
    try {
      await owner.undoLastMigration({ transaction: 'each' }); // VolumesGroupRole1764000013100
      await owner.undoLastMigration({ transaction: 'each' }); // GroupRoles1764000013000
      await owner.query(`SELECT pricing_grant_runtime('control_plane'), volumes_grant_runtime('control_plane')`);
      await owner.query(`GRANT SELECT ON migrations TO control_plane`);
    } finally {
      await owner.destroy();
    }
    const asSuperuser = new URL(started.superuserUrl);
    asSuperuser.pathname = '/control_plane';
    await queryAt(
      asSuperuser.toString(),
      `DROP OWNED BY pricing_cli, pricing_reader, pricing_writer, volumes_writer;
       DROP ROLE pricing_cli, pricing_reader, pricing_writer, volumes_writer`,
    );
    await rm(join(dir, 'pricing-cli-password'));
    await started.stop();

    started = await start(dir);
    expect(started.output()).toContain(
      "the service's role control_plane now only reads the price book (pricing_reader); the CLI writes as pricing_cli",
    );
    // The CLI of the embedded default migrates as the owner and writes as pricing_cli.
    await writeFile(
      book,
      JSON.stringify({
        prices: [{ product_key: 'storage.gp1', unit_type: 'gib_hours', unit_count: 730, amount: '0.0500' }],
      }),
    );
    expect((await spawnCli(['import', book], { DATA_DIR: dir })).code).toBe(0);
    // What control_plane held itself is gone: it reads, and writes nothing of the price book.
    const held = await queryAt<{ n: number }>(
      withDatabase(started.superuserUrl, 'control_plane'),
      `SELECT count(*)::int AS n FROM pg_class, aclexplode(relacl) a
        WHERE relnamespace = 'public'::regnamespace AND a.grantee = 'control_plane'::regrole`,
    );
    expect(held).toEqual([{ n: 0 }]);
    await expect(queryAt(started.url, `SELECT pricing_publication_instant()`)).rejects.toMatchObject({ code: '42501' });
    const exported = await runCli(['export'], { DATABASE_URL: started.url });
    expect(exported.stdout).toContain('"amount": "0.0500"');
    expect(exported.stdout).toContain('"amount": "0.0480"');

    // Once only.
    await started.stop();
    started = await start(dir);
    expect(started.output()).not.toContain('now only reads the price book');
  }, 90_000);

  it('runs the service (npm start) as control_plane, a reader, the sample book loaded by pricing_cli', async () => {
    const service = await startService({ DATA_DIR: dir, METRICS_PORT: 'off' });
    try {
      await waitUntilReady(service, 60_000);
      const list = await get(`${service.url}/v1/pricing`);
      expect(list.status).toBe(200);
      expect(list.text).toContain('"storage.gp1"');
      expect(service.output()).toContain('loaded the sample price book');
      const [pid, , , port] = (await readFile(join(dir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n');
      expect(Number(pid)).toBeGreaterThan(0);
      const superuser = `postgres://postgres:${encodeURIComponent((await readFile(join(dir, 'postgres-password'), 'utf8')).trim())}@127.0.0.1:${port}/control_plane`;
      const sessions = await queryAt<{ usename: string }>(
        superuser,
        `SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = 'control_plane' AND pid <> pg_backend_pid()`,
      );
      expect(sessions).toEqual([{ usename: 'control_plane' }]);
      // The sample book's writes were dated by the writer's function: granted to pricing_writer only.
      const [{ changes }] = await queryAt<{ changes: number }>(
        superuser,
        `SELECT count(*)::int AS changes FROM price_change`,
      );
      expect(changes).toBeGreaterThan(0);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  }, 90_000);

  it('keeps using the superuser on a data directory whose database postgres holds the app (made before the role)', async () => {
    started = await start(dir);
    await queryAt(started.superuserUrl, `CREATE TABLE migrations (id int)`);
    await started.stop();
    started = await start(dir);
    expect(started.url).toBe(started.superuserUrl);
    expect(started.output()).toContain("the database postgres holds the app's tables");
  }, 60_000);

  it('says so when PostgreSQL exits before it is ready (its port taken), never failing with nothing', async () => {
    const squatter = createServer();
    await new Promise<void>((done) => squatter.listen(0, '127.0.0.1', done));
    const { port } = squatter.address() as AddressInfo;
    try {
      // A port it was given is not changed: on one it chose, it tries another (twice at most).
      await expect(startEmbeddedPostgresInChild(dir, { port })).rejects.toThrow(
        `PostgreSQL exited before it was ready to accept connections on 127.0.0.1:${port}`,
      );
    } finally {
      squatter.close();
    }
  }, 60_000);

  it('changes no folder it did not make: one the postgres user cannot pass stops the start, named, and stays as it was', async () => {
    if (!asRoot) return; // PostgreSQL runs as this user: every folder it reaches, it already passes
    // Every folder from / down to the test's, as they were.
    const above = (path: string): string[] => (dirname(path) === path ? [path] : [path, ...above(dirname(path))]);
    const modes = async () => Promise.all(above(parent).map(async (folder) => [folder, await modeOf(folder)]));
    const before = await modes();

    // A folder of the test's own (as mktemp makes them: 0700) above DATA_DIR: left as it is.
    const closed = join(parent, 'closed');
    await mkdir(closed, { mode: 0o700 });
    await expect(start(join(closed, 'data'))).rejects.toThrow(
      new RegExp(`cannot pass through ${closed} \\(mode 0700\\).*changes no folder it did not make`),
    );
    expect(await modeOf(closed)).toBe(0o700);
    expect(existsSync(join(closed, 'data', 'postgres'))).toBe(false);
    // DATA_DIR itself, made by the test: the same.
    await expect(start(closed)).rejects.toThrow(`cannot pass through ${closed} (mode 0700)`);
    expect(await modeOf(closed)).toBe(0o700);

    // Where it can: the folders above are as they were, whatever it made below them.
    started = await start(join(parent, 'a', 'b'));
    expect(await modes()).toEqual(before);
    expect([await modeOf(join(parent, 'a')), await modeOf(join(parent, 'a', 'b'))]).toEqual([0o710, 0o710]);
  }, 60_000);

  it('started while the previous server of its data still refuses connections (shutting down), waits for it, then starts its own', async () => {
    const previous = await start(dir);
    // The previous instance's server, shutting down (smart shutdown, SIGTERM): it waits for the
    // session still open and meanwhile refuses new connections (57P03).
    const session = new Client({ connectionString: previous.url });
    await session.connect();
    const [pid] = (await readFile(join(dir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n');
    process.kill(Number(pid), 'SIGTERM');
    let output = '';
    const next = startEmbeddedPostgresInChild(dir, { onOutput: (text) => (output += text) });
    try {
      await waitFor(
        'the start to wait',
        () => Promise.resolve(output),
        (o) => o.includes('waiting for it'),
        30_000,
        50,
      );
    } finally {
      await session.end();
    }
    started = Object.assign(await next, { initdbPasswordFiles: [] });
    await previous.kill(); // its server is gone
    expect(started.output()).toMatch(/refuses connections \(57P03\): waiting for it/);
    const [{ one }] = await queryAt<{ one: number }>(started.url, `SELECT 1 AS one`);
    expect(one).toBe(1);
    expect(started.output()).not.toContain('stale');
  }, 60_000);

  it.each([
    ['a process that is no PostgreSQL (a PID reused after a crash or a reboot)', undefined],
    ['a process that is no PostgreSQL, in the data directory', 'postgres'],
  ])(
    'takes a postmaster.pid naming %s for stale: never sends it the password, starts its own',
    async (_what, cwd) => {
      started = await start(dir);
      await started.stop();
      started = undefined;
      // A process of this user that lives on, and something listening on the port the file names.
      const squatter = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], {
        stdio: 'ignore',
        cwd: cwd === undefined ? undefined : join(dir, cwd),
      });
      const received: Buffer[] = [];
      const listener = createServer((socket) => {
        // As a server that asks for the password in clear text (AuthenticationCleartextPassword) would.
        socket.on('data', (chunk: Buffer) => received.push(chunk));
        socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]));
      });
      await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
      const port = (listener.address() as AddressInfo).port;
      try {
        const pidFile = join(dir, 'postgres', 'postmaster.pid');
        await writeFile(pidFile, `${squatter.pid}\n${join(dir, 'postgres')}\n0\n${port}\n\n127.0.0.1\n`);
        started = await start(dir);
        expect(received).toEqual([]); // not a byte: no startup message, no password
        expect(new URL(started.url).port).not.toBe(String(port));
        expect(started.output()).toMatch(
          new RegExp(`names process ${squatter.pid}, which is not a PostgreSQL of this data directory: a stale file`),
        );
        const [{ one }] = await queryAt<{ one: number }>(started.url, `SELECT 1 AS one`);
        expect(one).toBe(1);
        expect(squatter.exitCode).toBeNull(); // left alone
      } finally {
        squatter.kill();
        listener.close();
      }
    },
    60_000,
  );
});
