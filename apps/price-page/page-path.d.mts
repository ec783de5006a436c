// Types of page-path.mjs, for its Jest spec (serve.mjs itself is plain JavaScript).

/** Every path the page server answers 200 on (listed in page-path.mjs). */
export declare const PAGE_PATHS: readonly string[];

export type PageTarget = { readonly status: 200; readonly path: string } | { readonly status: 400 | 404 };

/** The page path a request-target names; 400 for a malformed target, 404 for one naming no page file. */
export declare function pageTarget(target: string): PageTarget;
