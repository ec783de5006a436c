// Jest 30 cannot require the ESM-only @nestjs/* 12 packages: @swc/jest compiles them, and our
// TypeScript, to CommonJS (legacy decorators with metadata, as Nest needs).
const swc = (syntax) => [
  '@swc/jest',
  {
    jsc: {
      parser: syntax === 'typescript' ? { syntax, decorators: true } : { syntax },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

/** @type {import('jest').Config} */
module.exports = {
  rootDir: '.',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/test'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testRegex: '\\.(spec|e2e-spec)\\.ts$',
  transform: { '^.+\\.ts$': swc('typescript'), '^.+\\.m?js$': swc('ecmascript') },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs)/)'],
  moduleNameMapper: {
    '^@app/(auth|clock|database|errors|pricing)$': '<rootDir>/libs/$1/src',
    '^@app/pricing/testing$': '<rootDir>/libs/pricing/src/testing',
    '^@app/pricing/cli$': '<rootDir>/libs/pricing/src/cli',
    '^@app/pricing/migrations$': '<rootDir>/libs/pricing/src/database/migrations',
    '^@app/control-plane$': '<rootDir>/apps/control-plane/src',
    '^@app/price-page$': '<rootDir>/apps/price-page/public/prices.mjs',
  },
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30_000,
};
