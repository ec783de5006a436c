import { ArgumentsHost, Catch, HttpException, HttpStatus, Logger, type ExceptionFilter } from '@nestjs/common';
import { AuthErrorCode } from '@app/auth';
import { CodedError } from '@app/errors';
import { DatabaseUnavailableError } from '@app/database';
import { PRICING_ERROR_STATUS, PricingErrorCode, RETRY_AFTER_UNAVAILABLE_S } from '@app/pricing';
import type { ServerResponse } from 'node:http';
import { ApiErrorCode } from './api-error';
import { sendErrorEnvelope } from './error-envelope';

type Code = ApiErrorCode | AuthErrorCode | PricingErrorCode;

/**
 * The one place where error codes become HTTP statuses: the app's own and auth's here, pricing's
 * as the library maps them (PRICING_ERROR_STATUS, libs/pricing/src/errors/pricing-error.ts).
 */
const STATUS_OF: Record<Code, number> = {
  [ApiErrorCode.InvalidRequest]: HttpStatus.BAD_REQUEST,
  [ApiErrorCode.PayloadTooLarge]: HttpStatus.PAYLOAD_TOO_LARGE,
  [ApiErrorCode.LengthRequired]: HttpStatus.LENGTH_REQUIRED,
  [AuthErrorCode.Unauthenticated]: HttpStatus.UNAUTHORIZED,
  [ApiErrorCode.NotFound]: HttpStatus.NOT_FOUND,
  [ApiErrorCode.MethodNotAllowed]: HttpStatus.METHOD_NOT_ALLOWED,
  [ApiErrorCode.ServiceUnavailable]: HttpStatus.SERVICE_UNAVAILABLE,
  [ApiErrorCode.Internal]: HttpStatus.INTERNAL_SERVER_ERROR,
  ...PRICING_ERROR_STATUS,
};

function isKnownCode(code: string): code is Code {
  return Object.hasOwn(STATUS_OF, code);
}

interface Envelope {
  readonly status: number;
  readonly code: Code;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * Answers every error of the host app with `{ "error": { "code", "message", "details" } }`.
 * Unknown errors become 500 INTERNAL with no internals (no SQL, no stack) in the body.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(ApiExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<ServerResponse>();
    const envelope = this.envelopeOf(exception, host.switchToHttp().getRequest<{ id?: unknown }>().id);
    if (envelope.status === 503) response.setHeader('Retry-After', String(RETRY_AFTER_UNAVAILABLE_S));
    sendErrorEnvelope(response, envelope.status, envelope.code, envelope.message, envelope.details);
  }

  /** `requestId`: the request's X-Request-Id, on the log line of an unexpected error. */
  private envelopeOf(exception: unknown, requestId: unknown): Envelope {
    if (exception instanceof CodedError && isKnownCode((exception as CodedError).code)) {
      const { code, message, details } = exception as CodedError<Code>;
      return { status: STATUS_OF[code], code, message, details };
    }
    if (exception instanceof HttpException) return fromHttpException(exception);
    if (exception instanceof DatabaseUnavailableError) {
      return {
        status: HttpStatus.SERVICE_UNAVAILABLE,
        code: ApiErrorCode.ServiceUnavailable,
        message: 'the service is temporarily unavailable; retry later',
        details: {},
      };
    }
    this.logger.error({ request_id: requestId, err: exception }, 'unexpected error');
    return { status: 500, code: ApiErrorCode.Internal, message: 'internal error', details: {} };
  }
}

/** Nest's own exceptions: malformed JSON (400), unknown routes (404), body too large. */
function fromHttpException(exception: HttpException): Envelope {
  const status = exception.getStatus();
  if (status === 404) return { status, code: ApiErrorCode.NotFound, message: 'no such resource', details: {} };
  if (status === 401) {
    return { status, code: AuthErrorCode.Unauthenticated, message: 'a valid bearer token is required', details: {} };
  }
  if (status === 413) {
    return { status, code: ApiErrorCode.PayloadTooLarge, message: 'the request body is too large', details: {} };
  }
  if (status < 500) {
    // Nest's 400 for a body that is not JSON: the field at fault is the body itself.
    if (isMalformedJson(exception)) {
      const fields = { body: [`is not valid JSON: ${exception.message}`] };
      return { status: 400, code: ApiErrorCode.InvalidRequest, message: 'invalid request: body', details: { fields } };
    }
    const code = status === 405 ? ApiErrorCode.MethodNotAllowed : ApiErrorCode.InvalidRequest;
    return { status, code, message: exception.message, details: {} };
  }
  return { status: 500, code: ApiErrorCode.Internal, message: 'internal error', details: {} };
}

function isMalformedJson(exception: HttpException): boolean {
  const cause = exception.cause as { type?: string } | undefined;
  return cause?.type === 'entity.parse.failed';
}
