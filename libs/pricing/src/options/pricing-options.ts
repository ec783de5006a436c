import type { KeyObject } from 'node:crypto';

/** Express's `trust proxy` values: `true`, a hop count, or addresses, subnets and names. */
export type TrustProxy = boolean | number | string;

/**
 * Options of PricingModule; every one has a default, so `PricingModule.forRoot()` works as is.
 *
 * What the module needs from its host: `DatabaseModule` from `@app/database` (global), whose
 * migrations include `pricingMigrations`; it connects and migrates the database, and the
 * pricing module loads the prices once it is ready, then on every change. A host that serves
 * HTTP gets `GET /v1/pricing` (PricingController, public under any global guard); an
 * application context without HTTP (a worker, a billing job) uses PricingService alone.
 */
export interface PricingModuleOptions {
  /** Requests per client address per window on `GET /v1/pricing` (default 120). */
  readonly rateLimit?: number;
  /** The rate-limit window in seconds (default 60). */
  readonly rateWindowS?: number;
  /**
   * Express's trust proxy values (default false: the socket's address is the client's). Only
   * then is `X-Forwarded-For` read; `true` trusts every hop and is warned about at start.
   */
  readonly trustProxy?: TrustProxy;
  /** With a Redis URL, instances share the rate limit through Redis (default: in memory). */
  readonly redisUrl?: string;
  /** How long, in seconds, the last loaded prices are served while the database cannot be read (default 600). */
  readonly maxStalenessS?: number;
  /**
   * Bytes of prepared answers of the list's past (`/v1/pricing/at/{instant}` documents and full
   * `/v1/pricing/changes` pages, every coding counted) kept for the next request; the least
   * recently asked go first (default 64 MiB).
   */
  readonly pastAnswersBytes?: number;
  /**
   * With it, `GET /v1/pricing/checkpoint` serves the feed's chain head signed by this key (a signed
   * note, docs/price-history-api.md, "The checkpoint"); without it, 404.
   */
  readonly checkpoint?: CheckpointSigning;
}

/** The key that signs checkpoints: an Ed25519 private key, and its name, the log's origin. */
export interface CheckpointSigning {
  /** The key's name and the checkpoint's origin: no space, no `+` (`pricing.example.com/v1/pricing`). */
  readonly origin: string;
  readonly privateKey: KeyObject;
}

export type ResolvedPricingOptions = Required<Omit<PricingModuleOptions, 'redisUrl' | 'checkpoint'>> &
  Pick<PricingModuleOptions, 'redisUrl' | 'checkpoint'>;

export const PRICING_DEFAULTS = {
  rateLimit: 120,
  rateWindowS: 60,
  trustProxy: false,
  maxStalenessS: 600,
  pastAnswersBytes: 64 * 1024 * 1024,
} as const;

/** The options with their defaults filled in; what the providers inject. */
export const PRICING_OPTIONS = Symbol('PRICING_OPTIONS');

export function resolvePricingOptions(options: PricingModuleOptions): ResolvedPricingOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return { ...PRICING_DEFAULTS, ...defined };
}
