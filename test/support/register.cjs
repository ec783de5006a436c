// `node --require ./test/support/register.cjs <file>.ts`: runs our TypeScript from source, as the
// tests start the service and the CLI (no build): each .ts file outside node_modules is compiled
// by swc when it is required, with Jest's options, and @app/... resolves as tsconfig.json says
// (typescript.cjs). The @nestjs/* packages are ES modules that Node.js loads itself (require(esm)):
// only our own files need compiling.
//
// Written here rather than taken from @swc-node/register: that package derives its own options
// from tsconfig.json (class fields defined as ES2022 defines them, where Nest's build and Jest do
// not), loads the TypeScript compiler in every process, and made each start of the CLI about a
// third of a second slower here. This is pirates and @swc/core, both used by Jest already.
// Compiling is not what a start costs (under a millisecond a file), so nothing is cached.
const { addHook } = require('pirates');
const { resolveAliases, swcOptions } = require('./typescript.cjs');

const OPTIONS = { ...swcOptions('typescript'), swcrc: false, configFile: false };

resolveAliases();
addHook((source, filename) => require('@swc/core').transformSync(source, { ...OPTIONS, filename }).code, {
  exts: ['.ts'],
});
process.setSourceMapsEnabled(true); // stack traces name the lines of the .ts files
