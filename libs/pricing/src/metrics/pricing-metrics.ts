import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import type { PriceListResponse } from '../rendering/price-list-response';
import { countListPrices } from '../core/build-price-list';
import { PriceBookLoader } from '../snapshot/price-book-loader';
import { PriceListRenderer, type RenderFailure } from '../snapshot/price-list-renderer';
import { PricingState } from '../snapshot/pricing-state';
import { PriceListAnswerCounts } from '../http/price-list-answer-counts';

/** Why a render of the list on its worker failed (PriceListRenderer): counted from the start, at 0. */
const RENDER_FAILURE_REASONS: readonly RenderFailure[] = ['timeout', 'error'];

/** From a small book (milliseconds) to 100,000 prices read from a busy database (seconds). */
const SNAPSHOT_BUILD_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The pricing library's Prometheus metrics, in a registry of its own (one per app, so that two
 * apps in one process do not collide): the host app exposes `registry` (docs/operations.md, "Metrics").
 * The counter and the gauges are computed when scraped, never on the request path.
 */
@Injectable()
export class PricingMetrics implements OnModuleDestroy {
  readonly registry = new Registry();
  private readonly snapshotBuild = new Histogram({
    name: 'pricing_snapshot_build_seconds',
    help: 'Time to build the prices held in memory: read from the database, index and render the public list.',
    buckets: SNAPSHOT_BUILD_BUCKETS,
    registers: [this.registry],
  });
  private readonly renderFailures = new Counter({
    name: 'pricing_price_list_render_failures_total',
    help:
      'Renders of the public list on its worker thread that failed, by reason: timeout (overran its limit: ' +
      'the worker was ended, the last list kept), error (the worker failed: rendered inline instead).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly builds: Subscription;
  private readonly failures: Subscription;
  /** The count of the last list scraped: a list changes far less often than it is scraped. */
  private counted: { readonly priceList: PriceListResponse; readonly count: number } | undefined;

  constructor(
    loader: PriceBookLoader,
    prices: PricingState,
    renderer: PriceListRenderer,
    answers: PriceListAnswerCounts,
  ) {
    this.builds = loader.builds$.subscribe((seconds) => this.snapshotBuild.observe(seconds));
    for (const reason of RENDER_FAILURE_REASONS) this.renderFailures.inc({ reason }, 0);
    this.failures = renderer.failures$.subscribe((reason) => this.renderFailures.inc({ reason }));
    new Counter({
      name: 'pricing_price_list_responses_total',
      help: 'Answers of GET /v1/pricing, by HTTP status.',
      labelNames: ['status'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [status, count] of answers.byStatus()) this.inc({ status: String(status) }, count);
      },
    });
    new Gauge({
      name: 'pricing_snapshot_age_seconds',
      help: 'Seconds since the database last confirmed the prices held in memory (+Inf before the first load).',
      registers: [this.registry],
      collect() {
        this.set(prices.health().confirmedAgoS ?? Infinity);
      },
    });
    const listPrices = (): number => {
      const state = prices.current();
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

  onModuleDestroy(): void {
    this.builds.unsubscribe();
    this.failures.unsubscribe();
  }
}
