// How the tests compile our TypeScript, in one place: swc's options, and the @app/... entry points
// read from tsconfig.json's `paths`, their one declaration (jest.shared.mjs maps them for Jest).
const { readFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

const ROOT = resolve(__dirname, '../..');

/** swc's options for `typescript` or `ecmascript`: legacy decorators with metadata (as Nest needs), CommonJS. */
function swcOptions(syntax) {
  return {
    jsc: {
      parser: syntax === 'typescript' ? { syntax, decorators: true } : { syntax },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  };
}

/**
 * tsconfig.json's `paths`, each alias with the absolute path it names at run time. Every alias is
 * a whole module name (`@app/pricing/cli`), so a lookup by name is all resolving one takes. A path
 * to a declaration file names the JavaScript it declares (`prices.d.mts` types `prices.mjs`, the
 * price page's script, which is plain JavaScript).
 */
const ALIASES = Object.fromEntries(
  Object.entries(JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions.paths).map(
    ([alias, [target]]) => {
      if (alias.includes('*')) throw new Error(`${alias}: tsconfig.json's paths here are whole module names`);
      return [alias, resolve(ROOT, target.replace(/\.d\.([mc]?)ts$/, '.$1js'))];
    },
  ),
);

module.exports = { ROOT, ALIASES, swcOptions };
