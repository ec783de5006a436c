/** `Bearer <token>` (RFC 6750 2.1; the scheme in any case, one space), the token without spaces. */
const BEARER = /^Bearer ([^\s]+)$/i;
/** Longer headers are refused unread: configured tokens are far shorter. */
const MAX_AUTHORIZATION_LENGTH = 4096;

/**
 * The token of an `Authorization: Bearer <token>` header, or `undefined` when the header is
 * missing, repeated, too long or not of that form. One anchored pass over at most 4 KB.
 */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string' || header.length > MAX_AUTHORIZATION_LENGTH) return undefined;
  return BEARER.exec(header)?.[1];
}
