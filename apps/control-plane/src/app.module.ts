import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AuthModule, BearerAuthGuard } from '@app/auth';
import { ClockModule } from '@app/clock';
import { DatabaseModule } from '@app/database';
import { PricingModule } from '@app/pricing';
import { AppConfig } from './config/app-config';
import { AppConfigModule } from './config/app-config.module';
import { appDatabaseOptions } from './database/app-database';
import { ApiExceptionFilter } from './errors/api-exception.filter';
import { HealthModule } from './health/health.module';
import { RequestLogging } from './logging/request-logging';
import { MetricsModule } from './metrics/metrics.module';
import { ApiDocs } from './openapi';
import { bodyValidationPipe, RefuseDeepBodiesPipe, RefuseReservedKeysPipe } from './validation';
import { VolumesModule } from './volumes/volumes.module';

/**
 * The control plane. `config` is the validated environment; `databaseUrl` is DATABASE_URL, or
 * the embedded PostgreSQL's when it is unset (main.ts starts that one, as it outlives the app);
 * `migrationUrl`, the role that migrates: DATABASE_MIGRATION_URL, or the embedded one's owner.
 */
@Module({})
export class AppModule {
  static forRoot(
    config: AppConfig,
    databaseUrl: string,
    migrationUrl: string | undefined = config.databaseMigrationUrl,
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(config),
        ClockModule,
        // Pricing first: its routes are matched before any other.
        PricingModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (env: AppConfig) => ({
            rateLimit: env.pricingRateLimit,
            rateWindowS: env.pricingRateWindowS,
            trustProxy: env.trustProxy,
            redisUrl: env.redisUrl,
            maxStalenessS: env.pricingMaxStalenessS,
            checkpoint: env.checkpointKey && { origin: env.checkpointOrigin!, privateKey: env.checkpointKey },
          }),
        }),
        DatabaseModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (env: AppConfig) => ({
            ...appDatabaseOptions(
              databaseUrl,
              env.databaseTimeoutS,
              env.databaseMigrationTimeoutS,
              // The embedded default's roles are its own server's, unprefixed (embedded-postgres.ts).
              env.databaseUrl === undefined ? undefined : env.databaseRolePrefix,
            ),
            migrationUrl,
          }),
        }),
        AuthModule.forRootAsync({ inject: [AppConfig], useFactory: (env: AppConfig) => ({ tokens: env.apiTokens }) }),
        VolumesModule,
        MetricsModule,
        HealthModule,
      ],
      providers: [
        { provide: APP_GUARD, useExisting: BearerAuthGuard },
        { provide: APP_PIPE, useClass: RefuseDeepBodiesPipe },
        { provide: APP_PIPE, useClass: RefuseReservedKeysPipe },
        { provide: APP_PIPE, useFactory: bodyValidationPipe },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        RequestLogging,
        ApiDocs,
      ],
    };
  }
}
