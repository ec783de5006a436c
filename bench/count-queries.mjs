// Preloaded into the app by the benchmark (node --import): counts every query the app sends
// to PostgreSQL through `pg` (TypeORM's pool and the LISTEN connection both use pg.Client),
// and answers the benchmark's { type: 'query-count' } messages on the IPC channel.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const pg = createRequire(join(process.cwd(), 'package.json'))('pg');
let count = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  count++;
  return query.apply(this, args);
};

if (process.send) {
  process.on('message', (message) => {
    if (message?.type === 'query-count') process.send({ type: 'query-count', count });
  });
  process.channel?.unref();
}
