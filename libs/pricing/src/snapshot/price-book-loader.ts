import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '@app/clock';
import { DatabaseConnection } from '@app/database';
import { performance } from 'node:perf_hooks';
import { filter, Subject, take, type Subscription } from 'rxjs';
import { PriceBookRepository } from '../database/price-book.repository';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../options/pricing-options';
import { PriceListSchedule } from './price-list-schedule';
import { PricingSnapshot } from './pricing-snapshot';

const RETRY_MS = 1_000;

/**
 * Loads the prices from the database and keeps them current: once the database is ready, on the
 * NOTIFY a price book change sends (PriceBookListener), and on a periodic version check that
 * catches lost notifications. A reload reads only the product keys written since the last one,
 * and is applied to the snapshot in slices. Each snapshot is shown through PriceListSchedule,
 * whose list it renders; what the database confirmed last, and when, is what PricingState judges
 * staleness by.
 *
 * A load whose list does not render (its worker overran its limit: PriceListRenderer) changes
 * nothing: the last list and its snapshot are served, and the next check, which finds the
 * version still differing, loads and renders again.
 */
@Injectable()
export class PriceBookLoader implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceBookLoader.name);
  /** performance.now() when the database last confirmed the snapshot shown (staleness is real time). */
  private confirmedAt = -Infinity;
  private reachable = false;
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
    private readonly schedule: PriceListSchedule,
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
    clearTimeout(this.checkTimer);
    this.builds.complete();
  }

  /** Resolves once every price was loaded for the first time, organizations' included. */
  loaded(): Promise<void> {
    return this.firstLoad;
  }

  /** Milliseconds since the database last confirmed the prices shown; Infinity before the first load. */
  confirmedAgoMs(): number {
    return performance.now() - this.confirmedAt;
  }

  /** Whether the last read of the database succeeded. */
  get databaseReachable(): boolean {
    return this.reachable;
  }

  /**
   * Reloads when the stored version differs from the one shown, otherwise confirms it. A call
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
      if (!this.reachable) this.scheduleCheck(RETRY_MS);
    });
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    try {
      const version = await this.repository.readVersion();
      const shown = this.schedule.snapshot;
      if (version === shown?.version && shown.hasOrganizationPrices) {
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
    let snapshot: PricingSnapshot;
    try {
      snapshot = await this.readSnapshot();
    } catch (error) {
      this.markReachable(false, error);
      return;
    }
    if (this.stopped) return;
    const readMs = performance.now() - startedAt;
    const shown = this.schedule.snapshot;
    try {
      await this.schedule.show(snapshot);
    } catch (error) {
      if (this.stopped) return;
      // The database was read: not an outage. Nothing is confirmed either, so staleness grows.
      this.markReachable(true);
      const held = shown ? `the list of version ${shown.version}` : 'nothing yet';
      this.logger.error(
        `the list of prices ${snapshot.version} did not render: ${(error as Error)?.message ?? String(error)}; ` +
          `serving ${held}, rendering again at the next check`,
      );
      return;
    }
    if (this.stopped) return;
    this.builds.next((performance.now() - startedAt) / 1000);
    this.confirmedAt = startedAt;
    this.markReachable(true);
    // The list prices shown first at start-up: organizations' prices are read next, at once.
    if (snapshot.hasOrganizationPrices) this.markLoaded();
    else this.checkAgain = true;
    const held = snapshot.hasOrganizationPrices ? 'records' : "list prices alone, organizations' next";
    this.logger.debug(
      `prices ${snapshot.version} loaded (${snapshot.recordCount} ${held}): read ${readMs.toFixed(0)} ms, ` +
        `list of ${snapshot.listHistory.records.length} listable prices rendered in ` +
        `${this.schedule.lastRenderDurationMs.toFixed(0)} ms`,
    );
  }

  /**
   * The snapshot shown with the changes since it (or everything, when they do not follow it). The
   * first read takes the list prices alone: the public list, list prices and availability are
   * served from them within seconds whatever the number of organizations' prices (a million
   * records take several seconds to read: docs/benchmarks.md, "A large price book"); the next
   * read, at once, takes everything, and only then are prices loaded (`loaded()`).
   */
  private async readSnapshot(): Promise<PricingSnapshot> {
    const shown = this.schedule.snapshot;
    if (shown?.hasOrganizationPrices) {
      const changes = await this.repository.loadChangesSince(shown.lastChangeId);
      const updated = await shown.withChanges(changes, this.clock.now());
      if (updated) return updated;
      this.logger.log(`changes since version ${shown.version} do not follow it: reading every price again`);
    }
    const data = await this.repository.loadPricingData({ listOnly: shown === undefined });
    return PricingSnapshot.build(data, this.clock.now());
  }

  private scheduleCheck(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => {
      void this.check().then(() =>
        this.scheduleCheck(this.schedule.snapshot && this.reachable ? this.checkIntervalMs() : RETRY_MS),
      );
    }, delayMs);
    this.checkTimer.unref();
  }

  /** Well inside the staleness limit, so that a reachable database keeps the list fresh. */
  private checkIntervalMs(): number {
    return Math.max(RETRY_MS, Math.min(30_000, (this.options.maxStalenessS * 1000) / 4));
  }

  private markReachable(reachable: boolean, error?: unknown): void {
    if (reachable !== this.reachable) {
      if (reachable) this.logger.log('prices loaded from the database');
      else
        this.logger.warn(
          `cannot read prices from the database: ${(error as Error)?.message ?? error}; serving the last loaded prices`,
        );
    }
    this.reachable = reachable;
  }
}
