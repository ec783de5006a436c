/**
 * An error that carries a code from a string enum, for programs to branch on, and details for
 * the reader. The libraries raise their own (PricingError, AuthError) and the host app its
 * ApiError; the host app's one exception filter maps each code to an HTTP status, and services
 * never throw HTTP exceptions.
 */
export class CodedError<Code extends string = string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}
