import { Injectable, type LoggerService } from '@nestjs/common';
import { PRICE_LIST_PATH } from '@app/pricing';
import { Logger as NestPinoLogger, PinoLogger, type Params } from 'nestjs-pino';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { type DestinationStream, type LoggerOptions } from 'pino';
import { pinoHttp } from 'pino-http';
import pretty from 'pino-pretty';
import { AppConfig } from '../config/app-config';

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** A request id from the client is kept when it is a plain token; anything else is replaced. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export type LogSettings = Pick<AppConfig, 'logLevel' | 'logFormat'>;

/**
 * The request's id: the client's `X-Request-Id` when it is a sane token, else a new UUID.
 * Echoed on the response, so that a client can quote it and an operator find its log line.
 */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** `scheme://user:password@` (a database or Redis URL) and bearer tokens, wherever they appear in text. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@]+@/gi;
const BEARER_TOKEN = /\b(Bearer\s+)[^\s"',;]+/gi;
const REDACTED = '[redacted]';

/** Removes passwords of URLs and bearer tokens from a text that is about to be logged. */
export function redactSecrets(text: string): string {
  return text.replace(URL_PASSWORD, `$1${REDACTED}@`).replace(BEARER_TOKEN, `$1${REDACTED}`);
}

/** Every string property of a serialized error (message, stack, and e.g. a URL's `input`), redacted. */
function redactError(error: Error): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(pino.stdSerializers.err(error)).map(([key, value]) => [
      key,
      typeof value === 'string' ? redactSecrets(value) : value,
    ]),
  );
}

/**
 * What every log line of the app shares: JSON with `level` as a word and `time` in ISO 8601,
 * the authorization and cookie headers censored, and secrets removed from messages and errors.
 */
export function logOptions(settings: LogSettings): LoggerOptions {
  return {
    level: settings.logLevel,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: REDACTED,
    },
    serializers: { err: redactError },
    hooks: {
      logMethod(args, method) {
        for (let i = 0; i < args.length; i++) {
          if (typeof args[i] === 'string') args[i] = redactSecrets(args[i] as string);
        }
        method.apply(this, args);
      },
    },
  };
}

/** stdout: JSON lines (written synchronously, so nothing is lost at exit), or text for a person. */
export function logDestination(format: LogSettings['logFormat'], fd: 1 | 2 = 1): DestinationStream {
  return format === 'pretty'
    ? pretty({ destination: fd, sync: true, translateTime: 'SYS:standard', ignore: 'pid,hostname' })
    : pino.destination({ dest: fd, sync: true });
}

/** One set of parameters per configuration: nestjs-pino keeps one root logger per process anyway. */
const paramsOf = new WeakMap<LogSettings, Params>();

/** nestjs-pino's parameters: the root logger of the process, JSON lines (or text) on stdout. */
function loggerParams(settings: LogSettings): Params {
  let params = paramsOf.get(settings);
  if (!params)
    paramsOf.set(settings, (params = { pinoHttp: [logOptions(settings), logDestination(settings.logFormat)] }));
  return params;
}

/**
 * The service's Nest logger (nestjs-pino): JSON lines with `context` on stdout. main.ts installs
 * it before anything logs, PostgreSQL's start included. nestjs-pino keeps one root logger per
 * process: the first settings win.
 */
export function appLogger(settings: LogSettings): LoggerService {
  return nestLogger(loggerParams(settings));
}

/**
 * The CLI's diagnostics: warnings and errors as log lines on stderr, as stdout carries the
 * command's own output (exports, the price list) and its human messages go to stderr as text.
 */
export function cliLogger(format: LogSettings['logFormat']): LoggerService {
  return nestLogger({ pinoHttp: [logOptions({ logLevel: 'warn', logFormat: format }), logDestination(format, 2)] });
}

function nestLogger(params: Params): LoggerService {
  return new NestPinoLogger(new PinoLogger(params), params);
}

/** Only the request fields an operator searches by: never headers (authorization) or bodies. */
const requestFields = (req: pino.SerializedRequest) => ({
  id: req.id,
  method: req.method,
  url: req.url,
  remoteAddress: req.remoteAddress,
});
const responseFields = (res: pino.SerializedResponse) => ({ statusCode: res.statusCode });

/** The price list's path: `/v1/pricing`, with a trailing slash or a query, any case (as Express routes it). */
const PRICE_LIST_REQUEST = new RegExp(`^${PRICE_LIST_PATH}/?(?:\\?|$)`, 'i');

/** A path nobody needs a line for: probes, every few seconds. */
const isHealthCheck = (req: IncomingMessage): boolean => req.url?.startsWith('/health/') === true;

/**
 * One log line per request (pino-http) with its request id (`X-Request-Id`, echoed). Mounted
 * by `configureExpress` as a plain Express middleware ahead of the routes, so that it costs
 * `GET /v1/pricing` one regular-expression test and nothing more: the price list's answers are
 * counted in metrics, not logged one by one (and a shared cache never stores one client's request
 * id with the list). Probes get an id but no line. Lines logged while a request is handled carry
 * its id where they are written (`request_id`): nestjs-pino's request context would bind it to
 * every line, but its AsyncLocalStorage puts a hook on every promise of the process, the price
 * list's included (README, "Logs").
 */
@Injectable()
export class RequestLogging {
  readonly middleware: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

  constructor(config: AppConfig) {
    new PinoLogger(loggerParams(config)); // creates the process's root logger if there is none yet
    const logRequest = pinoHttp({
      logger: PinoLogger.root,
      genReqId: requestIdOf,
      customAttributeKeys: { reqId: 'request_id' },
      quietReqLogger: true,
      serializers: { req: requestFields, res: responseFields },
      autoLogging: { ignore: isHealthCheck },
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
      customSuccessMessage: (req, res, ms) => `${req.method} ${req.url} ${res.statusCode} ${ms} ms`,
      customErrorMessage: (req, res) => `${req.method} ${req.url} ${res.statusCode}`,
      customSuccessObject: (_req, _res, fields: object) => ({ ...fields, context: 'HTTP' }),
      customErrorObject: (_req, _res, _error, fields: object) => ({ ...fields, context: 'HTTP' }),
    });
    this.middleware = (req, res, next) =>
      PRICE_LIST_REQUEST.test(req.url ?? '') ? next() : logRequest(req, res, next);
  }
}
