/**
 * Whether Express can route a request-target without Node's url.parse misreading a host in it.
 * Express reads targets with parseurl, which hands to url.parse any target that is not a plain
 * path; url.parse reads a host after a scheme or `//` (and `/\`, a backslash being a slash to it),
 * and on a host it cannot read it throws (`http://[::1/`: Express's router then finds no path and
 * skips every middleware for an HTML 404) or warns on stderr quoting the whole target (a port
 * that is no number: DEP0170, request text). So: a path (`/v1/pricing`) is routable; a target
 * with a host is when WHATWG's URL parser reads it as an http(s) URL (`http://host/v1/pricing`,
 * or `//host/` after `http:`), which checks the port.
 */
export function isRoutable(target: string): boolean {
  if (target.startsWith('//') || target.startsWith('/\\')) return URL.canParse(`http:${target}`);
  if (target.startsWith('/')) return true;
  return HTTP_URL.test(target) && URL.canParse(target);
}

const HTTP_URL = /^https?:\/\//i;
