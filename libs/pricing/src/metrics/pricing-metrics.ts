import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import type { PriceListResponse } from '../http/price-list-response';
import { countListPrices } from '../price-list/build-price-list';
import { PriceBookCache } from '../snapshot/price-book-cache';

/** The statuses GET /v1/pricing answers with: counted from the first scrape on, at 0. */
const PRICE_LIST_STATUSES = [200, 304, 405, 429, 503];

/** From a small book (milliseconds) to 100,000 prices read from a busy database (seconds). */
const SNAPSHOT_BUILD_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The pricing library's Prometheus metrics, in a registry of its own (one per app, so that two
 * apps in one process do not collide): the host app exposes `registry` (README, "Metrics").
 * Counting an answer is one Map update; the counter and the gauges are computed when scraped,
 * never on the request path.
 */
@Injectable()
export class PricingMetrics implements OnModuleDestroy {
  readonly registry = new Registry();
  /**
   * Answers by status, counted in a plain Map and handed to prom-client when scraped: its
   * Counter hashes the label set on every increment (a few hundred ns on the hot path).
   */
  private readonly responses = new Map<number, number>(PRICE_LIST_STATUSES.map((status) => [status, 0]));
  private readonly snapshotBuild = new Histogram({
    name: 'pricing_snapshot_build_seconds',
    help: 'Time to build the prices held in memory: read from the database, index and render the public list.',
    buckets: SNAPSHOT_BUILD_BUCKETS,
    registers: [this.registry],
  });
  private readonly builds: Subscription;
  /** The count of the last list scraped: a list changes far less often than it is scraped. */
  private counted: { readonly priceList: PriceListResponse; readonly count: number } | undefined;

  constructor(cache: PriceBookCache) {
    this.builds = cache.builds$.subscribe((seconds) => this.snapshotBuild.observe(seconds));
    const responses = this.responses;
    new Counter({
      name: 'pricing_price_list_responses_total',
      help: 'Answers of GET /v1/pricing, by HTTP status.',
      labelNames: ['status'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [status, count] of responses) this.inc({ status: String(status) }, count);
      },
    });
    new Gauge({
      name: 'pricing_snapshot_age_seconds',
      help: 'Seconds since the database last confirmed the prices held in memory (+Inf before the first load).',
      registers: [this.registry],
      collect() {
        this.set(cache.health().confirmedAgoS ?? Infinity);
      },
    });
    const listPrices = (): number => {
      const state = cache.current();
      if (!state) return 0; // GET /v1/pricing answers 503: no price is served
      if (this.counted?.priceList !== state.priceList) {
        const count = countListPrices(state.snapshot.listHistory, new Date(state.priceList.builtForMs));
        this.counted = { priceList: state.priceList, count };
      }
      return this.counted.count;
    };
    new Gauge({
      name: 'pricing_list_prices',
      help: 'List prices in force: the prices GET /v1/pricing serves (0 while it answers 503).',
      registers: [this.registry],
      collect() {
        this.set(listPrices());
      },
    });
  }

  /** Counts one answer of GET /v1/pricing. */
  countResponse(status: number): void {
    this.responses.set(status, (this.responses.get(status) ?? 0) + 1);
  }

  onModuleDestroy(): void {
    this.builds.unsubscribe();
  }
}
