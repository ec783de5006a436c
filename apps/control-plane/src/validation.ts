import { ValidationPipe, type ArgumentMetadata, type PipeTransform, type ValidationError } from '@nestjs/common';
import * as classTransformer from 'class-transformer';
import * as classValidator from 'class-validator';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, ApiErrorCode } from './errors/api-error';

/** The largest request body the API reads: its bodies are a few fields. */
export const MAX_BODY_BYTES = 100 * 1024;

/**
 * A body is read only when its length is declared (Content-Length) and within MAX_BODY_BYTES:
 * body-parser reads a body to its end before answering 413 (to keep the connection), so one
 * declared larger, or sent in chunks with no length, would be read for as long as
 * HTTP_REQUEST_TIMEOUT_S allows. Both are refused before any of it is read, the connection closed.
 */
export function refuseUnboundedBodies(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  if (req.headers['transfer-encoding'] !== undefined) {
    res.setHeader('Connection', 'close');
    throw new ApiError(ApiErrorCode.LengthRequired, 'a request body needs a Content-Length');
  }
  if (Number(req.headers['content-length']) > MAX_BODY_BYTES) {
    res.setHeader('Connection', 'close');
    throw new ApiError(ApiErrorCode.PayloadTooLarge, 'the request body is too large');
  }
  next();
}

/** 400 INVALID_REQUEST naming every field and what is wrong with it. */
export function invalidFields(fields: Record<string, string[]>): ApiError {
  return new ApiError(ApiErrorCode.InvalidRequest, `invalid request: ${Object.keys(fields).join(', ')}`, { fields });
}

/**
 * Request bodies: known fields only, each checked by its DTO's rules. The packages are given, as
 * loaded with the app's modules: the pipe would import them itself, and Node's ESM loader then read
 * class-validator's files again as the app began listening (a request waited 20 ms behind it).
 */
export function bodyValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    validatorPackage: classValidator,
    transformerPackage: classTransformer,
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

/** How deep a request body may nest: the bodies of the API are flat, an object of scalars. */
export const MAX_BODY_DEPTH = 32;

/**
 * How deep `value` nests (a scalar 0, `{}` and `[]` 1, `[[1]]` 2), counted without recursion and
 * given up once past `limit`: each value is visited once, so the work is bounded by the body's size.
 */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * class-transformer walks a body by recursion: a body nested thousands of levels deep (100 kB of
 * `[`) overflows its stack after a long walk, a 500 and a stalled event loop. Refuse it first,
 * naming the fields nested too deep (or `body`, for an array).
 */
export class RefuseDeepBodiesPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body' || typeof value !== 'object' || value === null) return value;
    // An array body is itself the value nested too deep; in an object, each field may go one level less.
    const fields = Array.isArray(value)
      ? [['body', value] as const].filter(([, item]) => nestingDepth(item, MAX_BODY_DEPTH) > MAX_BODY_DEPTH)
      : Object.entries(value).filter(([, item]) => nestingDepth(item, MAX_BODY_DEPTH - 1) > MAX_BODY_DEPTH - 1);
    if (fields.length === 0) return value;
    const message = [`nested more than ${MAX_BODY_DEPTH} levels deep`];
    throw invalidFields(Object.fromEntries(fields.map(([field]) => [field, message])));
  }
}
