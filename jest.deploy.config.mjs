// `npm run test:deploy`: the service behind nginx with deploy/nginx/pricing.conf
// (test/deploy/*.deploy-spec.ts), with the same transform and PostgreSQL global set-up as
// `npm test`, which never picks these specs up. Needs nginx (NGINX_PATH, else /usr/sbin/nginx).
import { database, shared } from './jest.shared.mjs';

/** @type {import('jest').Config} */
export default {
  ...shared,
  ...database,
  testTimeout: 30_000,
  roots: ['<rootDir>/test'],
  testRegex: '/test/deploy/[^/]+\\.deploy-spec\\.ts$',
};
