// The layers of libs/pricing/src, bottom first (README, "Layout"): a folder imports only from the
// folders before it in this list; folders listed together are siblings and do not import each
// other. Files at the root of src/ (the module, the entry points) may import any layer. The pure
// layers import no framework: no Nest, no TypeORM, no pg, no I/O.

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export const PRICING_LAYERS = [
  ['errors'],
  ['catalogue'],
  ['core'],
  ['rendering'],
  ['price-book'],
  ['options'],
  ['database'],
  ['snapshot'],
  ['services'],
  ['http', 'cli'],
  ['metrics'],
];

/** Layers whose code is pure: the same input, the same output, and nothing else touched. */
export const PURE_LAYERS = ['errors', 'catalogue', 'core', 'rendering', 'price-book', 'options'];

const LIBRARY = 'libs/pricing/src';
const ROOT = import.meta.dirname;

/** What every file of the apps, libraries and tests may not import (index.ts, "one entry point"). */
const ENTRY_POINT_PATTERNS = [
  {
    group: ['**/libs/**', '**/apps/**', '../../*/src/**', '../../../*/src/**', '../../../../*/src/**', '@app/*/src/**'],
    message: 'Import a library or app through its entry point: @app/<name>.',
  },
];

/** The config block of that rule, for every file of the apps, libraries and tests. */
export const entryPointRule = {
  files: ['apps/**/*.ts', 'libs/**/*.ts', 'test/**/*.ts'],
  rules: { 'no-restricted-imports': ['error', { patterns: ENTRY_POINT_PATTERNS }] },
};

/** Modules a pure layer's code may not load: a framework, or I/O. */
const FRAMEWORK = /^(@nestjs\/|typeorm(\/|$)|pg$|ioredis$|prom-client$|rxjs(\/|$)|(node:)?fs(\/|$))/;

/** The `@app/...` aliases of tsconfig.json, longest first, each with the folder it names. */
const ALIASES = Object.entries(JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions.paths)
  .map(([alias, [target]]) => [alias, resolve(ROOT, target)])
  .sort(([a], [b]) => b.length - a.length);

/** The file or folder an import names, absolute; undefined for a package. */
function resolveImport(source, file) {
  if (source.startsWith('.')) return resolve(dirname(file), source);
  const alias = ALIASES.find(([name]) => source === name || source.startsWith(`${name}/`));
  return alias && join(alias[1], source.slice(alias[0].length));
}

/**
 * Where a path of the library sits: `{ layer }` for a folder of PRICING_LAYERS, `'testing'` or
 * `'root'` (the module, the entry points); undefined outside libs/pricing/src.
 */
function placeOf(path) {
  const inside = relative(join(ROOT, LIBRARY), path);
  if (inside.startsWith('..') || isAbsolute(inside)) return undefined;
  const [first, ...rest] = inside.split(sep);
  if (first === 'testing') return 'testing';
  if (PRICING_LAYERS.flat().includes(first)) return { layer: first };
  // A file at the root (or a folder that is no layer, which lint cannot place: refused like one).
  return rest.length === 0 ? 'root' : { layer: first };
}

const isSpec = (file) => /[.-]spec\.[cm]?[jt]s$/.test(file);

/**
 * The rule: every import of a file in a layer (`import`, `export ... from`, `import()`,
 * `require()`, `import x = require()`, `typeof import()`), resolved to the file it names whatever
 * its depth or form (`../../http/x`, `./../http/x`, `@app/pricing/cli`), must name a layer below
 * the file's own, never the root files, the test support only from a spec, and, in the code of a
 * pure layer, no framework. Inside the library files import each other directly: no `@app/pricing`.
 */
const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'The layers of libs/pricing/src import only downwards (eslint.layers.mjs).' },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const own = placeOf(file);
    if (own === undefined) return {};
    const index = typeof own === 'object' ? PRICING_LAYERS.findIndex((layers) => layers.includes(own.layer)) : -1;
    const below = PRICING_LAYERS.slice(0, Math.max(index, 0)).flat();
    const spec = isSpec(file);

    /** Why `source` may not be imported here, or undefined if it may. */
    function refusal(source) {
      if (/^@app\/pricing(\/|$)/.test(source)) {
        return 'inside libs/pricing/src files import each other directly, not through @app/pricing.';
      }
      if (typeof own !== 'object') return undefined;
      const layer = own.layer;
      if (PURE_LAYERS.includes(layer) && !spec && FRAMEWORK.test(source)) {
        return 'a pure layer (eslint.layers.mjs) uses no framework and does no I/O.';
      }
      const target = resolveImport(source, file);
      const place = target && placeOf(target);
      if (place === undefined) return undefined;
      if (place === 'root' || (place === 'testing' && !spec)) {
        return `${layer}/ may not import the library's root files (the module, the entry points)${spec ? '' : ' or its test support'}.`;
      }
      if (place === 'testing' || place.layer === layer || below.includes(place.layer)) return undefined;
      return `${layer}/ may import only the layers below it (eslint.layers.mjs): ${below.join(', ') || 'none'}.`;
    }

    function check(node) {
      if (node?.type === 'TemplateLiteral' && node.expressions.length === 0) {
        node = { ...node, value: node.quasis[0].value.cooked };
      } else if (node?.type !== 'Literal' || typeof node.value !== 'string') {
        return;
      }
      const why = refusal(node.value);
      if (why) context.report({ node, message: `'${node.value}' import is restricted: ${why}` });
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

/** ESLint config blocks: the layer rule on every file of the library, JavaScript included. */
export function pricingLayerRules() {
  return [
    {
      files: [`${LIBRARY}/**/*.{ts,mts,cts,js,mjs,cjs}`],
      plugins: { pricing: { rules: { layers: layersRule } } },
      rules: { 'pricing/layers': 'error' },
    },
  ];
}
