// `npm run test:redis`: the shared rate limit against a real Redis (test/redis/*.redis-spec.ts),
// with the same transform and PostgreSQL global set-up as `npm test`, which never picks these up.
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  roots: ['<rootDir>/test'],
  testRegex: '/test/redis/[^/]+\\.redis-spec\\.ts$',
};
