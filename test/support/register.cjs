// `node --require ./test/support/register.cjs <file>.ts`: runs our TypeScript from source, as the
// tests start the service and the CLI (no build): each .ts file outside node_modules is compiled
// by swc when it is required, with Jest's compiler options, and @app/... resolves as tsconfig.json says
// (typescript.cjs). The @nestjs/* packages are ES modules that Node.js loads itself (require(esm)):
// only our own files need compiling.
//
// Written here rather than taken from @swc-node/register: that package derives its own options
// from tsconfig.json (class fields defined as ES2022 defines them, where Nest's build and Jest do
// not) and loads the TypeScript compiler in every process, which makes each start slower
// (docs/benchmarks.md, "The test suite"). This is pirates and @swc/core, both used by Jest
// already. Compiling is a small part of a process's start, so nothing is cached.
const { addHook } = require('pirates');
const { resolveAliases, swcOptions } = require('./typescript.cjs');

// No source maps, as `npm start` runs the build: each file parses smaller, and an error's stack
// costs no lookups (the service's hostile-input tests count its CPU per request).
const OPTIONS = { ...swcOptions('typescript'), sourceMaps: false, swcrc: false, configFile: false };

resolveAliases();
addHook((source, filename) => require('@swc/core').transformSync(source, { ...OPTIONS, filename }).code, {
  exts: ['.ts'],
});
