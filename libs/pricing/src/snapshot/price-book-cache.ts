import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '@app/clock';
import { DatabaseConnection } from '@app/database';
import { performance } from 'node:perf_hooks';
import { filter, Subject, take, type Subscription } from 'rxjs';
import { PriceBookRepository } from '../database/price-book.repository';
import { renderPriceList, type PriceListResponse } from '../http/price-list-response';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../pricing.options';
import type { PricingHealth } from '../pricing.types';
import { INLINE_RENDER_MAX_PRICES, PriceListRenderer } from './price-list-renderer';
import { PricingSnapshot } from './pricing-snapshot';

/** setTimeout holds at most 2^31-1 ms; a later transition is re-armed when this fires. */
const MAX_TIMER_MS = 2_147_483_647;
const RETRY_MS = 1_000;
/**
 * The list for a scheduled instant is rendered this long ahead of it (or four times the last
 * render, when longer), and swapped in at the instant.
 */
const PREPARE_AHEAD_MS = 5_000;
/** A transition passing while the list renders is rendered again, at most this many times. */
const MAX_RENDER_ATTEMPTS = 3;

export interface PricingState {
  readonly snapshot: PricingSnapshot;
  readonly priceList: PriceListResponse;
}

interface HeldState extends PricingState {
  /** The list from `priceList.expiresAtMs` on, rendered ahead of that instant. */
  readonly next?: PriceListResponse;
}

/** Whether `list` is the list at `nowMs`. */
function covers(list: PriceListResponse, nowMs: number): boolean {
  return list.builtForMs <= nowMs && nowMs < list.expiresAtMs;
}

/**
 * Holds the prices in memory and keeps them current: the public price list is rendered here
 * once per change (a load, or a scheduled instant), never per request, and off the event loop
 * (PriceListRenderer; a load is applied to the snapshot in slices). It reloads on the NOTIFY a
 * price book change sends, and on a periodic version check that catches lost notifications;
 * a reload reads only the product keys written since the last one. While the database cannot
 * be read it keeps serving what it has, scheduled transitions included, for up to
 * `maxStalenessS` since the database last confirmed it.
 *
 * A scheduled transition is never served late: the list for its instant is rendered a few
 * seconds ahead and swapped in by a timer at the instant, or by the first request at or after
 * it. When a request finds the clock past every list held (a clock that jumped), the list is
 * rendered for it on the spot, inline.
 */
@Injectable()
export class PriceBookCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceBookCache.name);
  private readonly renderer = new PriceListRenderer();
  private state: HeldState | undefined;
  /** performance.now() when the database last confirmed the snapshot (staleness is real time). */
  private confirmedAt = -Infinity;
  private databaseReachable = false;
  private transitionTimer: NodeJS.Timeout | undefined;
  /** The state whose next list is being rendered. */
  private preparing: HeldState | undefined;
  private lastRenderMs = 0;
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

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.databaseReady?.unsubscribe();
    clearTimeout(this.transitionTimer);
    clearTimeout(this.checkTimer);
    this.builds.complete();
    await this.renderer.close();
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
    if (!covers(state.priceList, now)) this.catchUp(state, now);
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
    let snapshot: PricingSnapshot;
    try {
      snapshot = await this.readSnapshot();
    } catch (error) {
      this.markReachable(false, error);
      return;
    }
    if (this.stopped) return;
    const readMs = performance.now() - startedAt;
    const lists = await this.renderFor(snapshot);
    if (this.stopped) return;
    this.setState({ snapshot, ...lists });
    this.builds.next((performance.now() - startedAt) / 1000);
    this.confirmedAt = startedAt;
    this.markReachable(true);
    this.markLoaded();
    this.logger.debug(
      `prices ${snapshot.version} loaded: read ${readMs.toFixed(0)} ms, list of ` +
        `${snapshot.listHistory.records.length} listable prices rendered in ${this.lastRenderMs.toFixed(0)} ms`,
    );
  }

  /** The held snapshot with the changes since it (or everything, when they do not follow it). */
  private async readSnapshot(): Promise<PricingSnapshot> {
    const held = this.state?.snapshot;
    if (held) {
      const changes = await this.repository.loadChangesSince(held.lastChangeId);
      const updated = await held.withChanges(changes, this.clock.now());
      if (updated) return updated;
      this.logger.log(`changes since version ${held.version} do not follow it: reading every price again`);
    }
    return PricingSnapshot.build(await this.repository.loadPricingData(), this.clock.now());
  }

  /**
   * The list of `snapshot` at the instant it is swapped in and, when its next transition is
   * close, the list from then on too, so that the transition is not rendered late.
   */
  private async renderFor(snapshot: PricingSnapshot): Promise<Omit<HeldState, 'snapshot'>> {
    let priceList = await this.render(snapshot, this.clock.now());
    for (let attempt = 1; attempt < MAX_RENDER_ATTEMPTS && !covers(priceList, this.clock.nowMs()); attempt++) {
      priceList = await this.render(snapshot, this.clock.now());
    }
    if (priceList.expiresAtMs - this.clock.nowMs() > this.prepareAheadMs()) return { priceList };
    return { priceList, next: await this.render(snapshot, new Date(priceList.expiresAtMs)) };
  }

  private async render(snapshot: PricingSnapshot, instant: Date): Promise<PriceListResponse> {
    const startedAt = performance.now();
    const list = await this.renderer.render(snapshot.listHistoryAt(instant), instant);
    this.lastRenderMs = performance.now() - startedAt;
    return list;
  }

  private prepareAheadMs(): number {
    return Math.max(PREPARE_AHEAD_MS, 4 * this.lastRenderMs);
  }

  private setState(state: HeldState): void {
    this.state = state;
    this.armTransitionTimer();
  }

  /** The list at `nowMs`: the one prepared for it, else rendered now, inline. */
  private catchUp(state: HeldState, nowMs: number): void {
    let priceList = state.next;
    if (!priceList || !covers(priceList, nowMs)) {
      const instant = new Date(nowMs);
      const history = state.snapshot.listHistoryAt(instant);
      if (history.records.length >= INLINE_RENDER_MAX_PRICES)
        this.logger.warn(`the clock passed every list prepared: rendering ${history.records.length} prices inline`);
      priceList = renderPriceList(history, instant);
    }
    this.setState({ snapshot: state.snapshot, priceList });
  }

  /**
   * Wakes up ahead of the next scheduled instant to render the list from then on, and at the
   * instant to swap it in, without a database read.
   */
  private armTransitionTimer(): void {
    clearTimeout(this.transitionTimer);
    const state = this.state;
    if (this.stopped || !state || state.priceList.expiresAtMs === Infinity) return;
    const ready = state.next !== undefined || this.preparing === state;
    const wakeAt = state.priceList.expiresAtMs - (ready ? 0 : this.prepareAheadMs());
    const delay = Math.min(Math.max(wakeAt - this.clock.nowMs(), 0), MAX_TIMER_MS);
    this.transitionTimer = setTimeout(() => this.onTransitionTimer(state), delay);
    this.transitionTimer.unref();
  }

  private onTransitionTimer(state: HeldState): void {
    if (this.stopped || this.state !== state) return;
    const now = this.clock.nowMs();
    if (!covers(state.priceList, now)) return this.catchUp(state, now);
    if (state.next || this.preparing === state || now < state.priceList.expiresAtMs - this.prepareAheadMs())
      return this.armTransitionTimer();
    this.preparing = state;
    this.armTransitionTimer();
    void this.render(state.snapshot, new Date(state.priceList.expiresAtMs)).then(
      (next) => {
        if (this.preparing === state) this.preparing = undefined;
        if (this.state === state) this.setState({ ...state, next });
      },
      (error: unknown) => {
        if (this.preparing === state) this.preparing = undefined;
        if (!this.stopped) this.logger.error(`rendering the next price list failed: ${String(error)}`);
      },
    );
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
