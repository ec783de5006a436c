import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../config/environment';
import { ApiError, ApiErrorCode } from '../errors/api-error';
import { IS_PUBLIC } from './public.decorator';

/**
 * The global guard: `Authorization: Bearer <token>` with a token from API_TOKENS, on every
 * route not marked @Public(). The public price list never reaches it: it is served ahead of
 * the router.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly tokens: readonly Buffer[];

  constructor(
    private readonly reflector: Reflector,
    config: AppConfig,
  ) {
    this.tokens = config.apiTokens.map((token) => Buffer.from(token));
  }

  canActivate(context: ExecutionContext): boolean {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const header = context.switchToHttp().getRequest<Request>().headers.authorization ?? '';
    const match = /^Bearer ([^\s]+)$/i.exec(header);
    if (match && this.isKnown(Buffer.from(match[1]))) return true;
    throw new ApiError(ApiErrorCode.Unauthenticated, 'a valid bearer token is required');
  }

  private isKnown(token: Buffer): boolean {
    let known = false;
    for (const candidate of this.tokens) {
      if (candidate.length === token.length && timingSafeEqual(candidate, token)) known = true;
    }
    return known;
  }
}
