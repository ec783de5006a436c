import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Level, type Logger, type LoggerOptions } from 'pino';
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
  colorize?: boolean,
): DestinationStream {
  const out = typeof target === 'number' ? pino.destination({ dest: target, sync: true }) : target;
  if (format === 'pretty') {
    const text = prettyFactory({
      translateTime: 'SYS:standard',
      ignore: 'pid,hostname',
      ...(colorize === undefined ? {} : { colorize }),
    });
    return { write: (line: string) => void out.write(text(boundLogLine(line))) };
  }
  return { write: (line: string) => void out.write(boundLogLine(line)) };
}

/** The root logger of each configuration: the app's Nest logger and its request lines share it. */
const rootOf = new WeakMap<LogSettings, Logger>();

/** The root logger of `settings` (one per configuration object): JSON lines (or text) on stdout. */
export function rootLogger(settings: LogSettings): Logger {
  let root = rootOf.get(settings);
  if (!root) rootOf.set(settings, (root = pino(logOptions(settings), logDestination(settings.logFormat))));
  return root;
}

/**
 * The service's Nest logger: JSON lines with `context` on stdout, from the root logger that
 * request-logging.ts writes its lines with. main.ts installs it before anything logs, PostgreSQL's
 * start included.
 */
export function appLogger(settings: LogSettings): LoggerService {
  return new PinoNestLogger(rootLogger(settings));
}

/**
 * The CLI's diagnostics: warnings and errors as log lines on stderr, as stdout carries the
 * command's output (exports, the price list) and its human messages go to stderr as text. Pretty
 * lines are coloured only when `colorize` (a terminal, without NO_COLOR or TERM=dumb).
 */
export function cliLogger(
  format: LogSettings['logFormat'],
  stderr: NodeJS.WritableStream,
  colorize = false,
): LoggerService {
  return new PinoNestLogger(
    pino(logOptions({ logLevel: 'warn', logFormat: format }), logDestination(format, stderr, colorize)),
  );
}

/** Nest's log levels as pino's. */
type NestLevel = 'verbose' | 'debug' | 'log' | 'warn' | 'error' | 'fatal';
const PINO_LEVEL: Readonly<Record<NestLevel, Level>> = {
  verbose: 'trace',
  debug: 'debug',
  log: 'info',
  warn: 'warn',
  error: 'error',
  fatal: 'fatal',
};

/**
 * Nest's LoggerService on a pino logger, with the contract of Nest's loggers: the last optional
 * parameter is the context (`context` on the line), an object message is merged into the line (an
 * Error as `err`), and the `error(message, stack, context)` of Nest's exception handlers gives an
 * `err` with that stack. Ours rather than nestjs-pino's, whose releases need Node.js 22.12
 * (docs/decisions.md, "Toolchain"): the app used only this of it.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('log', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: NestLevel, message: unknown, params: readonly unknown[]): void {
    const fields: Record<string, unknown> = {};
    const rest = params.slice(0, -1);
    if (params.length > 0) fields.context = params.at(-1);
    const method: (fields: object, ...args: unknown[]) => void = this.logger[PINO_LEVEL[level]];
    const log = (fields: object, ...args: unknown[]): void => method.call(this.logger, fields, ...args);
    if (typeof message === 'object' && message !== null) {
      if (message instanceof Error) fields.err = message;
      else Object.assign(fields, message);
      log(fields, ...rest);
    } else if (level === 'error' && isStackTrace(message, rest)) {
      const err = new Error(String(message));
      err.stack = rest[0] as string;
      log({ ...fields, err });
    } else {
      log(fields, message, ...rest);
    }
  }
}

/** Nest's exception handlers call `error(message, stack, context)`: a message and one stack trace. */
function isStackTrace(message: unknown, rest: readonly unknown[]): boolean {
  return typeof message === 'string' && rest.length === 1 && typeof rest[0] === 'string' && /\n\s*at /.test(rest[0]);
}
