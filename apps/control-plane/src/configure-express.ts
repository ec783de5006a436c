import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AppConfig } from './config/app-config';
import { ApiErrorCode } from './errors/api-error';
import { applyHttpTimeouts } from './http-timeouts';
import { sendErrorEnvelope } from './errors/error-envelope';
import { RequestLogging } from './logging/request-logging';
import { isRoutable } from './request-target';
import { ApiDocs } from './openapi';

type Handler = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/** CONNECT's answer, written on the socket: Node gives that method no ServerResponse. */
const CONNECT_BODY = JSON.stringify({
  error: { code: ApiErrorCode.MethodNotAllowed, message: 'CONNECT is not served here', details: {} },
});
const CONNECT_ANSWER =
  'HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json; charset=utf-8\r\n' +
  `Content-Length: ${Buffer.byteLength(CONNECT_BODY)}\r\nConnection: close\r\n\r\n${CONNECT_BODY}`;

/**
 * What Express cannot route, answered as the API answers the rest, in JSON: a target it cannot
 * read (400, with a request id and a log line, before Express sees it), and a CONNECT, which Node
 * gives to the server's 'connect' listeners and, with none, drops unanswered (405, not logged).
 */
function answerWhatExpressCannotRoute(server: Server, express: Handler, logRequest: Handler): void {
  const refuse = (req: IncomingMessage, res: ServerResponse) => {
    try {
      logRequest(req, res, () =>
        sendErrorEnvelope(res, 400, ApiErrorCode.InvalidRequest, 'the request-target is not a path nor a URL'),
      );
    } catch {
      res.destroy(); // outside Express's own try: a throw here would end the process
    }
  };
  server.removeListener('request', express);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!isRoutable(req.url ?? '')) return refuse(req, res);
    // Express's final handler, reached only when its router found no path (Nest's own handlers
    // answer unknown routes and errors): a target WHATWG's parser reads and url.parse does not.
    express(req, res, (error) => (res.headersSent || error != null ? void res.destroy() : refuse(req, res)));
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => undefined);
    socket.end(CONNECT_ANSWER);
  });
}

/**
 * What only the HTTP server and the Express instance can take; main.ts and the tests apply it
 * before `init()`, so that what is mounted here comes ahead of Nest's middleware and routes: the
 * request log (every request but the price list's, which metrics count). The API's documents are
 * mounted by `init()` (ApiDocs).
 */
export function configureExpress(app: INestApplication, config: AppConfig): void {
  const server = app.getHttpServer() as Server;
  applyHttpTimeouts(server, config);
  const requestLogging = app.get(RequestLogging).middleware;
  // The Express app is the server's request listener: wrapped here, no route mounted on it.
  const adapter = app.getHttpAdapter();
  answerWhatExpressCannotRoute(server, adapter.getInstance() as Handler, requestLogging);
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.trustProxy);
  express.disable('x-powered-by');
  express.disable('etag'); // Express's own ETags would be strong tags of other responses
  express.use(requestLogging);
  app.get(ApiDocs).serveOn(app);
}
