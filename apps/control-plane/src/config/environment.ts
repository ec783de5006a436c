import { plainToInstance, Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min, validateSync, type ValidationError } from 'class-validator';
import compileTrust from 'proxy-addr';

/** Integers are digits only: "1e3", " 12" and "" are refused rather than guessed at. */
const toInteger = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value,
  );

/** The environment the control plane reads, once, at start-up (README, "Configuration"). */
export class EnvironmentVariables {
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  readonly DATABASE_URL?: string;

  @IsString()
  @Matches(/\S/, { message: 'DATA_DIR must not be empty' })
  readonly DATA_DIR: string = '.data';

  @toInteger()
  @IsInt({ message: 'PORT must be an integer from 0 to 65535' })
  @Min(0, { message: 'PORT must be an integer from 0 to 65535' })
  @Max(65535, { message: 'PORT must be an integer from 0 to 65535' })
  readonly PORT: number = 3000;

  @IsString()
  @Matches(/^\S+$/, { message: 'HOST must be a host name or address to listen on' })
  readonly HOST: string = '0.0.0.0';

  @IsOptional()
  @Matches(/^[A-Za-z0-9._~+/=-]{16,}(,[A-Za-z0-9._~+/=-]{16,})*$/, {
    message: 'API_TOKENS must be comma-separated tokens of at least 16 characters [A-Za-z0-9._~+/=-]',
  })
  readonly API_TOKENS?: string;

  @toInteger()
  @IsInt({ message: 'PRICING_RATE_LIMIT must be a positive integer' })
  @Min(1, { message: 'PRICING_RATE_LIMIT must be a positive integer' })
  readonly PRICING_RATE_LIMIT: number = 120;

  @toInteger()
  @IsInt({ message: 'PRICING_RATE_WINDOW_S must be a positive integer (seconds)' })
  @Min(1, { message: 'PRICING_RATE_WINDOW_S must be a positive integer (seconds)' })
  readonly PRICING_RATE_WINDOW_S: number = 60;

  @IsOptional()
  @IsString()
  readonly TRUST_PROXY?: string;

  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  readonly REDIS_URL?: string;

  @toInteger()
  @IsInt({ message: 'PRICING_MAX_STALENESS_S must be an integer of at least 5 (seconds)' })
  // Below that, the version check (at most once a second) could not keep a list fresh.
  @Min(5, { message: 'PRICING_MAX_STALENESS_S must be an integer of at least 5 (seconds)' })
  readonly PRICING_MAX_STALENESS_S: number = 600;
}

/** Express's `trust proxy` setting: `true`, a hop count, or addresses, subnets and names. */
export type TrustProxy = boolean | number | string;

/** The validated configuration; nothing else reads `process.env`. */
export class AppConfig {
  constructor(
    /** Unset: the embedded PostgreSQL under `dataDir`. */
    readonly databaseUrl: string | undefined,
    readonly dataDir: string,
    readonly port: number,
    readonly host: string,
    readonly apiTokens: readonly string[],
    readonly pricing: { readonly rateLimit: number; readonly rateWindowS: number; readonly maxStalenessS: number },
    readonly trustProxy: TrustProxy,
    readonly redisUrl: string | undefined,
  ) {}
}

export class ConfigurationError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigurationError';
  }
}

/** Reads and checks the environment; throws a `ConfigurationError` naming every bad variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): AppConfig {
  const known = Object.keys(new EnvironmentVariables());
  const present = Object.fromEntries(
    [...known, 'DATABASE_URL', 'API_TOKENS', 'TRUST_PROXY', 'REDIS_URL']
      .filter((name) => env[name] !== undefined)
      .map((name) => [name, env[name]]),
  );
  const vars = plainToInstance(EnvironmentVariables, present);
  const problems = validateSync(vars).flatMap(messagesOf);
  const trustProxy = parseTrustProxy(vars.TRUST_PROXY, problems);
  if (problems.length > 0) throw new ConfigurationError(problems);
  return new AppConfig(
    vars.DATABASE_URL,
    vars.DATA_DIR,
    vars.PORT,
    vars.HOST,
    vars.API_TOKENS ? vars.API_TOKENS.split(',') : [],
    {
      rateLimit: vars.PRICING_RATE_LIMIT,
      rateWindowS: vars.PRICING_RATE_WINDOW_S,
      maxStalenessS: vars.PRICING_MAX_STALENESS_S,
    },
    trustProxy,
    vars.REDIS_URL,
  );
}

/** One message per variable, whichever of its rules failed. */
function messagesOf(error: ValidationError): string[] {
  const messages = new Set(
    Object.values(error.constraints ?? {}).map((message) =>
      message.startsWith(error.property) ? message : `${error.property}: ${message}`,
    ),
  );
  return [...messages];
}

/**
 * TRUST_PROXY takes Express's trust proxy values: `true`/`false`, a hop count, or a
 * comma-separated list of addresses, subnets and the names loopback, linklocal, uniquelocal.
 */
function parseTrustProxy(value: string | undefined, problems: string[]): TrustProxy {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const list = value.split(',').map((part) => part.trim());
  try {
    compileTrust.compile(list);
    return list.join(',');
  } catch (error) {
    problems.push(
      `TRUST_PROXY: ${(error as Error).message}; use true, a hop count, or addresses, subnets, loopback, linklocal, uniquelocal`,
    );
    return false;
  }
}
