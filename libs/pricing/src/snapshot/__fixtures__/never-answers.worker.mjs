// A price list worker that hangs (price-list-renderer.spec.ts, price-book-cache-render-failure.spec.ts):
// it takes every message and never answers; its listener keeps the thread alive.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', () => undefined);
