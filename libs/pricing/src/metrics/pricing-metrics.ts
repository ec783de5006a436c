import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import { PriceBookLoader } from '../snapshot/price-book-loader';
import { PastAnswers } from '../snapshot/past-answers';
import { PricingState } from '../snapshot/pricing-state';
import { PriceListAnswerCounts } from '../http/price-list-answer-counts';

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
    help: 'Public lists that did not render: the last list was kept, and the next check renders again.',
    registers: [this.registry],
  });
  private readonly lateWrites = new Counter({
    name: 'pricing_late_writes_total',
    help: 'Writes seen after their publication instant had passed a read that found the book settled: the list served since differs from its past.',
    registers: [this.registry],
  });
  private readonly refusedLoads = new Counter({
    name: 'pricing_refused_loads_total',
    help: "Loads refused because stored prices break the book's rules (written around them): the last good list was kept.",
    registers: [this.registry],
  });
  private readonly builds: Subscription;
  private readonly failures: Subscription;
  private readonly late: Subscription;
  private readonly refused: Subscription;

  constructor(loader: PriceBookLoader, prices: PricingState, answers: PriceListAnswerCounts, past: PastAnswers) {
    this.builds = loader.builds$.subscribe((seconds) => this.snapshotBuild.observe(seconds));
    this.failures = loader.renderFailures$.subscribe(() => this.renderFailures.inc());
    this.late = loader.lateWrites$.subscribe(() => this.lateWrites.inc());
    this.refused = loader.refusedLoads$.subscribe(() => this.refusedLoads.inc());
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
    new Gauge({
      name: 'pricing_past_answers_bytes',
      help: 'Bytes of prepared answers of the list’s past kept (/at documents and full /changes pages, every coding).',
      registers: [this.registry],
      collect() {
        this.set(past.keptBytes);
      },
    });
    new Counter({
      name: 'pricing_past_answers_prepared_total',
      help: 'Answers of the list’s past prepared (an /at document per version asked, a /changes page), kept or not.',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(past.preparedCount);
      },
    });
    new Gauge({
      name: 'pricing_list_prices',
      help: 'List prices in force: the prices GET /v1/pricing serves (0 while it answers 503).',
      registers: [this.registry],
      collect() {
        this.set(prices.priceList()?.priceCount ?? 0);
      },
    });
  }

  onModuleDestroy(): void {
    this.builds.unsubscribe();
    this.failures.unsubscribe();
    this.late.unsubscribe();
    this.refused.unsubscribe();
  }
}
