import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from './config/app-config';
import { RequestLogging } from './logging/logging';
import { ApiDocs } from './openapi';

/**
 * What only the Express instance can take; main.ts and the tests apply it before `init()`, so
 * that what is mounted here comes ahead of Nest's middleware and routes: the request log (every
 * request but the price list's). The API's documents are mounted by `init()` (ApiDocs).
 */
export function configureExpress(app: INestApplication, config: AppConfig): void {
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.trustProxy);
  express.disable('x-powered-by');
  express.disable('etag'); // Express's own ETags would be strong tags of other responses
  express.use(app.get(RequestLogging).middleware);
  app.get(ApiDocs).serveOn(app);
}
