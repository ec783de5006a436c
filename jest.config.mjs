import { database, shared } from './jest.shared.mjs';

// Two projects (docs/tests.md): `unit`, the specs beside the code and under test/support, which
// need nothing and run in seconds alone (`npm run test:unit`); `e2e`, the specs under test/ and
// the `*.built-spec.ts` ones beside the code that run dist/ (a worker's script), against a real
// PostgreSQL that its global setup starts (or DATABASE_URL) with a migrated template database,
// after building dist/. `npm test` runs both.
/** @type {import('jest').Config} */
export default {
  testTimeout: 30_000,
  // A worker per core (Jest's default leaves one free): the e2e files mostly wait on PostgreSQL
  // and sockets. Timing checks hold with both cores busy (test/support/linear-time.ts).
  maxWorkers: '100%',
  projects: [
    {
      ...shared,
      displayName: 'unit',
      roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/test'],
      testRegex: '\\.spec\\.ts$',
    },
    {
      ...shared,
      ...database,
      displayName: 'e2e',
      roots: ['<rootDir>/libs', '<rootDir>/test'],
      testRegex: ['/test/[^/]+\\.e2e-spec\\.ts$', '\\.built-spec\\.ts$'],
    },
  ],
};
