import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from './config/app-config';
import { AppMetrics } from './metrics/app-metrics';
import { serveApiDocs } from './openapi';

/**
 * What only the Express instance can take; main.ts and the tests apply it before `init()`, so
 * that what is mounted here comes ahead of Nest's middleware and routes: the request timer
 * first (it sees every request), then the API's documents.
 */
export function configureExpress(app: INestApplication, config: AppConfig): void {
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.trustProxy);
  express.disable('x-powered-by');
  express.disable('etag'); // Express's own ETags would be strong tags of other responses
  express.use(app.get(AppMetrics).measureRequests);
  serveApiDocs(app);
}
