import { ConfigurableModuleBuilder } from '@nestjs/common';

export interface AuthModuleOptions {
  /** The bearer tokens that authenticate a request; none means every non-public route answers 401. */
  readonly tokens: readonly string[];
}

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: AUTH_OPTIONS } =
  new ConfigurableModuleBuilder<AuthModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
