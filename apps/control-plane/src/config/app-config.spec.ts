import { execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigurationError, loadConfig } from './app-config';

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigurationError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect({ ...loadConfig({}) }).toEqual({
      databaseUrl: undefined,
      databaseMigrationUrl: undefined,
      databaseRolePrefix: undefined,
      nodeEnv: undefined,
      dataDir: '.data',
      port: 3000,
      host: '0.0.0.0',
      apiTokens: [],
      pricingRateLimit: 120,
      pricingRateWindowS: 60,
      pricingMaxStalenessS: 600,
      priceBookMaxBytes: 536870912,
      trustProxy: false,
      redisUrl: undefined,
      databaseTimeoutS: 5,
      databaseMigrationTimeoutS: 600,
      httpKeepAliveTimeoutS: 65,
      httpHeadersTimeoutS: 10,
      httpRequestTimeoutS: 30,
      shutdownTimeoutS: 10,
      logLevel: 'info',
      logFormat: 'json',
      metricsPort: 9464,
      checkpointKey: undefined,
      checkpointOrigin: undefined,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u:p@db:5432/pricing',
      DATABASE_MIGRATION_URL: 'postgresql://owner:q@db:5432/pricing',
      DATABASE_ROLE_PREFIX: 'staging_',
      DATA_DIR: '/var/lib/pricing',
      PORT: '8080',
      HOST: '127.0.0.1',
      API_TOKENS: 'token-aaaaaaaaaaaaaaaa,token-bbbbbbbbbbbbbbbb',
      PRICING_RATE_LIMIT: '5',
      PRICING_RATE_WINDOW_S: '10',
      TRUST_PROXY: 'loopback, 10.0.0.0/8',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PRICING_MAX_STALENESS_S: '30',
      PRICE_BOOK_MAX_BYTES: '1048576',
      DATABASE_TIMEOUT_S: '2',
      DATABASE_MIGRATION_TIMEOUT_S: '1200',
      NODE_ENV: 'production',
      HTTP_KEEP_ALIVE_TIMEOUT_S: '75',
      HTTP_HEADERS_TIMEOUT_S: '5',
      HTTP_REQUEST_TIMEOUT_S: '20',
      SHUTDOWN_TIMEOUT_S: '3',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'pretty',
      METRICS_PORT: '9100',
    });
    expect({ ...config }).toEqual({
      databaseUrl: 'postgres://u:p@db:5432/pricing',
      databaseMigrationUrl: 'postgresql://owner:q@db:5432/pricing',
      databaseRolePrefix: 'staging_',
      nodeEnv: 'production',
      dataDir: '/var/lib/pricing',
      port: 8080,
      host: '127.0.0.1',
      apiTokens: ['token-aaaaaaaaaaaaaaaa', 'token-bbbbbbbbbbbbbbbb'],
      pricingRateLimit: 5,
      pricingRateWindowS: 10,
      pricingMaxStalenessS: 30,
      priceBookMaxBytes: 1048576,
      trustProxy: 'loopback,10.0.0.0/8',
      redisUrl: 'redis://127.0.0.1:6379',
      databaseTimeoutS: 2,
      databaseMigrationTimeoutS: 1200,
      httpKeepAliveTimeoutS: 75,
      httpHeadersTimeoutS: 5,
      httpRequestTimeoutS: 20,
      shutdownTimeoutS: 3,
      logLevel: 'debug',
      logFormat: 'pretty',
      metricsPort: 9100,
      checkpointKey: undefined,
      checkpointOrigin: undefined,
    });
  });

  it.each([
    ['true', true],
    ['false', false],
    ['2', 2],
    ['127.0.0.1', '127.0.0.1'],
  ])('takes TRUST_PROXY=%s as Express does', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '1e3'],
    ['PORT', ''],
    ['PRICING_RATE_LIMIT', '0'],
    ['PRICING_RATE_LIMIT', '-5'],
    ['PRICING_RATE_WINDOW_S', '1.5'],
    ['PRICING_MAX_STALENESS_S', 'ten'],
    ['PRICING_MAX_STALENESS_S', '4'],
    ['PRICE_BOOK_MAX_BYTES', '0'],
    ['PRICE_BOOK_MAX_BYTES', '1MiB'],
    ['PRICE_BOOK_MAX_BYTES', '1e6'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', ''],
    ['DATABASE_URL', 'postgres://u:pw@127.0.0.1:99999/pricing'], // pg's new URL() refuses it
    ['DATABASE_URL', 'postgres://u:pw@[::1/pricing'],
    ['REDIS_URL', 'localhost:6379'],
    ['API_TOKENS', 'short'],
    ['API_TOKENS', 'token-aaaaaaaaaaaaaaaa,,token-bbbbbbbbbbbbbbbb'],
    ['TRUST_PROXY', 'not-an-address'],
    ['DATA_DIR', ''],
    ['DATABASE_TIMEOUT_S', '0'],
    ['SHUTDOWN_TIMEOUT_S', 'soon'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_FORMAT', 'text'],
    ['METRICS_PORT', '65536'],
    ['METRICS_PORT', 'no'],
    ['METRICS_PORT', ''],
    ['DATABASE_MIGRATION_TIMEOUT_S', '0'],
    ['HTTP_KEEP_ALIVE_TIMEOUT_S', '0'],
    ['HTTP_HEADERS_TIMEOUT_S', '1.5'],
    ['HTTP_REQUEST_TIMEOUT_S', '5'], // shorter than the head's 10 s
  ])('refuses %s=%j with a message naming it', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}`));
  });

  it('needs DATABASE_URL with NODE_ENV=production: the embedded PostgreSQL is for development', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual([
      'DATABASE_URL is required when NODE_ENV=production: the embedded PostgreSQL and its sample prices are for development only',
    ]);
    expect(problemsOf({ NODE_ENV: 'production', DATABASE_URL: 'postgres://u:p@db/pricing' })).toEqual([]);
    expect(problemsOf({ NODE_ENV: 'development' })).toEqual([]);
    expect(problemsOf({ NODE_ENV: 'production', DATABASE_URL: 'mysql://x' })).toEqual([
      'DATABASE_URL must be a postgres:// or postgresql:// URL',
    ]);
  });

  it('says an empty DATABASE_URL is empty (a forgotten value, not a bad port), and that unsetting it means the embedded PostgreSQL', () => {
    expect(problemsOf({ DATABASE_URL: '' })).toEqual([
      'DATABASE_URL is set but empty: set it to a postgres:// URL, or unset it for the embedded PostgreSQL under DATA_DIR (development only)',
    ]);
  });

  it('takes DATABASE_MIGRATION_URL by the rules of DATABASE_URL, and only beside it', () => {
    const runtime = { DATABASE_URL: 'postgres://app:p@db/pricing' };
    expect(problemsOf({ ...runtime, DATABASE_MIGRATION_URL: 'postgres://owner:q@db/pricing' })).toEqual([]);
    expect(problemsOf({ ...runtime, DATABASE_MIGRATION_URL: 'mysql://x' })).toEqual([
      'DATABASE_MIGRATION_URL must be a postgres:// or postgresql:// URL',
    ]);
    expect(problemsOf({ ...runtime, DATABASE_MIGRATION_URL: 'postgres://u:pw@127.0.0.1:99999/pricing' })).toEqual([
      'DATABASE_MIGRATION_URL is not a URL that can be parsed (check its port and brackets)',
    ]);
    expect(problemsOf({ DATABASE_MIGRATION_URL: 'postgres://owner:q@db/pricing' })).toEqual([
      'DATABASE_MIGRATION_URL needs DATABASE_URL, the role the service runs as: without DATABASE_URL the embedded PostgreSQL makes its own two roles',
    ]);
    expect(problemsOf({ NODE_ENV: 'production', DATABASE_MIGRATION_URL: 'postgres://owner:q@db/pricing' })).toEqual([
      'DATABASE_URL is required when NODE_ENV=production: the embedded PostgreSQL and its sample prices are for development only',
      'DATABASE_MIGRATION_URL needs DATABASE_URL, the role the service runs as: without DATABASE_URL the embedded PostgreSQL makes its own two roles',
    ]);
  });

  it('takes DATABASE_ROLE_PREFIX as the start of a lower-case PostgreSQL name, nothing else', () => {
    for (const prefix of ['staging_', 'a', '_x9', 'p'.repeat(40)]) {
      expect(problemsOf({ DATABASE_ROLE_PREFIX: prefix })).toEqual([]);
    }
    expect(loadConfig({ DATABASE_ROLE_PREFIX: '' }).databaseRolePrefix).toBeUndefined();
    for (const prefix of ['Staging_', '9a', 'a-b', 'a b', 'a"; DROP ROLE x; --', 'p'.repeat(41), 'é']) {
      expect(problemsOf({ DATABASE_ROLE_PREFIX: prefix })).toEqual([
        'DATABASE_ROLE_PREFIX must be 1 to 40 lower-case letters, digits and _, not starting with a digit',
      ]);
    }
  });

  it('with NODE_ENV=production, refuses DATABASE_URL and DATABASE_MIGRATION_URL naming two databases, naming both', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://app:secret@db.internal:5432/pricing' };
    const problems = (migration: string) => problemsOf({ ...production, DATABASE_MIGRATION_URL: migration });
    // One database: other roles, other passwords, the default port written or not, the host's case.
    expect(problems('postgres://owner:other@db.internal/pricing')).toEqual([]);
    expect(problems('postgresql://owner@DB.internal:5432/pricing?sslmode=require')).toEqual([]);
    // Two: another database name, port or host.
    for (const [migration, named] of [
      ['postgres://owner:q@db.internal/pricing_staging', 'db.internal:5432/pricing_staging'],
      ['postgres://owner:q@db.internal:5433/pricing', 'db.internal:5433/pricing'],
      ['postgres://owner:q@db-replica.internal/pricing', 'db-replica.internal:5432/pricing'],
      ['postgres://owner:q@db.internal', 'db.internal:5432/owner'], // no database: libpq's default, the user's name
    ]) {
      expect(problems(migration)).toEqual([
        `DATABASE_MIGRATION_URL names another database (${named}, not db.internal:5432/pricing) than DATABASE_URL: ` +
          'with NODE_ENV=production both must name one database (the same host, port and database name, as written), ' +
          'or the service would read a database its migrations never touched',
      ]);
    }
    expect(problems('postgres://owner:q@db.internal/other').join()).not.toContain('secret');
    // Not in development, where a host may be written two ways (localhost, 127.0.0.1).
    expect(
      problemsOf({
        DATABASE_URL: 'postgres://app:p@localhost/pricing',
        DATABASE_MIGRATION_URL: 'postgres://owner:q@127.0.0.1/pricing',
      }),
    ).toEqual([]);
    // A URL no parser reads is refused by its own rule, once.
    expect(problems('postgres://u:pw@127.0.0.1:99999/pricing')).toEqual([
      'DATABASE_MIGRATION_URL is not a URL that can be parsed (check its port and brackets)',
    ]);
    expect(problems('postgres://owner@db.internal/%E0%A4%A')).toHaveLength(1);
  });

  it('turns the metrics server off with METRICS_PORT=off', () => {
    expect(loadConfig({ METRICS_PORT: 'off' }).metricsPort).toBe('off');
  });

  it('names every bad variable at once', () => {
    expect(problemsOf({ PORT: 'x', PRICING_RATE_LIMIT: '0' }).map((p) => p.split(' ')[0])).toEqual([
      'PORT',
      'PRICING_RATE_LIMIT',
    ]);
  });
});

describe('the checkpoint key (PRICING_CHECKPOINT_KEY_FILE, PRICING_CHECKPOINT_ORIGIN)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'checkpoint-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string | Buffer, mode = 0o600) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode });
    chmodSync(path, mode); // whatever the umask
    return path;
  };
  const pem = (type: 'ed25519' | 'x25519') =>
    generateKeyPairSync(type as 'ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const ORIGIN = 'pricing.example.com/v1/pricing';

  it('reads an Ed25519 key in PKCS#8 PEM, with its name', () => {
    const config = loadConfig({
      PRICING_CHECKPOINT_KEY_FILE: file('good.pem', pem('ed25519')),
      PRICING_CHECKPOINT_ORIGIN: ORIGIN,
    });
    expect(config.checkpointKey?.asymmetricKeyType).toBe('ed25519');
    expect(config.checkpointKey?.type).toBe('private');
    expect(config.checkpointOrigin).toBe(ORIGIN);
    // Readable by others (a mounted secret's 0644) is taken; writable by others is not.
    expect(
      problemsOf({
        PRICING_CHECKPOINT_KEY_FILE: file('shared.pem', pem('ed25519'), 0o644),
        PRICING_CHECKPOINT_ORIGIN: ORIGIN,
      }),
    ).toEqual([]);
  });

  it.each([
    ['a missing file', () => join(dir, 'missing.pem'), 'PRICING_CHECKPOINT_KEY_FILE cannot be read (ENOENT)'],
    ['a directory', () => dir, 'PRICING_CHECKPOINT_KEY_FILE is not a regular file'],
    ['a device', () => '/dev/zero', 'PRICING_CHECKPOINT_KEY_FILE is not a regular file'],
    [
      'a file others may write',
      () => file('writable.pem', pem('ed25519'), 0o666),
      'PRICING_CHECKPOINT_KEY_FILE may be written by others than its owner (mode 666): chmod 600 it',
    ],
    [
      'a file too large',
      () => file('large.pem', Buffer.alloc(20_000, 65)),
      'PRICING_CHECKPOINT_KEY_FILE is larger than any key file',
    ],
    [
      'a key of another kind',
      () => file('x25519.pem', pem('x25519')),
      'PRICING_CHECKPOINT_KEY_FILE holds no Ed25519 private key in PKCS#8 PEM (make one with `npm run -s pricing -- keygen`)',
    ],
    [
      'no key at all',
      () => file('text.pem', 'hello'),
      'PRICING_CHECKPOINT_KEY_FILE holds no Ed25519 private key in PKCS#8 PEM (make one with `npm run -s pricing -- keygen`)',
    ],
  ])('refuses %s', (_what, path, problem) => {
    expect(problemsOf({ PRICING_CHECKPOINT_KEY_FILE: path(), PRICING_CHECKPOINT_ORIGIN: ORIGIN })).toEqual([problem]);
  });

  it('refuses a FIFO at once, without waiting for a writer (the start would block for good)', () => {
    const fifo = join(dir, 'key.fifo');
    execFileSync('mkfifo', [fifo]);
    // In a process of its own: the read is synchronous, and a blocked open would hang this worker.
    const register = resolve(__dirname, '../../../../test/support/register.cjs');
    const script =
      `const { readCheckpointKey } = require(${JSON.stringify(resolve(__dirname, 'checkpoint-key.ts'))});` +
      `process.stdout.write(JSON.stringify(readCheckpointKey(${JSON.stringify(fifo)})));`;
    const run = spawnSync(process.execPath, ['--require', register, '-e', script], {
      timeout: 10_000,
      encoding: 'utf8',
    });
    expect({ signal: run.signal, stdout: run.stdout }).toEqual({
      signal: null,
      stdout: JSON.stringify({ problem: 'is not a regular file' }),
    });
  }, 30_000);

  it('needs a name that is a key name with the key, and no name without it', () => {
    const key = file('named.pem', pem('ed25519'));
    expect(problemsOf({ PRICING_CHECKPOINT_KEY_FILE: key })).toEqual([
      'PRICING_CHECKPOINT_ORIGIN is required with PRICING_CHECKPOINT_KEY_FILE: the key’s name, as given to keygen',
    ]);
    for (const origin of ['pricing example', 'a+b', '', 'x'.repeat(257)]) {
      expect(problemsOf({ PRICING_CHECKPOINT_KEY_FILE: key, PRICING_CHECKPOINT_ORIGIN: origin })).toEqual([
        'PRICING_CHECKPOINT_ORIGIN must be a key name: printable, no space, no "+", at most 256 characters',
      ]);
    }
    expect(problemsOf({ PRICING_CHECKPOINT_ORIGIN: ORIGIN })).toEqual([
      'PRICING_CHECKPOINT_ORIGIN names the key of PRICING_CHECKPOINT_KEY_FILE, which is not set',
    ]);
  });
});
