import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BearerAuthGuard } from './bearer-auth.guard';

/**
 * Authenticates before anything reads the request's body: apply it ahead of a body parser
 * (`consumer.apply(BearerAuthMiddleware, json())`), so that a client without a valid token never
 * has its body parsed. The global BearerAuthGuard still decides for every route; this only
 * refuses earlier. A refused request that announced a body gets `Connection: close`, so that its
 * unread body is not read to keep the connection alive.
 */
@Injectable()
export class BearerAuthMiddleware implements NestMiddleware {
  constructor(private readonly guard: BearerAuthGuard) {}

  use(req: IncomingMessage, res: ServerResponse, next: () => void): void {
    try {
      this.guard.authenticate(req);
    } catch (error) {
      if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) {
        res.setHeader('Connection', 'close');
      }
      throw error;
    }
    next();
  }
}
