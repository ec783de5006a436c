import { Injectable, type INestApplication, type OnModuleInit } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { answerPreparedRequest, prepareAnswers, type PreparedAnswers } from '@app/pricing';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendErrorEnvelope } from './errors/error-envelope';
import { ApiErrorCode } from './errors/api-error';

const OPENAPI_PATH = '/openapi.json';
const DOCS_PATH = '/docs';

/**
 * What the explorer page loads, under DOCS_PATH: its page, the init script SwaggerModule writes,
 * and the three files and two icons of swagger-ui-dist it names. SwaggerModule serves the whole
 * swagger-ui-dist folder (its package.json, source maps, a sample initializer): the rest answers 404.
 */
const DOCS_FILES: ReadonlySet<string> = new Set([
  '/',
  '/index.html',
  '/swagger-ui-init.js',
  '/swagger-ui.css',
  '/swagger-ui-bundle.js',
  '/swagger-ui-standalone-preset.js',
  '/favicon-32x32.png',
  '/favicon-16x16.png',
]);

/**
 * The explorer's scripts are files of this origin; Swagger UI sets inline styles (and the page
 * has a <style> block); its "try it out" calls this origin. Nobody may frame it.
 */
const DOCS_HEADERS = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

/** Every answer under DOCS_PATH gets DOCS_HEADERS; a file the page does not need is not served. */
function guardDocs(req: IncomingMessage & { path?: string }, res: ServerResponse, next: () => void): void {
  for (const [name, value] of Object.entries(DOCS_HEADERS)) res.setHeader(name, value);
  if (DOCS_FILES.has(req.path ?? '')) return next();
  sendErrorEnvelope(res, 404, ApiErrorCode.NotFound, 'no such resource');
}
/**
 * `/openapi.json`'s caching: a client keeps it and revalidates every time (a 304 while the
 * deployed version is the same), so a new version is seen at once. `private`: its answers carry
 * the request's `X-Request-Id` (it is logged as any route), which a shared cache must not hand to
 * others (docs/operations.md, "OpenAPI").
 */
const DOCUMENT_CACHE_CONTROL = 'private, no-cache';

/**
 * GET and HEAD of `/openapi.json`: the document's bytes, weak ETag and gzip and brotli prepared
 * once at start, answered as the price list is (If-None-Match, If-Match, Accept-Encoding).
 */
function serveDocument(answers: PreparedAnswers) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const answer = answerPreparedRequest(req.method ?? 'GET', req.headers, answers);
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  };
}

/** The name of the bearer scheme in `components.securitySchemes`, as `@ApiBearerAuth()` refers to it. */
export const BEARER_SCHEME = 'bearer';

/** The OpenAPI 3.1 document of the API, generated from the controllers and their DTO and response classes. */
function openApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Control plane API')
    .setDescription(
      'The public price list (`GET /v1/pricing`, no credentials) and the ordering endpoints of the control plane ' +
        '(bearer token). Errors of the ordering endpoints share one envelope: `{ "error": { "code", "message", "details" } }`.',
    )
    .setVersion('1')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'opaque token', description: 'One of the tokens in API_TOKENS.' },
      BEARER_SCHEME,
    )
    .build();
  return SwaggerModule.createDocument(app, config);
}

/**
 * `GET /openapi.json` (the document) and `GET /docs` (Swagger UI, its assets served from
 * swagger-ui-dist in node_modules, no CDN). SwaggerModule mounts them as plain Express routes, so
 * no guard runs for them: they are public. They are mounted while the app initializes its
 * modules, after Nest has registered the API's routes and before its not-found handler, so that
 * the API's requests (`GET /v1/pricing` above all) never walk past the documents' eight routes.
 */
@Injectable()
export class ApiDocs implements OnModuleInit {
  private app: INestApplication | undefined;

  /** The app to serve them on: configureExpress hands it over before `init()`. */
  serveOn(app: INestApplication): void {
    this.app = app;
  }

  async onModuleInit(): Promise<void> {
    if (!this.app) return;
    const document = openApiDocument(this.app);
    const answers = await prepareAnswers(
      Buffer.from(JSON.stringify(document)),
      { 'cache-control': DOCUMENT_CACHE_CONTROL, vary: 'Accept-Encoding' },
      { lastChangedMs: null, previousChangeMs: null, builtForMs: Date.now() },
    );
    this.app.getHttpAdapter().get(OPENAPI_PATH, serveDocument(answers));
    // Ahead of SwaggerModule's routes and static files: Express runs them in order.
    (this.app as NestExpressApplication).use(DOCS_PATH, guardDocs);
    SwaggerModule.setup(DOCS_PATH, this.app, document, { raw: false, customSiteTitle: 'Control plane API' });
  }
}
