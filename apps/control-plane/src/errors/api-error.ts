import { CodedError } from '@app/errors';

/** Codes of the host app's error envelope: `{ "error": { "code", "message", "details" } }`. */
export enum ApiErrorCode {
  InvalidRequest = 'INVALID_REQUEST',
  PayloadTooLarge = 'PAYLOAD_TOO_LARGE',
  LengthRequired = 'LENGTH_REQUIRED',
  NotFound = 'NOT_FOUND',
  MethodNotAllowed = 'METHOD_NOT_ALLOWED',
  ServiceUnavailable = 'SERVICE_UNAVAILABLE',
  Internal = 'INTERNAL',
}

/** A domain error of the host app; the exception filter maps its code to an HTTP status. */
export class ApiError extends CodedError<ApiErrorCode> {}
