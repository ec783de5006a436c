// `npm run test:deploy`: the service behind nginx with deploy/nginx/pricing.conf
// (test/deploy/*.deploy-spec.ts), with the same transform and PostgreSQL global set-up as
// `npm test`, which never picks these specs up. Needs nginx (NGINX_PATH, else /usr/sbin/nginx).
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  roots: ['<rootDir>/test'],
  testRegex: '/test/deploy/[^/]+\\.deploy-spec\\.ts$',
};
