// `npm run test:redis`: the shared rate limit against a real Redis (test/redis/*.redis-spec.ts),
// with the same transform and PostgreSQL global set-up as `npm test`, which never picks these up.
import { database, shared } from './jest.shared.mjs';

/** @type {import('jest').Config} */
export default {
  ...shared,
  ...database,
  testTimeout: 30_000,
  roots: ['<rootDir>/test'],
  testRegex: '/test/redis/[^/]+\\.redis-spec\\.ts$',
};
