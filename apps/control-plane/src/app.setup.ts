import {
  ValidationPipe,
  type ArgumentMetadata,
  type INestApplication,
  type PipeTransform,
  type ValidationError,
} from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { servePriceList } from '@app/pricing';
import type { AppConfig } from './config/environment';
import { ApiError, ApiErrorCode } from './errors/api-error';

/** What every instance of the app needs beyond its modules; tests apply it too. */
export function setUpApp(app: INestApplication, config: AppConfig): void {
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.trustProxy);
  express.disable('x-powered-by');
  express.disable('etag'); // Express's own ETags would be strong tags of other responses
  servePriceList(app);
  app.useGlobalPipes(
    new RefuseReservedKeysPipe(),
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) => invalidRequest(errors),
    }),
  );
}

/** 400 INVALID_REQUEST naming every field and what is wrong with it. */
function invalidFields(fields: Record<string, string[]>): ApiError {
  return new ApiError(ApiErrorCode.InvalidRequest, `invalid request: ${Object.keys(fields).join(', ')}`, { fields });
}

function invalidRequest(errors: ValidationError[]): ApiError {
  const fields = Object.fromEntries(
    errors.map((error) => [
      error.property,
      [
        ...new Set(
          Object.values(error.constraints ?? {}).map((message) =>
            message.startsWith('property ') ? 'unknown field' : message,
          ),
        ),
      ],
    ]),
  );
  return invalidFields(fields);
}

const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'];

/**
 * class-transformer drops `__proto__`, `constructor` and `prototype` before the whitelist
 * sees them, so a body with such a key would pass as if the key were not there: refuse it.
 */
class RefuseReservedKeysPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body' || typeof value !== 'object' || value === null) return value;
    const reserved = RESERVED_KEYS.filter((key) => Object.prototype.hasOwnProperty.call(value, key));
    if (reserved.length > 0) throw invalidFields(Object.fromEntries(reserved.map((key) => [key, ['unknown field']])));
    return value;
  }
}
