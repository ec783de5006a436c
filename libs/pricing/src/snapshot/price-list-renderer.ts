import { Logger } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Subject } from 'rxjs';
import { priceListResponse, renderPriceList, type PriceListResponse } from '../rendering/price-list-response';
import type { ListPriceHistory } from '../core/build-price-list';
import { runInSlices, type Steps } from './slices';
import {
  fromTransfer,
  toPlain,
  type FromWorker,
  type ToWorker,
  type TransferredPriceList,
} from './price-list-transfer';

/**
 * Lists with fewer prices render on the calling thread: a few milliseconds, less than handing
 * them to the worker. Larger ones render on the worker.
 */
export const INLINE_RENDER_MAX_PRICES = 1_000;
/** Records per message to the worker: cloning one part holds the event loop a few milliseconds. */
const RECORDS_PER_PART = 5_000;

/**
 * How long a render of `records` prices may take on the worker before the worker is ended: 10 s
 * plus 0.1 ms a price (20 s for 100,000). Measured here (2 cores, dist build, 100,000 prices,
 * history sent each time): 1.0-1.1 s idle, 2.1-4.2 s with both cores busy with other work.
 */
export function renderDeadlineMs(records: number): number {
  return 10_000 + records / 10;
}

/**
 * The worker's script: beside this file in the build (`dist/.../price-list-worker.js`). Under
 * Jest the sources run as TypeScript, which a worker thread cannot load: it runs the built
 * script then (the test setup builds first).
 */
export function workerScript(): string | undefined {
  return [
    join(__dirname, 'price-list-worker.js'),
    resolve(__dirname, '../../../../dist/libs/pricing/src/snapshot/price-list-worker.js'),
  ].find((file) => existsSync(file));
}

export interface PriceListRendererOptions {
  /** Lists with fewer prices render inline (INLINE_RENDER_MAX_PRICES). */
  readonly inlineBelow?: number;
  /** The worker's script, looked up each time a worker starts (workerScript). */
  readonly workerScript?: () => string | undefined;
  /** How long a render of this many prices may take on the worker (renderDeadlineMs). */
  readonly deadlineMs?: (records: number) => number;
}

/** Why a render on the worker failed: it overran its limit, or the worker failed. */
export type RenderFailure = 'timeout' | 'error';

/** A render that overran its limit on the worker: the worker was ended, nothing was rendered. */
export class PriceListRenderTimeoutError extends Error {
  constructor(records: number, limitMs: number) {
    super(
      `rendering ${records} prices on the price list worker overran its limit of ${Math.round(limitMs)} ms: ` +
        'the worker was ended, a new one starts with the next render',
    );
    this.name = PriceListRenderTimeoutError.name;
  }
}

/**
 * Renders the public price list (build, serialize, hash, gzip, brotli) off the event loop: a
 * large list on a worker thread (price-list-worker.ts), fed in parts between which the event
 * loop serves requests; the result comes back as transferred buffers, and only the header
 * objects are made here. A small list renders inline. When the worker cannot run (its script
 * missing, or it died), the list renders inline: late for the event loop, but never wrong.
 *
 * A render on the worker has a limit that grows with the list (renderDeadlineMs). One that
 * overruns it ends the worker and rejects with PriceListRenderTimeoutError, never rendering
 * inline: what hung the worker could hang the event loop. The caller keeps what it had.
 */
export class PriceListRenderer {
  private readonly logger = new Logger(PriceListRenderer.name);
  private worker: Worker | undefined;
  /** The history the worker holds, so that a render of it at another instant sends nothing again. */
  private workerHistory: { history: ListPriceHistory; id: number } | undefined;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (list: TransferredPriceList) => void; reject: (e: Error) => void }
  >();
  /** One render at a time on the worker, in order. */
  private queue: Promise<unknown> = Promise.resolve();
  private unavailable = false;
  private closed = false;
  private readonly inlineBelow: number;
  private readonly workerScript: () => string | undefined;
  private readonly deadlineMs: (records: number) => number;
  private readonly failed = new Subject<RenderFailure>();
  /** Each render on the worker that failed (for metrics): logged by whoever handles it. */
  readonly failures$ = this.failed.asObservable();

  constructor(options: PriceListRendererOptions = {}) {
    this.inlineBelow = options.inlineBelow ?? INLINE_RENDER_MAX_PRICES;
    this.workerScript = options.workerScript ?? workerScript;
    this.deadlineMs = options.deadlineMs ?? renderDeadlineMs;
  }

  /** The list at `instant`, rendered without holding the event loop long. */
  render(history: ListPriceHistory, instant: Date): Promise<PriceListResponse> {
    if (history.records.length < this.inlineBelow) return Promise.resolve(renderPriceList(history, instant));
    const rendered = this.queue.then(() => this.renderOnWorker(history, instant));
    this.queue = rendered.catch(() => undefined);
    return rendered;
  }

  /** Stops the worker; renders after this fail, and so does one under way. */
  async close(): Promise<void> {
    this.closed = true;
    this.failed.complete();
    const worker = this.worker;
    if (!worker) return;
    this.retire(worker, new Error('the price list renderer is closed'));
    await worker.terminate();
  }

  private async renderOnWorker(history: ListPriceHistory, instant: Date): Promise<PriceListResponse> {
    if (this.closed) throw new Error('the price list renderer is closed');
    const worker = this.startWorker();
    if (!worker) return renderPriceList(history, instant);
    const records = history.records.length;
    const limitMs = this.deadlineMs(records);
    let timer: NodeJS.Timeout | undefined;
    const overrun = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new PriceListRenderTimeoutError(records, limitMs);
        this.retire(worker, error);
        void worker.terminate(); // ends a worker busy in JavaScript too
        this.failed.next('timeout');
        reject(error);
      }, limitMs);
      timer.unref(); // as the worker: never what keeps the process alive
    });
    try {
      return await Promise.race([this.exchange(worker, history, instant), overrun]);
    } catch (error) {
      if (this.closed || error instanceof PriceListRenderTimeoutError) throw error;
      this.failed.next('error');
      this.logger.error(`rendering the price list on its worker failed, rendering inline: ${String(error)}`);
      return renderPriceList(history, instant);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The list rendered by `worker`, sent the history first unless it holds it already. */
  private async exchange(worker: Worker, history: ListPriceHistory, instant: Date): Promise<PriceListResponse> {
    if (this.workerHistory?.history !== history) {
      const id = this.nextId++;
      this.workerHistory = undefined;
      await runInSlices(sendHistory(worker, history, id));
      // A worker retired meanwhile took the history with it: the next one is sent it again.
      if (this.worker !== worker) throw new Error('the price list worker exited');
      this.workerHistory = { history, id };
    }
    if (this.worker !== worker) throw new Error('the price list worker exited');
    const id = this.nextId++;
    const encoded = new Promise<TransferredPriceList>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    post(worker, { kind: 'render', id, historyId: this.workerHistory.id, instantMs: instant.getTime() });
    return priceListResponse(fromTransfer(await encoded));
  }

  /** Forgets `worker` (when it is the current one) and fails what waits on it: the next render starts another. */
  private retire(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.workerHistory = undefined;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }

  private startWorker(): Worker | undefined {
    if (this.worker || this.unavailable) return this.worker;
    const script = this.workerScript();
    if (!script) {
      this.unavailable = true;
      this.logger.error('price-list-worker.js not found (build with `nest build`): rendering inline');
      return undefined;
    }
    const worker = new Worker(script, { name: 'price-list-render' });
    worker.unref(); // never what keeps the process alive
    worker.on('message', (reply: FromWorker) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if ('error' in reply) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.encoded);
    });
    worker.on('error', (error) => this.retire(worker, error));
    worker.on('exit', (code) => this.retire(worker, new Error(`the price list worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }
}

function post(worker: Worker, message: ToWorker): void {
  worker.postMessage(message);
}

/** The history in parts: cloning 100,000 records at once would hold the event loop for 100 ms and more. */
function* sendHistory(worker: Worker, history: ListPriceHistory, historyId: number): Steps<void> {
  const { records } = history;
  const { writes } = history;
  for (let start = 0; start === 0 || start < records.length; start += RECORDS_PER_PART) {
    const part = records.slice(start, start + RECORDS_PER_PART).map(toPlain);
    post(worker, { kind: 'history', historyId, first: start === 0, writes: start === 0 ? writes : [], records: part });
    yield;
  }
}
