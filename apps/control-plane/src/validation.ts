import { ValidationPipe, type ArgumentMetadata, type PipeTransform, type ValidationError } from '@nestjs/common';
import { ApiError, ApiErrorCode } from './errors/api-error';

/** 400 INVALID_REQUEST naming every field and what is wrong with it. */
export function invalidFields(fields: Record<string, string[]>): ApiError {
  return new ApiError(ApiErrorCode.InvalidRequest, `invalid request: ${Object.keys(fields).join(', ')}`, { fields });
}

/** Request bodies: known fields only, each checked by its DTO's rules. */
export function bodyValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors: ValidationError[]) => invalidFields(fieldMessages(errors)),
  });
}

function fieldMessages(errors: ValidationError[]): Record<string, string[]> {
  return Object.fromEntries(
    errors.map((error) => [
      error.property,
      [...new Set(constraintMessages(error).map((m) => (m.startsWith('property ') ? 'unknown field' : m)))],
    ]),
  );
}

/** The messages of the rules a value broke, each once (several rules may share a message). */
export function constraintMessages(error: ValidationError): string[] {
  return [...new Set(Object.values(error.constraints ?? {}))];
}

const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'];

/**
 * class-transformer drops `__proto__`, `constructor` and `prototype` before the whitelist
 * sees them, so a body with such a key would pass as if the key were not there: refuse it.
 */
export class RefuseReservedKeysPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body' || typeof value !== 'object' || value === null) return value;
    const reserved = RESERVED_KEYS.filter((key) => Object.prototype.hasOwnProperty.call(value, key));
    if (reserved.length > 0) throw invalidFields(Object.fromEntries(reserved.map((key) => [key, ['unknown field']])));
    return value;
  }
}
