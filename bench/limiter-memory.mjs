// The in-memory rate limiter (FixedWindowLimiter, built) fed with many distinct client addresses
// within one window: the heap it holds, the clients it tracks and the time per hit. For contrast,
// @nestjs/throttler's default storage fed a quarter as many (it holds every one, and is slower a
// hit: the figure per address is what matters). Run by bench/run.mjs; by hand:
//   node --expose-gc bench/limiter-memory.mjs [addresses=1000000]
// Prints one line of JSON.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const requireFromRoot = createRequire(join(ROOT, 'package.json'));
const { FixedWindowLimiter, DEFAULT_MAX_TRACKED_CLIENTS } = requireFromRoot(
  join(ROOT, 'dist/libs/pricing/src/http/fixed-window-limiter.js'),
);
const { clientAddressKey } = requireFromRoot(join(ROOT, 'dist/libs/pricing/src/http/client-address.js'));
const { ThrottlerStorageService } = requireFromRoot('@nestjs/throttler');

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const ADDRESSES = Number(process.argv[2] ?? 1_000_000);
const LIMIT = 120; // the default: 120 requests per 60 s
const WINDOW_MS = 60_000;
/** One instant, in the middle of a window: every hit falls in the same window. */
const NOW_MS = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS + WINDOW_MS / 2;

/** Address number i: even ones IPv4, odd ones IPv6, each in a /64 of its own. */
function address(i) {
  if (i % 2 === 0) return `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
  return `2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}:0:0:0:1`;
}

function heapUsed() {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Feeds address i `hitsOf(i)` times, computing its key per request as the app does; returns what
 * is held after (the limiter and the keys it keeps) and the time per hit, key included.
 */
function feed(limiter, hitsOf) {
  const before = heapUsed();
  let hits = 0;
  const t = performance.now();
  for (let i = 0; i < ADDRESSES; i++) {
    for (let h = hitsOf(i); h > 0; h--, hits++) limiter.hit(clientAddressKey(address(i)), NOW_MS);
  }
  const ms = performance.now() - t;
  return { heapBytes: heapUsed() - before, size: limiter.size, usPerHit: (1000 * ms) / hits };
}

// The limiter's own time per hit, on keys made beforehand.
function limiterOnlyUsPerHit() {
  const keys = Array.from({ length: ADDRESSES }, (_, i) => clientAddressKey(address(i)));
  const limiter = new FixedWindowLimiter(LIMIT, WINDOW_MS);
  const t = performance.now();
  for (const key of keys) limiter.hit(key, NOW_MS);
  return (1000 * (performance.now() - t)) / ADDRESSES;
}

async function throttlerDefaultStorage(addresses) {
  const storage = new ThrottlerStorageService();
  const before = heapUsed();
  const t = performance.now();
  for (let i = 0; i < addresses; i++) {
    // ThrottlerGuard's default key: a SHA-256 of controller, handler, throttler and client.
    const key = createHash('sha256')
      .update(`PriceListController-getPriceList-default-${clientAddressKey(address(i))}`)
      .digest('hex');
    await storage.increment(key, WINDOW_MS, LIMIT, WINDOW_MS, 'default');
  }
  const ms = performance.now() - t;
  const result = {
    addresses,
    heapBytes: heapUsed() - before,
    size: storage.storage.size,
    usPerHit: (1000 * ms) / addresses,
  };
  storage.onApplicationShutdown(); // its sweep timer
  return result;
}

const result = {
  addresses: ADDRESSES,
  maxTracked: DEFAULT_MAX_TRACKED_CLIENTS,
  limit: LIMIT,
  windowS: WINDOW_MS / 1000,
  // Every address sends one request: all under the limit, the oldest forgotten at the bound.
  underLimit: feed(new FixedWindowLimiter(LIMIT, WINDOW_MS), () => 1),
  // Half the addresses (IPv4 and IPv6 alike) go over their limit (limit 1, two requests), half
  // stay under it (one request): both of the limiter's sets at their bound, its largest.
  overLimit: feed(new FixedWindowLimiter(1, WINDOW_MS), (i) => (i % 4 < 2 ? 2 : 1)),
  limiterOnlyUsPerHit: limiterOnlyUsPerHit(),
  throttlerDefaultStorage: await throttlerDefaultStorage(Math.ceil(ADDRESSES / 4)),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
