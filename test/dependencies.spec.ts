import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';

// The Node.js versions the project supports are those every installed package supports
// (README, "Set up"): package.json's `engines` says exactly that, so that `npm ci` on a supported
// Node.js prints no "unsupported engine" warning (EBADENGINE) and none is wrongly claimed.

const ROOT = resolve(__dirname, '..');
const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; version?: string }>;
};

/** Every package the lockfile installs that names the Node.js versions it supports: [name@version, range]. */
const ranges = Object.entries(lock.packages).flatMap(([path, entry]) => {
  const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
  return path === '' || node === undefined ? [] : [[`${path.replace(/^.*node_modules\//, '')}@${entry.version}`, node]];
});

/** Releases of Node.js 18 to 26 (each minor's .0), the versions the ranges name, and this one. */
const versions = [
  ...Array.from({ length: 9 }, (_, i) => 18 + i).flatMap((major) =>
    Array.from({ length: 40 }, (_, minor) => `${major}.${minor}.0`),
  ),
  ...ranges.flatMap(([, range]) => (semver.validRange(range) ? [semver.minVersion(range)?.version ?? '0.0.0'] : [])),
  process.versions.node,
];

const unsupportedBy = (version: string) => ranges.filter(([, range]) => !semver.satisfies(version, range));

describe("the project's Node.js versions", () => {
  it('are exactly those every package of the lockfile supports: package.json engines', () => {
    expect(ranges.length).toBeGreaterThan(100);
    for (const version of versions) {
      expect([version, semver.satisfies(version, pkg.engines.node)]).toEqual([
        version,
        unsupportedBy(version).length === 0,
      ]);
    }
  });

  it('include the Node.js running the tests, and the README says which they are', () => {
    expect(unsupportedBy(process.versions.node)).toEqual([]);
    expect(readFileSync(resolve(ROOT, 'README.md'), 'utf8')).toContain(`\`engines\`: \`${pkg.engines.node}\``);
  });

  it("load @nestjs/common's file-type (pinned to 21, which supports Node.js 20) and detect a PNG by its bytes", async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    const script = `
      import('@nestjs/common').then(async ({ FileTypeValidator }) => {
        const validator = new FileTypeValidator({ fileType: 'image/png' });
        const file = (buffer) => ({ mimetype: 'image/png', buffer, size: buffer.length });
        const png = Buffer.from('${png.toString('hex')}', 'hex');
        console.log(JSON.stringify([await validator.isValid(file(png)), await validator.isValid(file(Buffer.from('not a png')))]));
      });`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: ROOT });
    // Without file-type the validator falls back to nothing: both would be false.
    expect(JSON.parse(stdout)).toEqual([true, false]);
  });
});
