import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { PRICE_LIST_PATH, PriceListMiddleware } from '@app/pricing';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AppConfig } from './config/app-config';
import { RequestLogging } from './logging/request-logging';
import { ApiDocs } from './openapi';

/**
 * How often Node checks the head and request timeouts of open connections. Its default, 30 s,
 * would let a client dribbling its head hold a connection up to 30 s past HTTP_HEADERS_TIMEOUT_S.
 */
const TIMEOUT_CHECK_MS = 1_000;

/** The HTTP server's timeouts (README, "Security"): set before it listens, which reads them. */
function applyTimeouts(server: Server, config: AppConfig): void {
  server.keepAliveTimeout = config.httpKeepAliveTimeoutS * 1000;
  server.headersTimeout = config.httpHeadersTimeoutS * 1000;
  server.requestTimeout = config.httpRequestTimeoutS * 1000;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = TIMEOUT_CHECK_MS;
}

/**
 * What only the HTTP server and the Express instance can take; main.ts and the tests apply it
 * before `init()`, so that what is mounted here comes ahead of Nest's middleware and routes: the
 * price list's GET and HEAD, then the request log (every request but the price list's). The API's
 * documents are mounted by `init()` (ApiDocs).
 */
export function configureExpress(app: INestApplication, config: AppConfig): void {
  applyTimeouts(app.getHttpServer() as Server, config);
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.trustProxy);
  express.disable('x-powered-by');
  express.disable('etag'); // Express's own ETags would be strong tags of other responses
  // The price list first, as a plain Express route: the answer PricingModule's middleware gives,
  // without Nest's wrapper around a middleware nor the request log's layer (it skips the price
  // list anyway): docs/benchmarks.md, "What is left on the public route's path". Other methods
  // go on to PricingController (405).
  const priceList = app.get(PriceListMiddleware);
  app.getHttpAdapter().get(PRICE_LIST_PATH, (req: IncomingMessage, res: ServerResponse) => priceList.use(req, res));
  express.use(app.get(RequestLogging).middleware);
  app.get(ApiDocs).serveOn(app);
}
