import fc from 'fast-check';
import type { IncomingMessage } from 'node:http';
import { parse } from 'node:url';
import parseurl from 'parseurl';
import { expectLinearTime, repeated } from '../../../test/support/linear-time';
import { outsideText } from '../../../test/support/outside-text';
import { isRoutable } from './request-target';

// The request-target is text any client chooses; only what isRoutable lets through reaches
// Express's url.parse (configure-express.ts), which throws on some targets and warns quoting others.
describe('isRoutable, on any request-target', () => {
  it.each([
    ['/v1/pricing', true],
    ['http://api.test/v1/pricing', true],
    ['HTTPS://api.test/v1/pricing', true],
    ['ftp://api.test/v1/pricing', false],
    ['foo:bar:abc', false], // WHATWG reads an opaque path; url.parse, a host with a port `abc`
    ['*', false],
    ['http://[::1/v1/pricing', false],
    ['http://api.test:abc/v1/pricing', false],
    ['http://api.test:99999/v1/pricing', false],
    ['api.test:443', false],
    ['//v1/pricing', true],
    ['/:abc/v1/pricing', true],
    ['//a@api.test:abc/', true], // a path: parseurl reads it, url.parse never sees it
    ['//[@[#x', false],
    ['//a@api.test:abc/#x', false],
    ['/\\a@api.test:abc/#x', false],
    ['/docs//u@api.test:abc/#', false], // what the /docs mount strips to `//u@…#`
    ['/v1/pricing#f', false],
    ['http://api.test/v1/pricing#f', false],
  ])('%s: %s', (target, routable) => expect(isRoutable(target)).toBe(routable));

  it('never throws on any text', () => {
    fc.assert(fc.property(outsideText(['http://', '[', ']', ':', '/', '%']), (target) => void isRoutable(target)));
  });

  // A scheme or a mount, an authority of URL pieces, a path: url.parse throws on some
  // (`http://[::1/`, and `http://%@host/`, which WHATWG reads: Express's final handler answers
  // those, configure-express.ts) and warns quoting the target on others (a port that is no port).
  const targetsOf = (starts: string[]) =>
    fc
      .tuple(
        fc.constantFrom(...starts),
        fc.array(fc.constantFrom('[', ']', '::1', ':', '@', 'api.test', ':99999', ':abc', '%', '#'), { maxLength: 5 }),
        fc.constantFrom('', '/', '/v1/pricing', '?q', '#f', '/#f'),
      )
      .map(([start, authority, path]) => start + authority.join('') + path);
  const paths = targetsOf(['//', '/\\', '/', '/docs//', '/docs/\\']);
  const urls = targetsOf(['http://', 'HTTPS://', 'ftp://', 'foo:', 'api.test:', '']);

  /**
   * Whether url.parse cut the host it read at a `:` that begins no port: what it warns of quoting
   * the target (DEP0170, once a process, node:url's getHostname), moving `:…` into the path.
   */
  function cutsHostAtColon(target: string): boolean {
    const { hostname, pathname } = parse(target);
    if (!hostname || !pathname?.startsWith('/:')) return false;
    return target.toLowerCase().includes(hostname + pathname.slice(1).toLowerCase());
  }

  it('lets through no path that Express would read a host in, whole or once /docs strips its prefix', () => {
    fc.assert(
      fc.property(paths, (target) => {
        fc.pre(isRoutable(target));
        for (const path of [target, target.replace(/^\/docs(?=\/)/, '')]) {
          expect(parseurl({ url: path } as IncomingMessage)?.pathname).toBe(path.split('?')[0]);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('lets through no URL whose host url.parse would warn of', () => {
    fc.assert(
      fc.property(urls, (target) => {
        fc.pre(isRoutable(target));
        try {
          expect(cutsHostAtColon(target)).toBe(false);
        } catch (error) {
          if ((error as Error).name === 'URIError' || (error as { code?: string }).code === 'ERR_INVALID_URL') return; // Express's final handler answers those, configure-express.ts
          throw error;
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('costs time linear in the length of the target', () => {
    expectLinearTime(isRoutable, (n) => `http://[${repeated('a.', n)}`);
  });
});
