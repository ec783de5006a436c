import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { renderPriceList } from '../rendering/price-list-response';
import type { ListPriceHistory } from '../core/build-price-list';
import { priceRecord } from '../core/price-record.fixture';
import {
  PriceListRenderer,
  PriceListRenderTimeoutError,
  workerScript,
  type PriceListRendererOptions,
  type RenderFailure,
} from './price-list-renderer';

// The worker runs the built script (dist/): the Jest global setup builds first.

const history = (count: number): ListPriceHistory => ({
  records: Array.from({ length: count }, (_, i) =>
    priceRecord({
      productKey: `compute.g${i % 7}.${i}`,
      unitType: 'seconds',
      unitCount: 3600,
      amount: `0.${String(i + 1).padStart(4, '0')}`,
      validFrom: '2026-01-01T00:00:00Z',
      validUntil: i % 3 === 0 ? '2026-07-01T00:00:00Z' : null,
    }),
  ),
  writes: [Date.parse('2025-12-01T00:00:00Z'), Date.parse('2026-09-01T00:00:00.002Z')],
});

/** A list with its bodies as digests: Jest compares large buffers byte by byte, slowly. */
function comparable(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return createHash('sha256').update(value).digest('hex');
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, comparable(field)]));
}

describe('PriceListRenderer', () => {
  const renderers: PriceListRenderer[] = [];
  const renderer = (inlineBelow: number): PriceListRenderer => {
    const created = new PriceListRenderer({ inlineBelow });
    renderers.push(created);
    return created;
  };

  afterAll(async () => {
    for (const created of renderers) await created.close();
  });

  it('on its worker: the same bytes, tag, headers and instants as rendering inline', async () => {
    const onWorker = renderer(0);
    const book = history(12_345); // more than one part sent to the worker
    for (const at of ['2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z', '2026-10-01T00:00:00Z']) {
      const instant = new Date(at);
      expect(comparable(await onWorker.render(book, instant))).toEqual(comparable(renderPriceList(book, instant)));
    }
  });

  it('inline below its threshold: the very list renderPriceList gives', async () => {
    const book = history(10);
    const instant = new Date('2026-06-01T00:00:00Z');
    expect(await renderer(11).render(book, instant)).toEqual(renderPriceList(book, instant));
  });

  it('renders one request after the other, each with its own history', async () => {
    const onWorker = renderer(0);
    const instant = new Date('2026-06-01T00:00:00Z');
    const books = [history(5), history(40), history(5), history(0)];
    const lists = await Promise.all(books.map((book) => onWorker.render(book, instant)));
    lists.forEach((list, i) => expect(list.body.equals(renderPriceList(books[i], instant).body)).toBe(true));
  });

  it('refuses to render once closed', async () => {
    const onWorker = renderer(0);
    await onWorker.render(history(1), new Date('2026-06-01T00:00:00Z'));
    await onWorker.close();
    await expect(onWorker.render(history(1), new Date('2026-06-01T00:00:00Z'))).rejects.toThrow('closed');
  });
});

/** Worker scripts that hang (__fixtures__/): one takes messages and never answers, one never takes them. */
const NEVER_ANSWERS = join(__dirname, '__fixtures__/never-answers.worker.mjs');
const BUSY_LOOP = join(__dirname, '__fixtures__/busy-loop.worker.mjs');
const FAILS_AT_START = join(__dirname, '__fixtures__/fails-at-start.worker.mjs');
const DEADLINE_MS = 400;

/** Resolves once `worker` has ended (its thread id is -1 from then on), or rejects after `ms`. */
function ended(worker: Worker, ms = 5_000): Promise<void> {
  if (worker.threadId === -1) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${worker.threadId} still running after ${ms} ms`)), ms);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe('PriceListRenderer with a worker that hangs', () => {
  /** The workers messages were posted to, in order: the renderer's workers. */
  let posted: jest.SpyInstance;
  const workers = (): Worker[] => [...new Set(posted.mock.contexts as Worker[])];
  let script: string | undefined;
  let failures: RenderFailure[];
  let onWorker: PriceListRenderer;

  function watched(options: PriceListRendererOptions = {}): PriceListRenderer {
    onWorker = new PriceListRenderer({ inlineBelow: 0, workerScript: () => script, ...options });
    onWorker.failures$.subscribe((reason) => failures.push(reason));
    return onWorker;
  }

  beforeEach(() => {
    posted = jest.spyOn(Worker.prototype, 'postMessage');
    failures = [];
  });

  afterEach(async () => {
    await onWorker.close();
    posted.mockRestore();
  });

  it.each([
    ['takes messages and never answers', NEVER_ANSWERS],
    ['loops forever, never taking a message', BUSY_LOOP],
  ])(
    'a worker that %s: the render rejects at its limit, the worker is ended, the next render runs on a new one',
    async (_, hanging) => {
      script = hanging;
      const limits: number[] = [];
      watched({ deadlineMs: (records) => (limits.push(records), DEADLINE_MS) });
      const instant = new Date('2026-06-01T00:00:00Z');

      const book = history(5);
      const startedAt = performance.now();
      const failed = onWorker.render(book, instant);
      await expect(failed).rejects.toThrow(PriceListRenderTimeoutError);
      await expect(failed).rejects.toThrow(`rendering 5 prices on the price list worker overran its limit of 400 ms`);
      const tookMs = performance.now() - startedAt;
      expect(tookMs).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
      expect(tookMs).toBeLessThan(DEADLINE_MS + 1_000);
      expect(limits).toEqual([5]); // the limit of the prices handed to the worker
      expect(failures).toEqual(['timeout']);
      const [hung] = workers();
      await ended(hung);

      script = workerScript(); // the built price-list-worker.js
      const list = await onWorker.render(book, instant); // the same history: sent to the new worker again
      expect(list.body.equals(renderPriceList(book, instant).body)).toBe(true);
      expect(workers()).toHaveLength(2);
      expect(workers()[1]).not.toBe(hung);
      expect(failures).toEqual(['timeout']);
    },
  );

  it('a render queued behind one that hangs runs on a new worker once that one is ended', async () => {
    script = NEVER_ANSWERS;
    watched({ deadlineMs: () => DEADLINE_MS });
    const instant = new Date('2026-06-01T00:00:00Z');
    const first = onWorker.render(history(3), instant);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first worker started
    script = workerScript();
    const second = onWorker.render(history(4), instant);
    await expect(first).rejects.toThrow('overran its limit');
    expect((await second).body.equals(renderPriceList(history(4), instant).body)).toBe(true);
    expect(workers()).toHaveLength(2);
    expect(failures).toEqual(['timeout']);
  });

  it('closing while a render hangs ends the worker and rejects the render at once, not at its limit', async () => {
    script = NEVER_ANSWERS;
    watched({ deadlineMs: () => 60_000 });
    const startedAt = performance.now();
    const hanging = onWorker.render(history(3), new Date('2026-06-01T00:00:00Z'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await onWorker.close();
    await expect(hanging).rejects.toThrow('closed');
    expect(performance.now() - startedAt).toBeLessThan(5_000);
    await ended(workers()[0]);
    expect(failures).toEqual([]);
  });

  it('a worker that fails renders inline, counted as an error, and the next render starts another worker', async () => {
    script = FAILS_AT_START;
    watched();
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const instant = new Date('2026-06-01T00:00:00Z');
    expect((await onWorker.render(history(3), instant)).body.equals(renderPriceList(history(3), instant).body)).toBe(
      true,
    );
    expect(failures).toEqual(['error']);
    expect(logged.mock.calls).toEqual([
      [expect.stringMatching(/^rendering the price list on its worker failed, rendering inline: .*fails as it starts/)],
    ]);
    logged.mockRestore();
    script = workerScript();
    expect((await onWorker.render(history(2), instant)).body.equals(renderPriceList(history(2), instant).body)).toBe(
      true,
    );
    expect(workers()).toHaveLength(2);
    expect(failures).toEqual(['error']);
  });
});
