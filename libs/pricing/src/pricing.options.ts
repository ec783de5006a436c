import { ConfigurableModuleBuilder } from '@nestjs/common';

export interface PricingModuleOptions {
  /** PostgreSQL URL for the LISTEN connection that hears price book changes. */
  readonly databaseUrl: string;
  /** Requests per client address per window on `GET /v1/pricing`. */
  readonly rateLimit: number;
  readonly rateWindowS: number;
  /** With a Redis URL, instances share the rate limit through Redis. */
  readonly redisUrl?: string;
  /** How long the last loaded prices are served while the database cannot be read. */
  readonly maxStalenessS: number;
}

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: PRICING_OPTIONS } =
  new ConfigurableModuleBuilder<PricingModuleOptions>()
    .setClassMethodName('forRoot')
    // Global by default: every module of the control plane may ask pricing.
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
