import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RequestDurationHistogram } from './request-duration-histogram';

/** The route label of a request no route matched: 404s, and the static files of /docs. */
const UNMATCHED_ROUTE = 'unmatched';

/** From a price list answered from memory (well under a millisecond) to a slow database call. */
const REQUEST_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What Node publishes on its `http.server.*` diagnostics channels. */
interface HttpServerMessage {
  readonly request: IncomingMessage & { route?: { path?: unknown }; [STARTED]?: number };
  readonly response: ServerResponse;
  readonly server: Server;
}
const STARTED = Symbol('requestStartedAt');

/**
 * The `method` label's values: the methods of HTTP itself (RFC 9110, and PATCH); every other
 * method Node's parser accepts (PROPFIND, PURGE, ...) is `_OTHER`, as OpenTelemetry's HTTP
 * conventions name it, so that a client cannot make label values of its choosing.
 */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
]);

function methodLabel(method: string | undefined): string {
  return method !== undefined && KNOWN_METHODS.has(method) ? method : '_OTHER';
}

/**
 * A matched route's pattern (`/v1/volumes/:id`, never the raw path, so that ids do not make a
 * label value each); Nest's not-found handler is a catch-all route (`{/*splat}`): unmatched.
 */
function routeOf(request: HttpServerMessage['request']): string {
  const path = request.route?.path;
  return typeof path === 'string' && !path.includes('*') ? path : UNMATCHED_ROUTE;
}

/**
 * The control plane's own metrics, in a registry of the app (not prom-client's global one, so
 * that two apps in one process do not collide): the default process and Node.js metrics, and
 * the duration of every HTTP request of the API's server. Durations come from Node's own
 * `http.server.request.start` and `http.server.response.finish` diagnostics channels: nothing
 * is added to the request path but a timestamp on the request and one histogram increment.
 */
@Injectable()
export class AppMetrics implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly registry = new Registry();
  private readonly requestDurations = new RequestDurationHistogram(REQUEST_DURATION_BUCKETS);
  private server: Server | undefined;

  constructor(private readonly adapterHost: HttpAdapterHost) {
    collectDefaultMetrics({ register: this.registry });
    this.registry.registerMetric(this.requestDurations.asMetric());
  }

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    subscribe('http.server.request.start', this.started);
    subscribe('http.server.response.finish', this.finished);
  }

  onApplicationShutdown(): void {
    unsubscribe('http.server.request.start', this.started);
    unsubscribe('http.server.response.finish', this.finished);
  }

  private readonly started = (message: unknown): void => {
    const { request, server } = message as HttpServerMessage;
    if (server === this.server) request[STARTED] = performance.now();
  };

  private readonly finished = (message: unknown): void => {
    const { request, response, server } = message as HttpServerMessage;
    const started = request[STARTED];
    if (server !== this.server || started === undefined) return;
    const seconds = (performance.now() - started) / 1000;
    this.requestDurations.observe(methodLabel(request.method), routeOf(request), response.statusCode, seconds);
  };
}
