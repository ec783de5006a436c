import { ConsoleLogger, Logger } from '@nestjs/common';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { logDestination, logOptions, PinoNestLogger } from './logging';
import { isPriceListResource, requestIdOf } from './request-logging';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function exchange(headers: Record<string, string | string[]>): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  req.headers = headers;
  return { req, res: new ServerResponse(req) };
}

/** A stream that keeps what is written to it, as text. */
function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/** A pino logger with the app's options, writing into `lines`. */
function capture(): { logger: pino.Logger; lines: () => Record<string, unknown>[] } {
  const { stream, text } = sink();
  const logger = pino(logOptions({ logLevel: 'info', logFormat: 'json' }), stream);
  const lines = () =>
    text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines };
}

describe('requestIdOf', () => {
  it.each(['abc-123', 'a.b_c-D', 'x'.repeat(128), '6f1e0c1a-2b3c-4d5e-8f90-123456789abc'])(
    'keeps a sane X-Request-Id from the client (%s) and echoes it',
    (given) => {
      const { req, res } = exchange({ 'x-request-id': given });
      expect(requestIdOf(req, res)).toBe(given);
      expect(res.getHeader('X-Request-Id')).toBe(given);
    },
  );

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['too long', 'x'.repeat(129)],
    ['with spaces', 'a b'],
    ['with a line break', 'a\nb'],
    ['with JSON', '{"level":"error"}'],
    ['repeated', ['a', 'b']],
  ])('replaces an X-Request-Id that is %s with a new UUID, and echoes it', (_what, given) => {
    const { req, res } = exchange(given === undefined ? {} : { 'x-request-id': given });
    const id = requestIdOf(req, res);
    expect(id).toMatch(UUID);
    expect(res.getHeader('X-Request-Id')).toBe(id);
    const other = exchange({});
    expect(requestIdOf(other.req, other.res)).not.toBe(id);
  });
});

describe('log lines', () => {
  it('are JSON with level as a word, an ISO time and msg', () => {
    const { logger, lines } = capture();
    logger.info({ context: 'Main' }, 'listening');
    const [line] = lines();
    expect(line).toMatchObject({ level: 'info', context: 'Main', msg: 'listening' });
    expect(new Date(line.time as string).toISOString()).toBe(line.time);
  });

  it('never carry a password of a URL, a bearer token or an authorization header', () => {
    const { logger, lines } = capture();
    logger.warn('database not ready: postgres://app:pa55word@db:5432/pricing refused');
    logger.error(
      { err: Object.assign(new TypeError('Invalid URL'), { input: 'postgres://app:pa55word@db:x/p' }) },
      'failed',
    );
    logger.info({ req: { headers: { authorization: 'Bearer tok-123456789' } } }, 'request');
    logger.info('got Bearer tok-123456789');
    const text = JSON.stringify(lines());
    expect(text).not.toContain('pa55word');
    expect(text).not.toContain('tok-123456789');
    expect(lines()[1]).toMatchObject({ err: { type: 'TypeError', message: 'Invalid URL' } });
    expect(lines()[2]).toMatchObject({ req: { headers: { authorization: '[redacted]' } } });
  });
});

describe('LOG_FORMAT=pretty', () => {
  it('writes text of no line over 4 KB, however long the message, the URL or the error (docs/operations.md, "Logs")', () => {
    const { stream, text } = sink();
    const logger = pino(logOptions({ logLevel: 'info', logFormat: 'pretty' }), logDestination('pretty', stream));
    const long = 'a.'.repeat(7 * 1024);
    logger.info({ context: 'Main' }, `listening ${long}`);
    logger.info({ req: { method: 'GET', url: `/${long}`, headers: { 'user-agent': long } } }, 'request completed');
    logger.error({ err: new Error(long) }, 'failed');
    const lines = text().split('\n');
    expect(text()).toContain('listening a.a.');
    expect(text()).toContain('…[cut:');
    expect(lines[0]).toMatch(/INFO\S*: listening a\.a\./); // text for a person (coloured at a terminal), not JSON
    for (const line of lines) expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(4096);
  });
});

describe('PinoNestLogger, as Nest calls a logger', () => {
  it('writes the context Nest passes last, merges an object message, and gives an Error as err', () => {
    const { logger, lines } = capture();
    const nest = new PinoNestLogger(logger);
    nest.log('listening on 3000', 'Main');
    nest.warn({ request_id: 'r-1', err: new Error('boom') }, 'ApiExceptionFilter');
    nest.error(new TypeError('bad'), 'Loader');
    nest.log('no context');
    nest.log('two %s', 'words', 'Ctx');
    nest.verbose('not at info', 'Main');
    nest.debug('not at info either', 'Main');
    expect(lines().map(({ level, context, msg }) => ({ level, context, msg }))).toEqual([
      { level: 'info', context: 'Main', msg: 'listening on 3000' },
      { level: 'warn', context: 'ApiExceptionFilter', msg: 'boom' }, // pino's: the error's message
      { level: 'error', context: 'Loader', msg: 'bad' },
      { level: 'info', context: undefined, msg: 'no context' },
      { level: 'info', context: 'Ctx', msg: 'two words' },
    ]);
    expect(lines()[1]).toMatchObject({ request_id: 'r-1', err: { type: 'Error', message: 'boom' } });
    expect(lines()[2]).toMatchObject({ err: { type: 'TypeError', message: 'bad' } });
  });

  it("turns Nest's exception handlers' error(message, stack, context) into an err with that stack", () => {
    const { logger, lines } = capture();
    new PinoNestLogger(logger).error('boom', 'Error: boom\n    at handler (app.ts:1:1)', 'ExceptionsHandler');
    expect(lines()[0]).toMatchObject({
      level: 'error',
      context: 'ExceptionsHandler',
      err: { message: 'boom', stack: 'Error: boom\n    at handler (app.ts:1:1)' },
    });
  });

  it('writes fatal lines, and through Logger.overrideLogger as the app installs it', () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(new PinoNestLogger(logger));
    try {
      new Logger('Shutdown').fatal('stopping');
      Logger.warn('static', 'Static');
    } finally {
      Logger.overrideLogger(new ConsoleLogger());
    }
    expect(lines().map(({ level, context, msg }) => [level, context, msg])).toEqual([
      ['fatal', 'Shutdown', 'stopping'],
      ['warn', 'Static', 'static'],
    ]);
  });
});

describe('isPriceListResource', () => {
  it.each([
    '/v1/pricing',
    '/v1/pricing/',
    '/V1/Pricing',
    '/v1/pricing/changes',
    '/v1/pricing/changes/',
    '/v1/pricing/CHANGES',
    '/v1/pricing/at/2026-03-01T00:00:00Z',
    '/v1/pricing/at/not-an-instant/',
    '/v1/pricing/AT/2026-03-01T00%3A00%3A00Z',
  ])('takes %s for one of the price list’s resources: not logged, no request id', (path) => {
    expect(isPriceListResource(path)).toBe(true);
  });

  it.each([
    '/v1/pricingx',
    '/v1/pricing//',
    '/v1/pricing/at/',
    '/v1/pricing/at/a/b',
    '/v1/pricing/changesx',
    '/v1/volumes',
    '',
  ])('takes %j for another path', (path) => {
    expect(isPriceListResource(path)).toBe(false);
  });
});
