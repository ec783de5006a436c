/** Codes of the errors the auth library raises; the host app maps them to HTTP statuses. */
export enum AuthErrorCode {
  /** No bearer token, or one that is not in the configured set. */
  Unauthenticated = 'UNAUTHENTICATED',
}

export class AuthError extends Error {
  readonly details: Readonly<Record<string, unknown>> = {};

  constructor(
    readonly code: AuthErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AuthError';
  }
}
