import { Injectable } from '@nestjs/common';
import { renderPriceList, type PriceListResponse } from '../rendering/price-list-response';
import { PricingState } from './pricing-state';

/** Past lists kept, the most recently asked first to stay. */
const KEPT = 64;
/** Requests for lists not kept that may wait for the one preparation under way; more are refused (503). */
const MAX_WAITING = 16;

/**
 * The public list as it was served at past instants (`GET /v1/pricing/at/{instant}`,
 * PricingService.priceListAsOf): prepared from the prices held in memory (PricingSnapshot.pastList),
 * one at a time per instance, serialized in slices and compressed off the event loop, and the
 * lists of recently asked instants kept. A list is kept under the instant from which it was served
 * unchanged, so every instant of that span shares it; once that instant is settled (no write in
 * progress can change the list there: PriceBookLoader) it is kept across changes of the book.
 */
@Injectable()
export class PastPriceLists {
  private readonly kept = new Map<string, Promise<PriceListResponse>>();
  private queue: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  constructor(private readonly state: PricingState) {}

  /**
   * The answers of the list as served at `at` (not after now); `undefined` when no prices can be
   * served, or too many lists are being prepared (the caller answers 503).
   */
  at(at: number): Promise<PriceListResponse> | undefined {
    const snapshot = this.state.current();
    if (!snapshot) return undefined;
    const from = snapshot.pastListKey(at);
    const key = from < this.state.settledBefore() ? `${snapshot.lineage}@${from}` : `${snapshot.version}v@${from}`;
    const kept = this.kept.get(key);
    if (kept) {
      this.kept.delete(key); // most recently asked: last to go
      this.kept.set(key, kept);
      return kept;
    }
    if (this.waiting >= MAX_WAITING) return undefined;
    this.waiting++;
    const prepared = this.queue.then(() => renderPriceList(snapshot.pastList(Number.isFinite(from) ? from : at)));
    this.queue = prepared.catch(() => undefined).finally(() => this.waiting--);
    this.kept.set(key, prepared);
    if (this.kept.size > KEPT) this.kept.delete(this.kept.keys().next().value!);
    prepared.catch(() => this.kept.delete(key));
    return prepared;
  }
}
