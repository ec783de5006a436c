// `npm run build`: compiles the folders nest-cli.json's swc builder names (apps/, libs/, bench/)
// into dist/ with swc (@swc/core), as the tests run them (test/support/typescript.cjs: CommonJS,
// legacy decorators with metadata), the `@app/...` imports rewritten to relative paths
// (tsconfig.json's `paths`), a source map beside each file: dist/apps/control-plane/src/main.js and
// so on. Types are checked by `npm run typecheck`, not here. The Nest CLI's `nest build` did the
// same from the same nest-cli.json; its releases need Node.js 22 (docs/decisions.md, "Toolchain").
import { transformFile } from '@swc/core';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist');
/** The monorepo's description: its projects, and the folders its swc builder compiles. */
const NEST_CLI = JSON.parse(await readFile(join(ROOT, 'nest-cli.json'), 'utf8'));
const SOURCE_FOLDERS = NEST_CLI.compilerOptions.builder.options.filenames;
/** What is not built: the specs and their fixtures, and declarations. */
const NOT_BUILT = /(?:\.spec\.ts|\.fixture\.ts|\.d\.ts)$/;
const { swcOptions } = createRequire(import.meta.url)('../test/support/typescript.cjs');

/** The TypeScript files under `folder`, but tests. */
async function sources(folder) {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !NOT_BUILT.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => !relative(ROOT, file).split('/').includes('node_modules'));
}

/** Compiles every source, and resolves with their number; throws on the first that does not compile. */
export async function build() {
  const { compilerOptions } = JSON.parse(await readFile(join(ROOT, 'tsconfig.json'), 'utf8'));
  const base = swcOptions('typescript');
  const options = {
    ...base,
    jsc: { ...base.jsc, baseUrl: ROOT, paths: compilerOptions.paths },
    sourceMaps: true,
    swcrc: false,
    configFile: false,
  };
  const files = (await Promise.all(SOURCE_FOLDERS.map((folder) => sources(join(ROOT, folder))))).flat();
  await Promise.all(
    files.map(async (file) => {
      const target = join(OUT, relative(ROOT, file)).replace(/\.ts$/, '.js');
      const name = target.slice(dirname(target).length + 1);
      const { code, map } = await transformFile(file, {
        ...options,
        sourceFileName: relative(dirname(target), file),
        outputPath: target,
      });
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, `${code}\n//# sourceMappingURL=${name}.map\n`);
      await writeFile(`${target}.map`, map);
    }),
  );
  return files.length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const count = await build();
  process.stdout.write(`compiled ${count} files with swc in ${Math.round(performance.now() - started)} ms\n`);
}
