import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';
/** The name of the bearer scheme in `components.securitySchemes`, as `@ApiBearerAuth()` refers to it. */
export const BEARER_SCHEME = 'bearer';

/** The OpenAPI 3.1 document of the API, generated from the controllers and their DTO and response classes. */
export function openApiDocument(app: INestApplication): OpenAPIObject {
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
 * swagger-ui-dist in node_modules, no CDN). Both are plain Express routes ahead of Nest's
 * router, so no guard runs for them: they are public.
 */
export function serveApiDocs(app: INestApplication): void {
  const document = openApiDocument(app);
  SwaggerModule.setup(DOCS_PATH, app, document, {
    jsonDocumentUrl: OPENAPI_PATH,
    raw: ['json'],
    customSiteTitle: 'Control plane API',
  });
}
