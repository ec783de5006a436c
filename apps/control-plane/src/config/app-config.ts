import { applyDecorators } from '@nestjs/common';
import { Expose, plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  Matches,
  Max,
  Min,
  ValidateBy,
  validateSync,
  type ValidationOptions,
} from 'class-validator';
import compileTrust from 'proxy-addr';
import { constraintMessages } from '../validation';

/** Express's `trust proxy` setting: `true`, a hop count, or addresses, subnets and names. */
export type TrustProxy = boolean | number | string;

// Each property reads one environment variable (@Expose's name), is checked by the decorators
// below it and has its default as its initializer: a new variable is one new property here.

/** An integer from digits only: "1e3", " 12" and "" are refused rather than guessed at. */
const integer = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value,
  );

/** A whole number of at least `min`, from digits only, its message naming the variable. */
const atLeast = (name: string, min: number, what = 'an integer') => {
  const message = `${name} must be ${what} of at least ${min}`;
  return applyDecorators(integer(), IsInt({ message }), Min(min, { message }));
};

const TOKEN_LIST = /^[A-Za-z0-9._~+/=-]{16,}(,[A-Za-z0-9._~+/=-]{16,})*$/;

/** The validated configuration of the control plane (README, "Configuration"); nothing else reads `process.env`. */
export class AppConfig {
  /** PostgreSQL URL. Unset: the embedded PostgreSQL in `dataDir`. */
  @Expose({ name: 'DATABASE_URL' })
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  readonly databaseUrl?: string;

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
  @Expose({ name: 'PRICING_RATE_LIMIT' })
  @atLeast('PRICING_RATE_LIMIT', 1, 'a positive integer')
  readonly pricingRateLimit: number = 120;

  @Expose({ name: 'PRICING_RATE_WINDOW_S' })
  @atLeast('PRICING_RATE_WINDOW_S', 1, 'a positive integer (seconds)')
  readonly pricingRateWindowS: number = 60;

  /** How long the last loaded prices are served while the database cannot be read. */
  @Expose({ name: 'PRICING_MAX_STALENESS_S' })
  // Below that, the version check (at most once a second) could not keep a list fresh.
  @atLeast('PRICING_MAX_STALENESS_S', 5, 'an integer (seconds)')
  readonly pricingMaxStalenessS: number = 600;

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

  /** Client-side limit of every database call (connect, query, heartbeat). */
  @Expose({ name: 'DATABASE_TIMEOUT_S' })
  @atLeast('DATABASE_TIMEOUT_S', 1, 'an integer (seconds)')
  readonly databaseTimeoutS: number = 5;

  /** After a stop signal, connections still open after this long are closed. */
  @Expose({ name: 'SHUTDOWN_TIMEOUT_S' })
  @atLeast('SHUTDOWN_TIMEOUT_S', 1, 'an integer (seconds)')
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
