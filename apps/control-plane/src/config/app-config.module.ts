import { Module, type DynamicModule } from '@nestjs/common';
import { AppConfig } from './app-config';

/** The validated configuration, injectable as `AppConfig` in every module. */
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppConfigModule,
      global: true,
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
