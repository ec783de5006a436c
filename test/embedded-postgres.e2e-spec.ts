import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@app/control-plane';
import { runCli } from './support/cli';
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

  it('lets the app connect as control_plane, not a superuser, which owns everything the migrations make', async () => {
    started = await start(dir);
    expect(new URL(started.url).username).toBe('control_plane');
    const [role] = await queryAt<Record<string, unknown>>(
      started.url,
      `SELECT current_user AS role, current_database() AS database, rolsuper, rolcreatedb, rolcreaterole,
              pg_get_userbyid(datdba) AS database_owner
         FROM pg_roles, pg_database WHERE rolname = current_user AND datname = current_database()`,
    );
    expect(role).toEqual({
      role: 'control_plane',
      database: 'control_plane',
      rolsuper: false,
      rolcreatedb: false,
      rolcreaterole: false,
      database_owner: 'control_plane',
    });

    // The CLI migrates as that role (btree_gist is a trusted extension).
    const migrated = await runCli(['migrate'], { DATABASE_URL: started.url });
    expect(migrated.code).toBe(0);
    const owners = await queryAt<{ owner: string }>(
      started.url,
      `SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(owners).toEqual([{ owner: 'control_plane' }]);
    // What only a superuser may do is refused.
    await expect(queryAt(started.url, `COPY (SELECT 1) TO PROGRAM 'true'`)).rejects.toMatchObject({ code: '42501' });
    await expect(queryAt(started.url, `CREATE DATABASE another`)).rejects.toMatchObject({ code: '42501' });

    // Started again on the same data: the same role and data.
    await started.stop();
    started = await start(dir);
    expect(started.initdbPasswordFiles).toEqual([]);
    const [{ n }] = await queryAt<{ n: number }>(started.url, `SELECT count(*)::int AS n FROM migrations`);
    expect(n).toBeGreaterThan(0);
  }, 60_000);

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
    const previous = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 1500)'], { stdio: 'ignore' });
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
