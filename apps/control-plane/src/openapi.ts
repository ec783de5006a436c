import { Injectable, type INestApplication, type OnModuleInit } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

const OPENAPI_PATH = '/openapi.json';
const DOCS_PATH = '/docs';
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

  onModuleInit(): void {
    if (!this.app) return;
    SwaggerModule.setup(DOCS_PATH, this.app, openApiDocument(this.app), {
      jsonDocumentUrl: OPENAPI_PATH,
      raw: ['json'],
      customSiteTitle: 'Control plane API',
    });
  }
}
