// Types of conditional.mjs, for its Jest spec (serve.mjs itself is plain JavaScript).

/** The coding Accept-Encoding prefers among br, gzip and the plain bytes. */
export declare function preferredCoding(acceptEncoding: string | undefined): 'br' | 'gzip' | 'identity';

/** Whether If-None-Match matches `etag` (weak comparison; a malformed header matches nothing). */
export declare function ifNoneMatchMatches(header: string | undefined, etag: string): boolean;
