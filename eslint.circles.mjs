// No import circles (README, "Layout"): a file never reaches itself through its imports, whatever
// their form (`import`, `import type`, `export ... from`, `import()`, `require()`), so that what a
// file needs can be read bottom up, and a module never sees another half loaded. The imports of the
// other files are read from disk with TypeScript's own scanner (ts.preProcessFile), once per lint
// run and file version.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = import.meta.dirname;

/** The `@app/...` aliases of tsconfig.json, longest first, each with the folder it names. */
const ALIASES = Object.entries(JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions.paths)
  .map(([alias, [target]]) => [alias, resolve(ROOT, target)])
  .sort(([a], [b]) => b.length - a.length);

const EXTENSIONS = ['.ts', '.mts', '.cts', '.d.ts', '.js', '.mjs', '.cjs'];

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The file an import names (relative, or an alias of tsconfig.json), or undefined for a package. */
export function resolveImportFile(source, importer) {
  let base;
  if (source.startsWith('.')) base = resolve(dirname(importer), source);
  else {
    const alias = ALIASES.find(([name]) => source === name || source.startsWith(`${name}/`));
    if (!alias) return undefined;
    base = join(alias[1], source.slice(alias[0].length));
  }
  const candidates = [
    base,
    ...EXTENSIONS.map((extension) => base + extension),
    // `./x.js` written for the file `./x.ts` (ESM style).
    ...(/\.[cm]?js$/.test(base) ? [base.replace(/js$/, 'ts')] : []),
    ...EXTENSIONS.map((extension) => join(base, `index${extension}`)),
  ];
  return candidates.find(isFile);
}

/** Each file's imports, resolved, by path, with the modification time they were read at. */
const importsOf = new Map();

function importsOfFile(file) {
  let mtime;
  try {
    mtime = statSync(file).mtimeMs;
  } catch {
    return [];
  }
  const known = importsOf.get(file);
  if (known && known.mtime === mtime) return known.imports;
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const imports = [
    ...new Set(info.importedFiles.map((f) => resolveImportFile(f.fileName, file)).filter((f) => f !== undefined)),
  ];
  importsOf.set(file, { mtime, imports });
  return imports;
}

/** A path of imports from `from` back to `to` (the files in order, `from` first), or undefined. */
function pathBack(from, to) {
  const previous = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const next of importsOfFile(file)) {
      if (next === to) {
        const path = [file];
        for (let at = previous.get(file); at !== null; at = previous.get(at)) path.unshift(at);
        return path;
      }
      if (!previous.has(next)) {
        previous.set(next, file);
        queue.push(next);
      }
    }
  }
  return undefined;
}

const noCircleRule = {
  meta: {
    type: 'problem',
    docs: { description: 'No file reaches itself through its imports (eslint.circles.mjs).' },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    if (!existsSync(file)) return {};
    const named = (path) => relative(ROOT, path);

    function check(node) {
      if (node?.type === 'TemplateLiteral' && node.expressions.length === 0) {
        node = { ...node, value: node.quasis[0].value.cooked };
      } else if (node?.type !== 'Literal' || typeof node.value !== 'string') {
        return;
      }
      const target = resolveImportFile(node.value, file);
      if (target === undefined) return;
      const path = target === file ? [] : pathBack(target, file);
      if (path === undefined) return;
      const circle = [file, ...path, file].map(named).join(' → ');
      context.report({ node, message: `'${node.value}' import makes an import circle: ${circle}` });
    }

    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.source),
      TSExternalModuleReference: (node) => check(node.expression),
      CallExpression: (node) => {
        if (node.callee.type === 'Identifier' && node.callee.name === 'require') check(node.arguments[0]);
      },
    };
  },
};

/** ESLint config blocks: no import circle among the files of the apps, libraries, tests and benchmarks. */
export function noImportCircleRules() {
  return [
    {
      files: [
        'apps/**/*.{ts,mts,cts,js,mjs,cjs}',
        'libs/**/*.{ts,mts,cts,js,mjs,cjs}',
        'test/**/*.{ts,mts,cts,js,mjs,cjs}',
        'bench/**/*.{ts,mts,cts,js,mjs,cjs}',
        'scripts/**/*.{mjs,cjs,js}',
      ],
      plugins: { imports: { rules: { 'no-circle': noCircleRule } } },
      rules: { 'imports/no-circle': 'error' },
    },
  ];
}
