/**
 * Whether Express can route a request-target without Node's url.parse misreading a host in it.
 * Express reads targets with parseurl, which scans a path itself but hands to url.parse a target
 * that is not a path, or a path with a fragment or white space. url.parse reads a host after a
 * scheme or `//` (and `/\`, a backslash being a slash to it), also in what is left of a path once
 * a mount strips its prefix (`/docs//u@host:x/#`), and on a host it cannot read it throws
 * (`http://[::1/`: Express's router then finds no path and skips every middleware for an HTML
 * 404; a mount answers 500) or warns on stderr quoting the whole target (a port that is no
 * number: DEP0170, request text). So: a path with no fragment nor white space is routable (a
 * fragment is no part of a request-target, RFC 9112); a target with a host is when WHATWG's URL
 * parser reads it as an http(s) URL, which checks the port.
 */
export function isRoutable(target: string): boolean {
  if (TO_URL_PARSE.test(target)) return false;
  if (target.startsWith('/')) return true;
  return HTTP_URL.test(target) && URL.canParse(target);
}

/** What sends parseurl from its own scan of a path to url.parse (node_modules/parseurl, fastparse). */
const TO_URL_PARSE = /[\t\n\f\r #\u00a0\ufeff]/;
const HTTP_URL = /^https?:\/\//i;
