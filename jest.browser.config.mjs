// `npm run test:browser`: the price page in Chromium (test/browser/*.browser-spec.ts), with the
// same transform and PostgreSQL global set-up as `npm test`, which never picks these specs up.
import { database, shared } from './jest.shared.mjs';

/** @type {import('jest').Config} */
export default {
  ...shared,
  ...database,
  roots: ['<rootDir>/test'],
  testRegex: '/test/browser/[^/]+\\.browser-spec\\.ts$',
  testTimeout: 60_000,
};
