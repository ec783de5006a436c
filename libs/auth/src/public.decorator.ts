import { SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

export const IS_PUBLIC = 'auth:public';

/**
 * Marks a controller or route that needs no credentials: BearerAuthGuard lets it through, and so
 * does a host's own global guard that asks `isPublic` first (docs/using-pricing.md, "Wiring
 * PricingModule"). `GET /v1/pricing` and its past are marked so (PricingController).
 */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/**
 * Whether the route `context` runs is marked @Public(), on its handler or on its controller: what
 * any global guard asks before it refuses a request.
 *
 * ```ts
 * canActivate(context: ExecutionContext): boolean {
 *   return isPublic(context, this.reflector) || this.isSignedIn(context);
 * }
 * ```
 */
export function isPublic(context: ExecutionContext, reflector: Reflector): boolean {
  return (
    reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [context.getHandler(), context.getClass()]) === true
  );
}
