import type { INestApplication } from '@nestjs/common';
import type { Express } from 'express';
import { PriceListHandler } from './price-list.handler';

/** The path of the public price list. */
export const PRICE_LIST_PATH = '/v1/pricing';

/**
 * Mounts `GET /v1/pricing` as the first layer of the app's Express instance: ahead of the body
 * parsers and Nest's router, so no guard, pipe or interceptor runs for it (it is public
 * whatever the host app installs) and nothing else costs time on its path. Exact path (a
 * trailing slash allowed, query strings ignored), every method (others are answered 405).
 * Call it once, after setting Express's `trust proxy` and before `app.init()` or `app.listen()`.
 */
export function servePriceList(app: INestApplication): void {
  const handler = app.get(PriceListHandler);
  const express = app.getHttpAdapter().getInstance() as Express;
  // A plain middleware with a string comparison, not a route: no path matching, no prefix
  // trimming, no route dispatch on the hot path; every other request passes straight on.
  express.use((req, res, next) => (isPriceListUrl(req.url) ? handler.handle(req, res, next) : next()));
  handler.mounted = true;
  handler.trustsProxy = Boolean(express.get('trust proxy'));
}

/** `/v1/pricing` or `/v1/pricing/`, with or without a query string (which is ignored). */
export function isPriceListUrl(url: string): boolean {
  if (!url.startsWith(PRICE_LIST_PATH)) return false;
  const rest = url.slice(PRICE_LIST_PATH.length);
  return rest === '' || rest === '/' || rest.startsWith('?') || rest.startsWith('/?');
}
