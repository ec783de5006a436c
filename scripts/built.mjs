// Builds the apps when a source changed since the last build, then runs the built entry point
// named on the command line in this process: `npm start`, `npm run pricing` and `npm run migrate`
// run the build they find, without a second of `npm run build` each time (an operator runs
// the CLI many times a day). The tests build nothing: they run the sources (docs/tests.md).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Written after each build, with the time the build started: sources newer than it are not built. */
const STAMP = join(ROOT, 'dist', '.built');
const SOURCE_FOLDERS = ['apps', 'libs', 'bench'];
const SOURCE_FILES = ['package-lock.json', 'tsconfig.json', 'scripts/build.mjs', 'test/support/typescript.cjs'];

/** The latest modification time of the files under `path` (milliseconds; 0 when absent). */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs; // a deleted file changes its folder
  for (const entry of readdirSync(path)) {
    if (entry !== 'node_modules' && entry !== 'dist') latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

/** Whether the build is older than a source (or missing). */
export function isStale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return [...SOURCE_FOLDERS, ...SOURCE_FILES].some((name) => newest(join(ROOT, name)) > built);
}

/** Runs the build (scripts/build.mjs) when it is stale; its errors go to stderr, and a failed build throws. */
export function ensureBuilt() {
  if (!isStale()) return;
  const startedAt = new Date();
  const script = join(ROOT, 'scripts', 'build.mjs');
  const build = spawnSync(process.execPath, [script], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) throw new Error(`the build failed (exit ${build.status})`);
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, `${startedAt.toISOString()}\n`);
  utimesSync(STAMP, startedAt, startedAt); // a source saved during the build is built next time
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [entry, ...args] = process.argv.slice(2);
  if (entry === '--build-only') {
    try {
      ensureBuilt();
    } catch (error) {
      console.error(error.message);
      process.exit(1);
    }
    process.exit(0);
  }
  if (!entry) {
    console.error('usage: node scripts/built.mjs <built entry point, e.g. dist/apps/control-plane/src/cli.js> [args]');
    process.exit(2);
  }
  try {
    ensureBuilt();
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
  const main = resolve(ROOT, entry);
  process.argv = [process.argv[0], main, ...args];
  createRequire(import.meta.url)(main);
}
