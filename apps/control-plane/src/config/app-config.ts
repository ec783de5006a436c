import { applyDecorators } from '@nestjs/common';
import { Expose, plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateIf,
  validateSync,
  type ValidationOptions,
} from 'class-validator';
import { KeyObject } from 'node:crypto';
import type { TrustProxy } from '@app/pricing';
// The CLI's entry point: loading @app/pricing would load Swagger, Redis and metrics into every command.
import { isKeyName } from '@app/pricing/cli';
import compileTrust from 'proxy-addr';
import { constraintMessages } from '../validation';
import { readCheckpointKey } from './checkpoint-key';

// Each property reads one environment variable (@Expose's name), is checked by the decorators
// below it and has its default as its initializer: a new variable is one new property here.

/** An integer from digits only: "1e3", " 12" and "" are refused rather than guessed at. */
const integer = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value,
  );

/** The variable `name`: a whole number of at least `min`, from digits only, its message naming it. */
const atLeast = (name: string, min: number, what = 'an integer') => {
  const message = `${name} must be ${what} of at least ${min}`;
  return applyDecorators(Expose({ name }), integer(), IsInt({ message }), Min(min, { message }));
};

/** The variable `name`: whole seconds, at least `min`. */
const seconds = (name: string, min = 1) => atLeast(name, min, 'an integer (seconds)');

const POSTGRES_URL = /^postgres(ql)?:\/\/\S+$/;

/**
 * The variable `name` is a URL that `new URL` reads, as pg does: one it cannot parse (a port above
 * 65535, an unclosed `[`) would fail every connection attempt, retried forever, rather than the start.
 */
const ParsableUrl = (name: string) =>
  ValidateBy(
    {
      name: 'isParsableUrl',
      // An empty value is said to be empty (Matches), not to have a bad port.
      validator: { validate: (value: unknown) => typeof value !== 'string' || value === '' || URL.canParse(value) },
    },
    { message: `${name} is not a URL that can be parsed (check its port and brackets)` },
  );

/**
 * Where a PostgreSQL URL connects, as pg reads it, without its credentials: host (lower case; a
 * `host` parameter wins, as for a socket directory), port (5432 by default) and database (the
 * user's name by default, as libpq's). `undefined` for what `new URL` cannot read.
 */
function databaseOf(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host') ?? (decoded(parsed.hostname).toLowerCase() || 'localhost');
  const port = parsed.searchParams.get('port') ?? (parsed.port || '5432');
  const database = decoded(parsed.pathname.slice(1)) || decoded(parsed.username);
  return `${host}:${port}/${database}`;
}

/** Percent-decoded text, or the text as it is where its escapes are no UTF-8 (decodeURIComponent would throw). */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * `host:port/database of the migration URL, not host:port/database of the service's` when the two
 * URLs name two databases; `undefined` when they name one, or either is missing or unreadable
 * (other rules say so).
 */
function databasesDiffer(databaseUrl: string | undefined, migrationUrl: unknown): string | undefined {
  if (databaseUrl === undefined || typeof migrationUrl !== 'string') return undefined;
  const [service, migrations] = [databaseOf(databaseUrl), databaseOf(migrationUrl)];
  if (service === undefined || migrations === undefined || service === migrations) return undefined;
  return `${migrations}, not ${service}`;
}

const TOKEN_LIST = /^[A-Za-z0-9._~+/=-]{16,}(,[A-Za-z0-9._~+/=-]{16,})*$/;

/** The validated configuration of the control plane (README, "Configuration"); nothing else reads `process.env`. */
export class AppConfig {
  /**
   * PostgreSQL URL. Unset: the embedded PostgreSQL in `dataDir` with the sample book, which is for
   * development and first runs only: with NODE_ENV=production it is required.
   */
  @Expose({ name: 'DATABASE_URL' })
  @ValidateIf((config: AppConfig) => config.databaseUrl !== undefined || config.nodeEnv === 'production')
  @Matches(POSTGRES_URL, {
    message: ({ value }) =>
      value === undefined
        ? 'DATABASE_URL is required when NODE_ENV=production: the embedded PostgreSQL and its sample prices are for development only'
        : value === ''
          ? 'DATABASE_URL is set but empty: set it to a postgres:// URL, or unset it for the embedded PostgreSQL under DATA_DIR (development only)'
          : 'DATABASE_URL must be a postgres:// or postgresql:// URL',
  })
  @ParsableUrl('DATABASE_URL')
  readonly databaseUrl?: string;

  /**
   * PostgreSQL URL of the role that migrates (at start-up, `npm run migrate` and the CLI) and owns
   * the schema, granting DATABASE_URL's role only what the service and the CLI need. Unset:
   * DATABASE_URL's role migrates and owns it (warned about at start with NODE_ENV=production).
   * Only beside DATABASE_URL: the embedded PostgreSQL makes its own two roles.
   */
  @Expose({ name: 'DATABASE_MIGRATION_URL' })
  @ValidateIf((config: AppConfig) => config.databaseMigrationUrl !== undefined)
  @ValidateBy(
    {
      name: 'besideDatabaseUrl',
      validator: { validate: (_value: unknown, args) => (args?.object as AppConfig).databaseUrl !== undefined },
    },
    {
      message:
        'DATABASE_MIGRATION_URL needs DATABASE_URL, the role the service runs as: without DATABASE_URL the embedded PostgreSQL makes its own two roles',
    },
  )
  @Matches(POSTGRES_URL, { message: 'DATABASE_MIGRATION_URL must be a postgres:// or postgresql:// URL' })
  @ParsableUrl('DATABASE_MIGRATION_URL')
  @ValidateBy(
    {
      name: 'sameDatabase',
      validator: {
        validate: (value: unknown, args) => {
          const config = args?.object as AppConfig;
          return config.nodeEnv !== 'production' || databasesDiffer(config.databaseUrl, value) === undefined;
        },
      },
    },
    {
      message: ({ object, value }) =>
        `DATABASE_MIGRATION_URL names another database (${databasesDiffer((object as AppConfig).databaseUrl, value)}) ` +
        'than DATABASE_URL: with NODE_ENV=production both must name one database (the same host, port and database ' +
        'name, as written), or the service would read a database its migrations never touched',
    },
  )
  readonly databaseMigrationUrl?: string;

  /**
   * Put before the group roles' names (`pricing_reader`, `pricing_writer`, `volumes_writer`) to which
   * migration runs with DATABASE_MIGRATION_URL grant: roles belong to the whole server, so databases
   * of one server that must not share them use prefixes of their own. Every migration run of one
   * database uses the same (each moves the grants to the roles it names). Ignored by the embedded
   * default, whose server is its own. Empty: none.
   */
  @Expose({ name: 'DATABASE_ROLE_PREFIX' })
  @Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value))
  @IsOptional()
  @Matches(/^[a-z_][a-z0-9_]{0,39}$/, {
    message: 'DATABASE_ROLE_PREFIX must be 1 to 40 lower-case letters, digits and _, not starting with a digit',
  })
  readonly databaseRolePrefix?: string;

  /** `production` refuses the development defaults (the embedded PostgreSQL); any other value changes nothing. */
  @Expose({ name: 'NODE_ENV' })
  @IsOptional()
  @IsString()
  readonly nodeEnv?: string;

  /** The embedded PostgreSQL's data and password. */
  @Expose({ name: 'DATA_DIR' })
  @Matches(/\S/, { message: 'DATA_DIR must not be empty' })
  readonly dataDir: string = '.data';

  @Expose({ name: 'PORT' })
  @integer()
  @IsInt({ message: 'PORT must be an integer from 0 to 65535' })
  @Min(0, { message: 'PORT must be an integer from 0 to 65535' })
  @Max(65535, { message: 'PORT must be an integer from 0 to 65535' })
  readonly port: number = 3000;

  @Expose({ name: 'HOST' })
  @Matches(/^\S+$/, { message: 'HOST must be a host name or address to listen on' })
  readonly host: string = '0.0.0.0';

  /** Bearer tokens of the authenticated routes; none: every authenticated route answers 401. */
  @Expose({ name: 'API_TOKENS' })
  @Transform(({ value }: { value: unknown }) =>
    value === undefined ? [] : typeof value === 'string' && TOKEN_LIST.test(value) ? value.split(',') : value,
  )
  @satisfies('isTokenList', Array.isArray, {
    message: 'API_TOKENS must be comma-separated tokens of at least 16 characters [A-Za-z0-9._~+/=-]',
  })
  readonly apiTokens: readonly string[] = [];

  /** Requests per client address per window on `GET /v1/pricing`. */
  @atLeast('PRICING_RATE_LIMIT', 1, 'a positive integer')
  readonly pricingRateLimit: number = 120;

  @atLeast('PRICING_RATE_WINDOW_S', 1, 'a positive integer (seconds)')
  readonly pricingRateWindowS: number = 60;

  /** How long the last loaded prices are served while the database cannot be read. */
  // Below that, the version check (at most once a second) could not keep a list fresh.
  @seconds('PRICING_MAX_STALENESS_S', 5)
  readonly pricingMaxStalenessS: number = 600;

  /** The largest price book file the CLI reads, in bytes (the library's default too, price-book-file.ts). */
  @atLeast('PRICE_BOOK_MAX_BYTES', 1, 'a positive integer (bytes)')
  readonly priceBookMaxBytes: number = 512 * 1024 * 1024;

  /**
   * The actor the price book CLI records on a write without `--actor`; unset or empty: the
   * operating system's user name. The CLI checks it as it checks `--actor` (a usage error, exit 2:
   * libs/pricing/src/cli/price-book-command.ts); the server never writes with it.
   */
  @Expose({ name: 'PRICING_ACTOR' })
  @IsOptional()
  @IsString()
  readonly pricingActor?: string;

  /** Express's trust proxy values; only then is `X-Forwarded-For` read for the client address. */
  @Expose({ name: 'TRUST_PROXY' })
  @Transform(({ value }: { value: unknown }) => parseTrustProxy(value))
  @satisfies('isTrustProxy', isTrustProxy, {
    message: 'TRUST_PROXY must be true, false, a hop count, or addresses, subnets, loopback, linklocal, uniquelocal',
  })
  readonly trustProxy: TrustProxy = false;

  /** With it, instances share the rate limit through Redis. */
  @Expose({ name: 'REDIS_URL' })
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  readonly redisUrl?: string;

  /**
   * The key that signs `GET /v1/pricing/checkpoint` (docs/operations.md, "The public audit log"):
   * a file of an Ed25519 private key in PKCS#8 PEM (`npm run -s pricing -- keygen`), read once at
   * start. Unset: no checkpoint is signed (404).
   */
  @Expose({ name: 'PRICING_CHECKPOINT_KEY_FILE' })
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && value !== '' ? readCheckpointKey(value) : undefined,
  )
  @satisfies('isCheckpointKey', (value) => value === undefined || value instanceof KeyObject, {
    message: ({ value }) =>
      `PRICING_CHECKPOINT_KEY_FILE ${(value as { problem?: string } | undefined)?.problem ?? 'is not a key file'}`,
  })
  readonly checkpointKey?: KeyObject;

  /**
   * The name of the checkpoint key, and the origin of the log it signs: the name given to `keygen`
   * (`pricing.example.com/v1/pricing`). Required with PRICING_CHECKPOINT_KEY_FILE, and only with it.
   */
  @Expose({ name: 'PRICING_CHECKPOINT_ORIGIN' })
  @ValidateIf((config: AppConfig) => config.checkpointOrigin !== undefined || config.checkpointKey !== undefined)
  @satisfies('isKeyName', (value) => typeof value === 'string' && isKeyName(value), {
    message: ({ value }) =>
      value === undefined
        ? 'PRICING_CHECKPOINT_ORIGIN is required with PRICING_CHECKPOINT_KEY_FILE: the key’s name, as given to keygen'
        : 'PRICING_CHECKPOINT_ORIGIN must be a key name: printable, no space, no "+", at most 256 characters',
  })
  @ValidateBy(
    {
      name: 'withCheckpointKey',
      validator: { validate: (_value: unknown, args) => (args?.object as AppConfig).checkpointKey !== undefined },
    },
    { message: 'PRICING_CHECKPOINT_ORIGIN names the key of PRICING_CHECKPOINT_KEY_FILE, which is not set' },
  )
  readonly checkpointOrigin?: string;

  /** Client-side limit of every database call (connect, query, heartbeat). */
  @seconds('DATABASE_TIMEOUT_S')
  readonly databaseTimeoutS: number = 5;

  /**
   * Limit of each statement of a migration, at start-up and in `npm run migrate`: a migration of a
   * large book may take minutes, more than DATABASE_TIMEOUT_S. One that overruns it is not retried.
   */
  @seconds('DATABASE_MIGRATION_TIMEOUT_S')
  readonly databaseMigrationTimeoutS: number = 600;

  /**
   * How long an idle keep-alive connection is kept: longer than the idle timeouts of the load
   * balancers in front (60 s for most), so that they close first and never send on a closed one.
   */
  @seconds('HTTP_KEEP_ALIVE_TIMEOUT_S')
  readonly httpKeepAliveTimeoutS: number = 65;

  /** A request's head must have arrived within this long (a client that dribbles it in is dropped with 408). */
  @seconds('HTTP_HEADERS_TIMEOUT_S')
  readonly httpHeadersTimeoutS: number = 10;

  /** A whole request (head and body) must have arrived within this long. */
  @seconds('HTTP_REQUEST_TIMEOUT_S')
  @ValidateBy(
    {
      name: 'notShorterThanHeaders',
      validator: {
        validate: (value: unknown, args) => (value as number) >= (args?.object as AppConfig).httpHeadersTimeoutS,
      },
    },
    { message: 'HTTP_REQUEST_TIMEOUT_S must be at least HTTP_HEADERS_TIMEOUT_S: the head is part of the request' },
  )
  readonly httpRequestTimeoutS: number = 30;

  /** After a stop signal, connections still open after this long are closed. */
  @seconds('SHUTDOWN_TIMEOUT_S')
  readonly shutdownTimeoutS: number = 10;

  @Expose({ name: 'LOG_LEVEL' })
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace'], {
    message: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace',
  })
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' = 'info';

  /** `json`: one JSON object per line on stdout; `pretty`: coloured text for a person at a terminal. */
  @Expose({ name: 'LOG_FORMAT' })
  @IsIn(['json', 'pretty'], { message: 'LOG_FORMAT must be json or pretty' })
  readonly logFormat: 'json' | 'pretty' = 'json';

  /** Port of the Prometheus `/metrics` server, on HOST; `off`: no metrics server. Never the API's port. */
  @Expose({ name: 'METRICS_PORT' })
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : (value ?? 9464),
  )
  @ValidateBy(
    {
      name: 'isMetricsPort',
      validator: {
        validate: (value: unknown) =>
          value === 'off' || (Number.isInteger(value) && 0 <= (value as number) && (value as number) <= 65535),
      },
    },
    { message: 'METRICS_PORT must be off or an integer from 0 to 65535' },
  )
  readonly metricsPort: number | 'off' = 9464;
}

export class ConfigurationError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigurationError';
  }
}

/** Reads and checks the environment; throws a `ConfigurationError` naming every bad variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): AppConfig {
  const config = plainToInstance(AppConfig, env, { excludeExtraneousValues: true, exposeDefaultValues: true });
  const problems = validateSync(config).flatMap(constraintMessages);
  if (problems.length > 0) throw new ConfigurationError(problems);
  return config;
}

/**
 * TRUST_PROXY takes Express's trust proxy values: `true`/`false`, a hop count, or a
 * comma-separated list of addresses, subnets and the names loopback, linklocal, uniquelocal.
 * A list that does not compile is kept as given, for the validator to refuse.
 */
function parseTrustProxy(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? false;
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value
    .split(',')
    .map((part) => part.trim())
    .join(',');
}

/** A rule of our own, its message naming the variable. */
function satisfies(name: string, validate: (value: unknown) => boolean, options: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name, validator: { validate } }, options);
}

function isTrustProxy(value: unknown): boolean {
  if (typeof value === 'boolean' || typeof value === 'number') return true;
  if (typeof value !== 'string') return false;
  try {
    compileTrust.compile(value.split(','));
    return true;
  } catch {
    return false;
  }
}
