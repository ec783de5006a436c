import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** The route label of a request no route matched: 404s, and the static files of /docs. */
export const UNMATCHED_ROUTE = 'unmatched';

/** A matched route's pattern; Nest's not-found handler is a catch-all route (`{/*splat}`): unmatched. */
function routeOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' && !path.includes('*') ? path : UNMATCHED_ROUTE;
}

/** From a price list answered from memory (well under a millisecond) to a slow database call. */
const REQUEST_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels = 'method' | 'route' | 'status_code';
type Timer = ReturnType<Histogram<Labels>['labels']>;

/**
 * The control plane's own metrics, in a registry of the app (not prom-client's global one, so
 * that two apps in one process do not collide): the default process and Node.js metrics, and
 * the duration of every HTTP request.
 */
@Injectable()
export class AppMetrics {
  readonly registry = new Registry();
  private readonly requestDuration = new Histogram<Labels>({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP requests on the API port, from the first middleware to the end of the response.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [this.registry],
  });
  /**
   * Label children by "method route status": one Map lookup per request instead of
   * prom-client's hashing of a label object. Bounded: Node's parser knows a fixed set of
   * methods, routes are the app's, statuses are three digits.
   */
  private readonly timers = new Map<string, Timer>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Express middleware, mounted first, that times every request until its response is done
   * (or the connection is gone). The route is the matched route's pattern (`/v1/volumes/:id`),
   * never the raw path, so that ids do not make a label value each.
   */
  readonly measureRequests = (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.timer(req.method, routeOf(req), res.statusCode).observe(seconds);
    });
    next();
  };

  private timer(method: string, route: string, status: number): Timer {
    const key = `${method} ${route} ${status}`;
    let timer = this.timers.get(key);
    if (!timer) this.timers.set(key, (timer = this.requestDuration.labels(method, route, String(status))));
    return timer;
  }
}
