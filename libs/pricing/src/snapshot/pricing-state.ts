import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '@app/clock';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../options/pricing-options';
import { PriceBookLoader } from './price-book-loader';
import { PriceListSchedule, type ShownPrices } from './price-list-schedule';

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
 * readiness): the snapshot shown and its list at the clock's instant (PriceListSchedule), while
 * the database confirmed them within `maxStalenessS` (PriceBookLoader). While the database cannot
 * be read, what was loaded keeps being served, scheduled transitions included, up to that limit.
 *
 * Reading it is not free of effects, on purpose: when the list held has expired, `current()` (and
 * `health()`, which calls it) advances the schedule to the clock's instant
 * (`PriceListSchedule.advanceTo`): it swaps in the list prepared for that instant, or renders and
 * holds one when the clock passed every list prepared. A transition timer that fires late must
 * never let a request get an outdated list, and a list rendered on the spot is held rather than
 * rendered again for every request. Nothing else changes: no database read, no new snapshot.
 */
@Injectable()
export class PricingState {
  constructor(
    @Inject(PRICING_OPTIONS) private readonly options: ResolvedPricingOptions,
    private readonly loader: PriceBookLoader,
    private readonly schedule: PriceListSchedule,
    private readonly clock: Clock,
  ) {}

  /**
   * The prices shown and their list now, or `undefined` when none can be served (never loaded, or
   * too stale); advances the schedule to now first when its list expired (see the class).
   */
  current(): ShownPrices | undefined {
    if (this.loader.confirmedAgoMs() > this.options.maxStalenessS * 1000) return undefined;
    return this.schedule.advanceTo(this.clock.nowMs());
  }

  /** For readiness: whether prices can be served, and what the database looked like lately. */
  health(): PricingHealth {
    const version = this.schedule.snapshot?.version ?? null;
    const ago = version === null ? null : this.loader.confirmedAgoMs() / 1000;
    return {
      servable: this.current() !== undefined,
      databaseReachable: this.loader.databaseReachable,
      version,
      confirmedAgoS: ago === null ? null : Math.round(ago * 10) / 10,
    };
  }
}
