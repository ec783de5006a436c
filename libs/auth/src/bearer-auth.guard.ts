import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { IncomingMessage } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AuthError, AuthErrorCode } from './auth.error';
import { AUTH_OPTIONS, type AuthModuleOptions } from './auth.options';
import { bearerToken } from './bearer-token';
import { isPublic } from './public.decorator';

/**
 * The control plane's global guard (registered by the host app as APP_GUARD):
 * `Authorization: Bearer <token>` with a configured token, on every route not marked @Public().
 * Tokens are compared as SHA-256 digests, which all have the same length, so neither the
 * comparison's time nor its early exit tells anything about a token's length or content.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly digests: readonly Buffer[];
  /**
   * @Public() per controller class and handler, read once: decorators are applied when the
   * classes are defined, and reading the metadata of both on every request costs more than the
   * rest of this guard on a public route.
   */
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(AUTH_OPTIONS) options: AuthModuleOptions,
  ) {
    this.digests = options.tokens.map(digest);
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.isPublic(context)) return true;
    this.authenticate(context.switchToHttp().getRequest<IncomingMessage>());
    return true;
  }

  /** Throws UNAUTHENTICATED unless the request carries one of the configured bearer tokens. */
  authenticate(req: IncomingMessage): void {
    const token = bearerToken(req.headers.authorization);
    if (token === undefined || !this.isKnown(digest(token))) {
      throw new AuthError(AuthErrorCode.Unauthenticated, 'a valid bearer token is required');
    }
  }

  private isPublic(context: ExecutionContext): boolean {
    const controller = context.getClass();
    const handler = context.getHandler();
    let handlers = this.publicRoutes.get(controller);
    if (!handlers) this.publicRoutes.set(controller, (handlers = new WeakMap()));
    let open = handlers.get(handler);
    if (open === undefined) handlers.set(handler, (open = isPublic(context, this.reflector)));
    return open;
  }

  private isKnown(candidate: Buffer): boolean {
    let known = false;
    // Every configured token is compared, so the time does not tell which one matched.
    for (const token of this.digests) known = timingSafeEqual(token, candidate) || known;
    return known;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
