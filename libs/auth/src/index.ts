// The public surface of the auth library: apps and other libraries import from `@app/auth` only.
export { AuthModule } from './auth.module';
export type { AuthModuleOptions } from './auth.options';
export { BearerAuthGuard } from './bearer-auth.guard';
export { BearerAuthMiddleware } from './bearer-auth.middleware';
export { bearerToken } from './bearer-token';
export { Public, IS_PUBLIC, isPublic } from './public.decorator';
export { AuthError, AuthErrorCode } from './auth.error';
