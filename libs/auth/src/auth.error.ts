import { CodedError } from '@app/errors';

/** Codes of the errors the auth library raises; the host app maps them to HTTP statuses. */
export enum AuthErrorCode {
  /** No bearer token, or one that is not in the configured set. */
  Unauthenticated = 'UNAUTHENTICATED',
}

export class AuthError extends CodedError<AuthErrorCode> {}
