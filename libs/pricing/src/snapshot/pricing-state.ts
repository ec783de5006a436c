import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '@app/clock';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../options/pricing-options';
import type { PriceListResponse } from '../rendering/price-list-response';
import { PriceBookLoader } from './price-book-loader';
import type { PricingSnapshot } from './pricing-snapshot';

/** The state of the prices held in memory, for readiness probes. */
export interface PricingHealth {
  /** Whether the price list can be served now. */
  readonly servable: boolean;
  /** Whether the last read of the database succeeded. */
  readonly databaseReachable: boolean;
  /** The price book version held, `null` before the first load. */
  readonly version: string | null;
  /** Seconds since the database last confirmed the prices held. */
  readonly confirmedAgoS: number | null;
}

/**
 * What is served now, for everything that reads prices (the controller, PricingService, metrics,
 * readiness): the snapshot the loader shows, while the database confirmed it within
 * `maxStalenessS`. While the database cannot be read, the last snapshot keeps being served, its
 * scheduled transitions included, up to that limit. Reading has no effects.
 */
@Injectable()
export class PricingState {
  constructor(
    @Inject(PRICING_OPTIONS) private readonly options: ResolvedPricingOptions,
    private readonly loader: PriceBookLoader,
    private readonly clock: Clock,
  ) {}

  /** The prices served now, or `undefined` when none can be (never loaded, or too stale). */
  current(): PricingSnapshot | undefined {
    return this.loader.confirmedAgoMs() > this.options.maxStalenessS * 1000 ? undefined : this.loader.snapshot;
  }

  /** The answers of `GET /v1/pricing` now, or `undefined` when no list can be served. */
  priceList(): PriceListResponse | undefined {
    return this.current()?.priceListAt(this.clock.nowMs());
  }

  /** Epoch ms before which every change of the list is in the snapshot for good (PriceBookLoader). */
  settledBefore(): number {
    return this.loader.settledBefore;
  }

  /** For readiness: whether prices can be served, and what the database looked like lately. */
  health(): PricingHealth {
    const version = this.loader.snapshot?.version ?? null;
    const ago = version === null ? null : this.loader.confirmedAgoMs() / 1000;
    return {
      servable: this.current() !== undefined,
      databaseReachable: this.loader.databaseReachable,
      version,
      confirmedAgoS: ago === null ? null : Math.round(ago * 10) / 10,
    };
  }
}
