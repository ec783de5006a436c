// A price list worker that hangs (snapshot/price-list-renderer.built-spec.ts,
// metrics/list-render-failure.built-spec.ts): it takes every message and never answers; its
// listener keeps the thread alive.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', () => undefined);
