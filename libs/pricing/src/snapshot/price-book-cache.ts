import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '@app/clock';
import { DatabaseConnection } from '@app/database';
import { performance } from 'node:perf_hooks';
import { filter, Subject, take, type Subscription } from 'rxjs';
import { PriceBookRepository } from '../database/price-book.repository';
import { renderPriceList, type PriceListResponse } from '../http/price-list-response';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../pricing.options';
import type { PricingHealth } from '../pricing.types';
import { PricingSnapshot } from './pricing-snapshot';

/** setTimeout holds at most 2^31-1 ms; a later transition is re-armed when this fires. */
const MAX_TIMER_MS = 2_147_483_647;
const RETRY_MS = 1_000;

export interface PricingState {
  readonly snapshot: PricingSnapshot;
  readonly priceList: PriceListResponse;
}

/**
 * Holds the prices in memory and keeps them current: the public price list is rendered here
 * once per change (a load, or a scheduled instant), never per request. It reloads on the
 * NOTIFY a price book change sends, and on a periodic version check that catches lost
 * notifications. While the database cannot be read it keeps serving what it has, scheduled
 * transitions included, for up to `maxStalenessS` since the database last confirmed it.
 */
@Injectable()
export class PriceBookCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceBookCache.name);
  private state: { snapshot: PricingSnapshot; priceList: PriceListResponse } | undefined;
  /** performance.now() when the database last confirmed the snapshot (staleness is real time). */
  private confirmedAt = -Infinity;
  private databaseReachable = false;
  private transitionTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private checkAgain = false;
  private stopped = false;
  private databaseReady: Subscription | undefined;
  private readonly firstLoad: Promise<void>;
  private markLoaded!: () => void;
  private readonly builds = new Subject<number>();
  /** Seconds each snapshot build took (read from the database, index, render): for metrics. */
  readonly builds$ = this.builds.asObservable();

  constructor(
    @Inject(PRICING_OPTIONS) private readonly options: ResolvedPricingOptions,
    private readonly repository: PriceBookRepository,
    private readonly database: DatabaseConnection,
    private readonly clock: Clock,
  ) {
    this.firstLoad = new Promise((resolve) => (this.markLoaded = resolve));
  }

  /** Starts checking for prices once the database is connected and migrated. */
  onApplicationBootstrap(): void {
    this.databaseReady = this.database.state$
      .pipe(
        filter((state) => state === 'ready'),
        take(1),
      )
      .subscribe(() => this.scheduleCheck(0));
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    this.databaseReady?.unsubscribe();
    clearTimeout(this.transitionTimer);
    clearTimeout(this.checkTimer);
    this.builds.complete();
  }

  /** Resolves once prices were loaded for the first time. */
  loaded(): Promise<void> {
    return this.firstLoad;
  }

  /** The current prices, or `undefined` when none can be served (never loaded, or too stale). */
  current(): PricingState | undefined {
    const state = this.state;
    if (!state || performance.now() - this.confirmedAt > this.options.maxStalenessS * 1000) return undefined;
    const now = this.clock.nowMs();
    if (now >= state.priceList.expiresAtMs || now < state.priceList.builtForMs) this.render(state.snapshot);
    return this.state;
  }

  /** For readiness: whether prices can be served, and what the database looked like lately. */
  health(): PricingHealth {
    const ago = this.state ? (performance.now() - this.confirmedAt) / 1000 : null;
    return {
      servable: this.current() !== undefined,
      databaseReachable: this.databaseReachable,
      version: this.state?.snapshot.version ?? null,
      confirmedAgoS: ago === null ? null : Math.round(ago * 10) / 10,
    };
  }

  /**
   * Reloads when the stored version differs from the one held, otherwise confirms it. A call
   * during a running check makes it run once more, so a change committed meanwhile is seen. A
   * check that failed, whoever asked for it (a NOTIFY that met a dead pool connection), is tried
   * again within a second, not at the next interval.
   */
  check(): Promise<void> {
    if (this.checking) {
      this.checkAgain = true;
      return this.checking;
    }
    this.checking = (async () => {
      do {
        this.checkAgain = false;
        await this.checkOnce();
      } while (this.checkAgain && !this.stopped);
    })().finally(() => {
      this.checking = undefined;
      if (!this.databaseReachable) this.scheduleCheck(RETRY_MS);
    });
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    try {
      const version = await this.repository.readVersion();
      if (this.state && version === this.state.snapshot.version) {
        this.confirmedAt = performance.now();
        this.markReachable(true);
        return;
      }
      await this.load();
    } catch (error) {
      this.markReachable(false, error);
    }
  }

  private async load(): Promise<void> {
    const startedAt = performance.now();
    try {
      const data = await this.repository.loadPricingData();
      if (this.stopped) return;
      this.render(new PricingSnapshot(data));
      this.builds.next((performance.now() - startedAt) / 1000);
      this.confirmedAt = startedAt;
      this.markReachable(true);
      this.markLoaded();
    } catch (error) {
      this.markReachable(false, error);
    }
  }

  private render(snapshot: PricingSnapshot): void {
    const priceList = renderPriceList(snapshot.listHistory, this.clock.now());
    this.state = { snapshot, priceList };
    this.armTransitionTimer(priceList.expiresAtMs);
  }

  /** Re-renders at the next scheduled instant, without a database read. */
  private armTransitionTimer(expiresAtMs: number): void {
    clearTimeout(this.transitionTimer);
    if (this.stopped || expiresAtMs === Infinity) return;
    const delay = Math.min(Math.max(expiresAtMs - this.clock.nowMs(), 0), MAX_TIMER_MS);
    this.transitionTimer = setTimeout(() => {
      if (this.state) this.render(this.state.snapshot);
    }, delay);
    this.transitionTimer.unref();
  }

  private scheduleCheck(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => {
      void this.check().then(() =>
        this.scheduleCheck(this.state && this.databaseReachable ? this.checkIntervalMs() : RETRY_MS),
      );
    }, delayMs);
    this.checkTimer.unref();
  }

  /** Well inside the staleness limit, so that a reachable database keeps the list fresh. */
  private checkIntervalMs(): number {
    return Math.max(RETRY_MS, Math.min(30_000, (this.options.maxStalenessS * 1000) / 4));
  }

  private markReachable(reachable: boolean, error?: unknown): void {
    if (reachable !== this.databaseReachable) {
      if (reachable) this.logger.log('prices loaded from the database');
      else
        this.logger.warn(
          `cannot read prices from the database: ${(error as Error)?.message ?? error}; serving the last loaded prices`,
        );
    }
    this.databaseReachable = reachable;
  }
}
