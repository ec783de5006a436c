// The layers of libs/pricing/src, bottom first (README, "Layout"): a folder imports only from the
// folders before it in this list; folders listed together are siblings and do not import each
// other. Files at the root of src/ (the module, the entry points) may import any layer. The pure
// layers import no framework: no Nest, no TypeORM, no pg, no I/O.

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

/** What every file of the apps, libraries and tests may not import (index.ts, "one entry point"). */
export const ENTRY_POINT_PATTERNS = [
  {
    group: ['**/libs/**', '**/apps/**', '../../*/src/**', '../../../*/src/**', '../../../../*/src/**', '@app/*/src/**'],
    message: 'Import a library or app through its entry point: @app/<name>.',
  },
];

const FRAMEWORK_PATTERNS = [
  {
    group: ['@nestjs/*', 'typeorm', 'typeorm/*', 'pg', 'ioredis', 'prom-client', 'rxjs', 'node:fs', 'node:fs/*'],
    message: 'A pure layer (eslint.layers.mjs) uses no framework and does no I/O.',
  },
];

/**
 * ESLint config blocks, per layer: `no-restricted-imports` with the entry-point rule and every
 * layer above it (and its siblings) forbidden, so that an import running up the layers fails lint;
 * the code of a pure layer (not its specs) may not import a framework either.
 */
export function pricingLayerRules() {
  return PRICING_LAYERS.flatMap((layers, index) => {
    const below = PRICING_LAYERS.slice(0, index).flat();
    const above = PRICING_LAYERS.slice(index + 1).flat();
    return layers.flatMap((layer) => {
      const forbidden = [...above, ...layers.filter((sibling) => sibling !== layer)];
      const order = [
        ...ENTRY_POINT_PATTERNS,
        ...(forbidden.length > 0
          ? [
              {
                group: forbidden.flatMap((name) => [`../${name}`, `../${name}/*`]),
                message: `${layer}/ may import only the layers below it (eslint.layers.mjs): ${below.join(', ') || 'none'}.`,
              },
            ]
          : []),
      ];
      // Specs may use the library's test support; its code may not.
      const rootFiles = (testing) => ({
        group: ['../pricing.module', '../index', ...(testing ? ['../testing', '../testing/*'] : [])],
        message: `${layer}/ may not import the library's root files (the module, the entry points).`,
      });
      const folder = `${LIBRARY}/${layer}`;
      const rule = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
      const code = [...order, rootFiles(true), ...(PURE_LAYERS.includes(layer) ? FRAMEWORK_PATTERNS : [])];
      return [
        { files: [`${folder}/**/*.ts`], ignores: [`${folder}/**/*.spec.ts`], rules: rule(code) },
        { files: [`${folder}/**/*.spec.ts`], rules: rule([...order, rootFiles(false)]) },
      ];
    });
  });
}
