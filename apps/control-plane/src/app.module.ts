import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PricingModule } from '@app/pricing';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { AppConfig } from './config/environment';
import { dataSourceOptions } from './database/data-source-options';
import { DATABASE_SETTINGS, DatabaseLifecycle, type DatabaseSettings } from './database/database-lifecycle';
import { ApiExceptionFilter } from './errors/api-exception.filter';
import { HealthController } from './health/health.controller';
import { VolumesModule } from './volumes/volumes.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, databaseUrl: string, database: DatabaseSettings): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // Connected by DatabaseLifecycle, in the background: the app listens without a database.
        TypeOrmModule.forRoot({ ...dataSourceOptions(databaseUrl), manualInitialization: true }),
        PricingModule.forRoot({
          databaseUrl,
          rateLimit: config.pricing.rateLimit,
          rateWindowS: config.pricing.rateWindowS,
          maxStalenessS: config.pricing.maxStalenessS,
          redisUrl: config.redisUrl,
        }),
        VolumesModule,
      ],
      controllers: [HealthController],
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: DATABASE_SETTINGS, useValue: database },
        DatabaseLifecycle,
        { provide: APP_GUARD, useClass: BearerAuthGuard },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}
