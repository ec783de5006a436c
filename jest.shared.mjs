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

/** What every Jest configuration shares: the compiler and the @app/... entry points. */
export const shared = {
  rootDir: '.',
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
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
};

/** The real PostgreSQL of the tests: started (or DATABASE_URL), with a migrated template database. */
export const database = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};
