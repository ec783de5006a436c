// `npm run test:browser`: the price page in Chromium (test/browser/*.browser-spec.ts), with the
// same transform and PostgreSQL global set-up as `npm test`, which never picks these specs up.
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  roots: ['<rootDir>/test'],
  testRegex: '/test/browser/[^/]+\\.browser-spec\\.ts$',
  testTimeout: 60_000,
};
