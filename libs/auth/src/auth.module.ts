import { Module } from '@nestjs/common';
import { ConfigurableModuleClass } from './auth.options';
import { BearerAuthGuard } from './bearer-auth.guard';

/**
 * The control plane's authentication: `AuthModule.forRoot({ tokens })` (or `forRootAsync`) in
 * the root module, and `{ provide: APP_GUARD, useClass: BearerAuthGuard }` there. Any module
 * marks a route public with `@Public()`; one whose routes take a body applies
 * BearerAuthMiddleware ahead of its body parser.
 */
@Module({ providers: [BearerAuthGuard], exports: [BearerAuthGuard] })
export class AuthModule extends ConfigurableModuleClass {}
