import { applyDecorators } from '@nestjs/common';
import { AuthErrorCode } from '@app/auth';
import { PricingErrorCode } from '@app/pricing';
import { ApiProperty, ApiResponse } from '@nestjs/swagger';
import type { ServerResponse } from 'node:http';
import { ApiErrorCode } from './api-error';

/** Writes `{ "error": { "code", "message", "details" } }`, the one shape of every error of the control plane. */
export function sendErrorEnvelope(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
): void {
  const body = JSON.stringify({ error: { code, message, details } });
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}

export class ApiErrorBody {
  @ApiProperty({
    enum: [...Object.values(ApiErrorCode), ...Object.values(AuthErrorCode), ...Object.values(PricingErrorCode)],
    description: 'What went wrong, for programs to branch on.',
  })
  readonly code!: string;

  @ApiProperty({ description: 'What went wrong, for people.' })
  readonly message!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Specifics of the error: `fields` (field name to messages) for INVALID_REQUEST, `product_key` for PRODUCT_UNAVAILABLE; else empty.',
  })
  readonly details!: Record<string, unknown>;
}

/** The one shape of every error of the control plane's own routes (the OpenAPI description). */
export class ErrorEnvelope {
  @ApiProperty({ type: ApiErrorBody })
  readonly error!: ApiErrorBody;
}

/** Error responses of an operation, each `{ status: 'when, with which code' }`, all in the envelope. */
export function ApiErrorResponses(responses: Record<number, string>): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...Object.entries(responses).map(([status, description]) =>
      ApiResponse({ status: Number(status), description, type: ErrorEnvelope }),
    ),
  );
}
