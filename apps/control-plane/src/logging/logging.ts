import type { LoggerService } from '@nestjs/common';
import { Logger as NestPinoLogger, PinoLogger, type Params } from 'nestjs-pino';
import pino, { type DestinationStream, type LoggerOptions } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { AppConfig } from '../config/app-config';
import { boundLogLine, REDACTED, redactSecrets } from './log-text';

// The logs of the service and the CLI (docs/operations.md, "Logs"); one line per request is
// request-logging.ts.

export type LogSettings = Pick<AppConfig, 'logLevel' | 'logFormat'>;

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
 * credentials kept out by pino's `redact` paths (headers, wherever a line carries them), and the
 * passwords of URLs and bearer tokens removed from our own messages and from errors (log-text.ts;
 * request text never goes into a message).
 */
export function logOptions(settings: LogSettings): LoggerOptions {
  return {
    level: settings.logLevel,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["proxy-authorization"]',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
      ],
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

/**
 * stdout: JSON lines (written synchronously, so nothing is lost at exit), each at most 4 KB
 * (log-text.ts), or text for a person, formatted from that bounded line: pino-pretty prints each
 * field on a line of its own, with less around it than JSON, so no line of it is longer either.
 */
export function logDestination(
  format: LogSettings['logFormat'],
  target: 1 | 2 | NodeJS.WritableStream = 1,
): DestinationStream {
  const out = typeof target === 'number' ? pino.destination({ dest: target, sync: true }) : target;
  if (format === 'pretty') {
    const text = prettyFactory({ translateTime: 'SYS:standard', ignore: 'pid,hostname' });
    return { write: (line: string) => void out.write(text(boundLogLine(line))) };
  }
  return { write: (line: string) => void out.write(boundLogLine(line)) };
}

/** One set of parameters per configuration: nestjs-pino keeps one root logger per process anyway. */
const paramsOf = new WeakMap<LogSettings, Params>();

/** nestjs-pino's parameters: the root logger of the process, JSON lines (or text) on stdout. */
export function loggerParams(settings: LogSettings): Params {
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
export function cliLogger(format: LogSettings['logFormat'], stderr: NodeJS.WritableStream): LoggerService {
  return nestLogger({
    pinoHttp: [logOptions({ logLevel: 'warn', logFormat: format }), logDestination(format, stderr)],
  });
}

function nestLogger(params: Params): LoggerService {
  return new NestPinoLogger(new PinoLogger(params), params);
}
