import { availableParallelism } from 'node:os';
import { database, shared } from './jest.shared.mjs';

// Two projects (docs/tests.md): `unit`, the specs beside the code and under test/support, which
// need nothing and run in seconds alone (`npm run test:unit`); `e2e`, the specs under test/ and
// test/cli/, against a real PostgreSQL that its global setup starts (or DATABASE_URL) with a
// migrated template database. Nothing is built first. `npm test` runs both.
/** @type {import('jest').Config} */
export default {
  testTimeout: 30_000,
  // Two workers per core (Jest's default leaves one core free): many e2e files spend seconds
  // waiting on timeouts, sockets and spawned processes, so four workers keep both cores busy.
  // Timing checks count CPU time or ratios, so they hold with the cores shared
  // (test/support/event-loop.ts, test/support/linear-time.ts).
  // At most 4: each e2e file opens pools on the one test PostgreSQL (max_connections 100). A
  // product, not '200%': Jest reads a percentage above 100 as a number of workers.
  maxWorkers: Math.min(2 * availableParallelism(), 4),
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
      roots: ['<rootDir>/test'],
      // test/redis, test/browser and test/deploy have suites of their own (jest.*.config.mjs).
      testRegex: '/test/(cli/)?[^/]+\\.e2e-spec\\.ts$',
    },
  ],
};
