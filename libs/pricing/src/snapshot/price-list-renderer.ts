import { Logger } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { priceListResponse, renderPriceList, type PriceListResponse } from '../http/price-list-response';
import type { ListPriceHistory } from '../price-list/build-price-list';
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
 * The worker's script: beside this file in the build (`dist/.../price-list-worker.js`). Under
 * Jest the sources run as TypeScript, which a worker thread cannot load: it runs the built
 * script then (the test setup builds first).
 */
function workerScript(): string | undefined {
  return [
    join(__dirname, 'price-list-worker.js'),
    resolve(__dirname, '../../../../dist/libs/pricing/src/snapshot/price-list-worker.js'),
  ].find((file) => existsSync(file));
}

/**
 * Renders the public price list (build, serialize, hash, gzip, brotli) off the event loop: a
 * large list on a worker thread (price-list-worker.ts), fed in parts between which the event
 * loop serves requests; the result comes back as transferred buffers, and only the header
 * objects are made here. A small list renders inline. When the worker cannot run (its script
 * missing, or it died), the list renders inline: late for the event loop, but never wrong.
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

  constructor(private readonly inlineBelow = INLINE_RENDER_MAX_PRICES) {}

  /** The list at `instant`, rendered without holding the event loop long. */
  render(history: ListPriceHistory, instant: Date): Promise<PriceListResponse> {
    if (history.records.length < this.inlineBelow) return Promise.resolve(renderPriceList(history, instant));
    const rendered = this.queue.then(() => this.renderOnWorker(history, instant));
    this.queue = rendered.catch(() => undefined);
    return rendered;
  }

  /** Stops the worker; renders after this fail. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private async renderOnWorker(history: ListPriceHistory, instant: Date): Promise<PriceListResponse> {
    if (this.closed) throw new Error('the price list renderer is closed');
    const worker = this.startWorker();
    if (!worker) return renderPriceList(history, instant);
    try {
      if (this.workerHistory?.history !== history) {
        const id = this.nextId++;
        this.workerHistory = undefined;
        await runInSlices(sendHistory(worker, history, id));
        this.workerHistory = { history, id };
      }
      if (this.worker !== worker) throw new Error('the price list worker exited');
      const id = this.nextId++;
      const encoded = new Promise<TransferredPriceList>((resolve, reject) => this.pending.set(id, { resolve, reject }));
      post(worker, { kind: 'render', id, historyId: this.workerHistory.id, instantMs: instant.getTime() });
      return priceListResponse(fromTransfer(await encoded));
    } catch (error) {
      if (this.closed) throw error;
      this.logger.error(`rendering the price list on its worker failed, rendering inline: ${String(error)}`);
      return renderPriceList(history, instant);
    }
  }

  private startWorker(): Worker | undefined {
    if (this.worker || this.unavailable) return this.worker;
    const script = workerScript();
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
    const fail = (error: Error): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.workerHistory = undefined;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the price list worker exited with code ${code}`)));
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
  const writes = history.writes.map((w) => w.getTime());
  for (let start = 0; start === 0 || start < records.length; start += RECORDS_PER_PART) {
    const part = records.slice(start, start + RECORDS_PER_PART).map(toPlain);
    post(worker, { kind: 'history', historyId, first: start === 0, writes: start === 0 ? writes : [], records: part });
    yield;
  }
}
