// How our TypeScript is compiled, in one place: Jest's transform (jest.shared.mjs), the processes
// the tests start (register.cjs) and the build (scripts/build.mjs) compile it with these swc
// options and resolve the @app/... entry points from tsconfig.json's `paths`, their one declaration.
const { readFileSync } = require('node:fs');
const Module = require('node:module');
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

/** Makes `require('@app/...')` load what tsconfig.json's paths name; returns the undo. */
function resolveAliases() {
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    return resolveFilename.call(this, Object.hasOwn(ALIASES, request) ? ALIASES[request] : request, ...rest);
  };
  return () => {
    Module._resolveFilename = resolveFilename;
  };
}

module.exports = { ROOT, ALIASES, swcOptions, resolveAliases };
