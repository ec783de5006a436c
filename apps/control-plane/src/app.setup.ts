import { ValidationPipe, type INestApplication, type ValidationError } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from './config/environment';
import { ApiError, ApiErrorCode } from './errors/api-error';

/** What every instance of the app needs beyond its modules; tests apply it too. */
export function setUpApp(app: INestApplication, config: AppConfig): void {
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.trustProxy);
  express.disable('x-powered-by');
  express.disable('etag'); // Express's own ETags would be strong tags of other responses
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) => invalidRequest(errors),
    }),
  );
}

/** 400 INVALID_REQUEST naming every field and what is wrong with it. */
function invalidRequest(errors: ValidationError[]): ApiError {
  const fields = Object.fromEntries(
    errors.map((error) => [
      error.property,
      Object.values(error.constraints ?? {}).map((message) =>
        message.startsWith('property ') ? 'unknown field' : message,
      ),
    ]),
  );
  return new ApiError(ApiErrorCode.InvalidRequest, `invalid request: ${Object.keys(fields).join(', ')}`, { fields });
}
