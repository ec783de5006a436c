import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../test/support/linear-time';
import { PAGE_PATHS, pageTarget, type PageTarget } from './page-path.mjs';
import { anyCodePoint } from '../../test/support/outside-text';

// page-path.mjs turns any request-target into a page path, 400 or 404; serve.mjs trusts it to
// never throw and never name anything outside PAGE_PATHS.

const ALLOWED: readonly string[] = PAGE_PATHS;

function expectWellFormed(result: PageTarget): void {
  if (result.status === 200) expect(ALLOWED).toContain(result.path);
  else expect([400, 404]).toContain(result.status);
}

/** Characters a hostile target is made of: separators, dots, percent signs, hex digits, NUL, non-ASCII. */
const hostileChar = fc.constantFrom(...'/.%2eEfF0:@[]?#*\\\u0000aé\u{1F600}'.split(''), '%2e', '%2F', '%00', '..');

/** A target as a test name: quoted, a long one cut short. */
const named = (targets: string[]): [string, string][] =>
  targets.map((target) => [
    target.length > 60 ? `"${target.slice(0, 12)}…" (${target.length} characters)` : JSON.stringify(target),
    target,
  ]);

/** `c` as %XX, in upper or lower case. */
function percentEncoded(c: string): string {
  const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
  return `%${c.charCodeAt(0) % 2 ? hex.toUpperCase() : hex}`;
}

describe('pageTarget', () => {
  it.each([
    ['/', '/'],
    ['/index.html', '/'],
    ['/?lang=en', '/'],
    ['/config.js', '/config.js'],
    ['/style.css', '/style.css'],
    ['/app.js', '/app.js'],
    ['/app%2Ejs', '/app.js'],
    ['/prices.mjs', '/prices.mjs'],
    ['/vendor/decimal.mjs', '/vendor/decimal.mjs'],
    ['http://x/', '/'],
    ['http://x', '/'],
    ['HTTPS://x:443/app.js?v=1', '/app.js'],
    ['http://[::1]:3001/style.css', '/style.css'],
    ['http://127.0.0.1:/index.html', '/'],
  ])('%s names %s', (target, path) => {
    expect(pageTarget(target)).toEqual({ status: 200, path });
  });

  it.each(
    named([
      'http://x:99999/',
      'http://x:65536/',
      'http://x:80a/',
      'http://[::1/',
      'http://[]/',
      'http://user@x/',
      'http:///',
      'http://x y/',
      'ftp://x/',
      'x:80',
      '*',
      '',
      'app.js',
      '/%E0%A4%A',
      '/%zz',
      '/%',
      '/%C0%AF',
    ]),
  )('%s is a bad request (400)', (_name, target) => {
    expect(pageTarget(target)).toEqual({ status: 400 });
  });

  it.each(
    named([
      '/..',
      '/../package.json',
      '/%2e%2e/package.json',
      '/%2E%2E%2Fpackage.json',
      '/vendor/../../package.json',
      '/vendor/../app.js',
      '/vendor/decimal.mjs%00.txt',
      '/%00',
      '//',
      '//etc/passwd',
      '/app.js/',
      '/serve.mjs',
      '/page-path.mjs',
      '/public/app.js',
      '/vendor',
      '/vendor%2Fdecimal.mjs',
      '/__proto__',
      '/constructor',
      '/APP.JS',
      `/${'a'.repeat(14 * 1024)}`,
      `/${'%zz'.repeat(100)}`,
    ]),
  )('%s names no page file (404)', (_name, target) => {
    expect(pageTarget(target)).toEqual({ status: 404 });
  });

  it('never throws and names only page paths, whatever the string', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: anyCodePoint, maxLength: 200 }), fc.string({ unit: hostileChar })),
        (target) => expectWellFormed(pageTarget(target)),
      ),
      { numRuns: 2_000 },
    );
  });

  it('names a page path however its characters are percent-encoded', () => {
    const encoded = (path: string) =>
      fc
        .tuple(...[...path].map((c) => (c === '/' ? fc.constant(c) : fc.constantFrom(c, percentEncoded(c)))))
        .map((chars) => chars.join(''));
    fc.assert(
      fc.property(
        fc.constantFrom(...ALLOWED).chain((path) => fc.tuple(fc.constant(path), encoded(path))),
        ([path, target]) => {
          expect(pageTarget(target)).toEqual({ status: 200, path });
        },
      ),
    );
  });

  it('refuses a target that is neither origin-form nor http(s) absolute-form', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: anyCodePoint }).filter((s) => !s.startsWith('/') && !/^https?:\/\//i.test(s)),
        (target) => {
          expect(pageTarget(target)).toEqual({ status: 400 });
        },
      ),
    );
  });

  it('reads an absolute-form target as its path', () => {
    const path = fc.oneof(
      fc.constantFrom(...ALLOWED, '/index.html', '/nothing'),
      fc.string({ unit: hostileChar }).map((s) => `/${s}`),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('http', 'https', 'HTTP'),
        fc.domain(),
        fc.integer({ min: 0, max: 65535 }),
        path,
        (scheme, host, port, p) => {
          expect(pageTarget(`${scheme}://${host}:${port}${p}`)).toEqual(pageTarget(p));
        },
      ),
    );
  });

  it('refuses an absolute-form target with a port above 65535', () => {
    fc.assert(
      fc.property(fc.domain(), fc.bigInt({ min: 65536n, max: 10n ** 30n }), (host, port) => {
        expect(pageTarget(`http://${host}:${port}/`)).toEqual({ status: 400 });
      }),
    );
  });

  it('names a page path under any query', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ALLOWED), fc.string({ unit: anyCodePoint }), (path, query) => {
        expect(pageTarget(`${path}?${query}`)).toEqual({ status: 200, path });
      }),
    );
  });

  it.each([
    ['long paths', (n: number) => `/${repeated('a', n - 1)}`],
    ['dot-segments', (n: number) => repeated('/..', n)],
    ['percent signs', (n: number) => `/${repeated('%', n - 1)}`],
    ['encoded dots', (n: number) => repeated('/%2e%2e', n)],
    ['slashes', (n: number) => repeated('/', n)],
    ['a long authority', (n: number) => `http://${repeated('a.', n - 8)}/`],
    ['a long port', (n: number) => `http://x:${repeated('0', n - 10)}/`],
    ['an unclosed IPv6 literal', (n: number) => `http://[${repeated('::1', n - 8)}`],
    ['a long query', (n: number) => `/?${repeated('?#%', n - 2)}`],
  ])('is linear in the length of the target (16 KB of %s)', (_name, inputOfLength) => {
    expectLinearTime(pageTarget, inputOfLength);
  });
});
