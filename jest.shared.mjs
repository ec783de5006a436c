import typescript from './test/support/typescript.cjs';

const { ALIASES, swcOptions } = typescript;

// Jest 30 cannot require the ESM-only @nestjs/* 12 packages: @swc/jest compiles them, and our
// TypeScript, to CommonJS, with the options the processes the tests start use (test/support/typescript.cjs).
const swc = (syntax) => ['@swc/jest', swcOptions(syntax)];

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What every Jest configuration shares: the compiler and the @app/... entry points of tsconfig.json. */
export const shared = {
  rootDir: '.',
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  transform: { '^.+\\.ts$': swc('typescript'), '^.+\\.m?js$': swc('ecmascript') },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs)/)'],
  moduleNameMapper: Object.fromEntries(
    Object.entries(ALIASES).map(([alias, target]) => [`^${escapeRegExp(alias)}$`, target]),
  ),
  testEnvironment: 'node',
};

/** The real PostgreSQL of the tests: started (or DATABASE_URL), with a migrated template database. */
export const database = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};
