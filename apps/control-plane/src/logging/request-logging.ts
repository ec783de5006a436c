import { Injectable } from '@nestjs/common';
import { PRICE_LIST_PATH } from '@app/pricing';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import parseurl from 'parseurl';
import { pinoHttp } from 'pino-http';
import { AppConfig } from '../config/app-config';
import { isRoutable } from '../request-target';
import { loggedUrl } from './log-text';
import { rootLogger } from './logging';

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** A request id from the client is kept when it is a plain token; anything else is replaced. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const MAX_REQUEST_ID = 128;

/** Whether a client's X-Request-Id is a plain token of at most 128 characters (length first: a 14 KB header costs nothing). */
export function isSaneRequestId(given: string | string[] | undefined): given is string {
  return typeof given === 'string' && given.length <= MAX_REQUEST_ID && SANE_REQUEST_ID.test(given);
}

/**
 * The request's id: the client's `X-Request-Id` when it is a sane token, else a new UUID.
 * Echoed on the response, so that a client can quote it and an operator find its log line.
 */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = isSaneRequestId(given) ? given : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/**
 * Only the request fields an operator searches by, the URL cut: never headers (authorization) or
 * bodies. Read from the request itself (`wrapSerializers: false`): pino's own serializer reads
 * Express's `req.query`, which throws on a target url.parse cannot read (`GET http://[::1/`).
 */
const requestFields = (req: IncomingMessage & { id?: unknown; originalUrl?: string }) => ({
  id: req.id,
  method: req.method,
  url: loggedUrl(req.originalUrl ?? req.url),
  remoteAddress: req.socket?.remoteAddress,
});
const responseFields = (res: ServerResponse) => ({ statusCode: res.statusCode });

/**
 * Whether `path` is one of the price list's three public resources as Express routes them (any
 * case, one trailing slash allowed): `/v1/pricing`, `/v1/pricing/changes` and
 * `/v1/pricing/at/{instant}` (one path segment). Their answers may be stored by a shared cache,
 * so none carries a request id. One pass over at most the path, no pattern.
 */
export function isPriceListResource(path: string): boolean {
  const base = PRICE_LIST_PATH.length;
  if (path.length < base || path.slice(0, base).toLowerCase() !== PRICE_LIST_PATH) return false;
  const rest = path.endsWith('/') ? path.slice(base, -1) : path.slice(base);
  if (rest === '') return true;
  if (rest.length === CHANGES.length) return rest.toLowerCase() === CHANGES;
  return rest.length > AT.length && rest.slice(0, AT.length).toLowerCase() === AT && !rest.includes('/', AT.length);
}
const CHANGES = '/changes';
const AT = '/at/';

/**
 * The path Express routes the request by (parseurl, whose result Express reuses): the path of an
 * absolute-form target (`GET http://host/v1/pricing`) too, so that the request is logged as what
 * it is routed to. Undefined when the target has none or cannot be parsed (`http://[::1/`: Node's
 * url.parse throws, and Express's router takes it as no path, as here).
 */
function routedPath(req: IncomingMessage): string | undefined {
  if (!isRoutable(req.url ?? '')) return undefined; // never handed to url.parse (request-target.ts)
  try {
    return parseurl(req)?.pathname ?? undefined;
  } catch {
    return undefined;
  }
}

/** A path nobody needs a line for: probes, every few seconds. */
const isHealthCheck = (req: IncomingMessage): boolean => routedPath(req)?.startsWith('/health/') === true;

/**
 * One log line per request (pino-http) with its request id (`X-Request-Id`, echoed). Mounted
 * by `configureExpress` as a plain Express middleware ahead of the routes, so that it costs
 * `GET /v1/pricing` one parse of its path (which Express's router reuses) and one comparison,
 * nothing more: the answers of the price list's three resources (the list, the list at an instant,
 * the change feed) are counted in metrics, not logged one by one, and carry no request id (a
 * shared cache would hand one client's id to everyone). Probes get an id but no line. Lines logged while a request is handled carry
 * its id where they are written (`request_id`): a request context binding it to every line (as
 * nestjs-pino's did) would put an AsyncLocalStorage hook on every promise of the process, the
 * price list's included (docs/operations.md, "Logs").
 */
@Injectable()
export class RequestLogging {
  readonly middleware: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

  constructor(config: AppConfig) {
    const logRequest = pinoHttp({
      logger: rootLogger(config),
      genReqId: requestIdOf,
      customAttributeKeys: { reqId: 'request_id' },
      quietReqLogger: true,
      wrapSerializers: false,
      serializers: { req: requestFields, res: responseFields },
      autoLogging: { ignore: isHealthCheck },
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
      // The method (one of the parser's) and the status only: no request text in a message.
      customSuccessMessage: (req, res, ms) => `${req.method} answered ${res.statusCode} in ${ms} ms`,
      customErrorMessage: (req, res) => `${req.method} answered ${res.statusCode}`,
      customSuccessObject: (_req, _res, fields: object) => ({ ...fields, context: 'HTTP' }),
      customErrorObject: (_req, _res, _error, fields: object) => ({ ...fields, context: 'HTTP' }),
    });
    this.middleware = (req, res, next) =>
      isPriceListResource(routedPath(req) ?? '') ? next() : logRequest(req, res, next);
  }
}
