import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '@app/clock';
import { performance } from 'node:perf_hooks';
import { renderPriceList, type PriceListResponse } from '../rendering/price-list-response';
import { INLINE_RENDER_MAX_PRICES, PriceListRenderer } from './price-list-renderer';
import type { PricingSnapshot } from './pricing-snapshot';

/** setTimeout holds at most 2^31-1 ms; a later transition is re-armed when this fires. */
const MAX_TIMER_MS = 2_147_483_647;
/**
 * The list for a scheduled instant is rendered this long ahead of it (or four times the last
 * render, when longer), and swapped in at the instant.
 */
const PREPARE_AHEAD_MS = 5_000;
/** A transition passing while the list renders is rendered again, at most this many times. */
const MAX_RENDER_ATTEMPTS = 3;

/** The prices shown, and their public list at the instant asked for. */
export interface ShownPrices {
  readonly snapshot: PricingSnapshot;
  readonly priceList: PriceListResponse;
}

interface Held extends ShownPrices {
  /** The list from `priceList.expiresAtMs` on, rendered ahead of that instant. */
  readonly next?: PriceListResponse;
}

/** Whether `list` is the list at `nowMs`. */
function covers(list: PriceListResponse, nowMs: number): boolean {
  return list.builtForMs <= nowMs && nowMs < list.expiresAtMs;
}

/**
 * The public list of the prices shown, over time: rendered once per snapshot (show) and once per
 * scheduled instant, never per request, and off the event loop (PriceListRenderer). A scheduled
 * transition is never served late: the list for its instant is rendered a few seconds ahead and
 * swapped in by a timer at the instant, or by the first request at or after it. When a request
 * finds the clock past every list held (a clock that jumped), the list is rendered for it on the
 * spot, inline, and held.
 */
@Injectable()
export class PriceListSchedule implements OnApplicationShutdown {
  private readonly logger = new Logger(PriceListSchedule.name);
  private held: Held | undefined;
  private transitionTimer: NodeJS.Timeout | undefined;
  /** The held state whose next list is being rendered. */
  private preparing: Held | undefined;
  private lastRenderMs = 0;
  private stopped = false;

  constructor(
    private readonly renderer: PriceListRenderer,
    private readonly clock: Clock,
  ) {}

  /** The snapshot shown, `undefined` before the first. */
  get snapshot(): PricingSnapshot | undefined {
    return this.held?.snapshot;
  }

  /** How long the last render took, in milliseconds. */
  get lastRenderDurationMs(): number {
    return this.lastRenderMs;
  }

  /**
   * Renders the list of `snapshot` at the clock's instant (and the next one too, when its instant
   * is close) and shows them. Rejects, showing what it showed before, when the list does not
   * render (its worker overran its limit: PriceListRenderer).
   */
  async show(snapshot: PricingSnapshot): Promise<void> {
    let lists: Omit<Held, 'snapshot'>;
    try {
      lists = await this.renderFor(snapshot);
    } catch (error) {
      if (this.stopped) return;
      throw error;
    }
    if (!this.stopped) this.hold({ snapshot, ...lists });
  }

  /**
   * The prices shown at `nowMs` and their list. Not a pure read: when the list held does not cover
   * `nowMs` (its instant passed before the transition timer fired, or the clock jumped), it first
   * holds the list of that instant, the one prepared ahead or, when the clock passed every list
   * prepared, one rendered now, inline, and re-arms the timer from there. So a late timer never
   * serves an outdated list, and a list rendered on the spot is rendered once, not per request.
   */
  advanceTo(nowMs: number): ShownPrices | undefined {
    const held = this.held;
    if (!held || covers(held.priceList, nowMs)) return held;
    this.catchUp(held, nowMs);
    return this.held;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.transitionTimer);
    await this.renderer.close();
  }

  /**
   * The list of `snapshot` at the instant it is shown and, when its next transition is close, the
   * list from then on too, so that the transition is not rendered late.
   */
  private async renderFor(snapshot: PricingSnapshot): Promise<Omit<Held, 'snapshot'>> {
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

  private hold(held: Held): void {
    this.held = held;
    this.armTransitionTimer();
  }

  /** Holds the list at `nowMs`: the one prepared for it, else one rendered now, inline. */
  private catchUp(held: Held, nowMs: number): void {
    let priceList = held.next;
    if (!priceList || !covers(priceList, nowMs)) {
      const instant = new Date(nowMs);
      const history = held.snapshot.listHistoryAt(instant);
      if (history.records.length >= INLINE_RENDER_MAX_PRICES)
        this.logger.warn(`the clock passed every list prepared: rendering ${history.records.length} prices inline`);
      priceList = renderPriceList(history, instant);
    }
    this.hold({ snapshot: held.snapshot, priceList });
  }

  /**
   * Wakes up ahead of the next scheduled instant to render the list from then on, and at the
   * instant to swap it in, without a database read.
   */
  private armTransitionTimer(): void {
    clearTimeout(this.transitionTimer);
    const held = this.held;
    if (this.stopped || !held || held.priceList.expiresAtMs === Infinity) return;
    const ready = held.next !== undefined || this.preparing === held;
    const wakeAt = held.priceList.expiresAtMs - (ready ? 0 : this.prepareAheadMs());
    const delay = Math.min(Math.max(wakeAt - this.clock.nowMs(), 0), MAX_TIMER_MS);
    this.transitionTimer = setTimeout(() => this.onTransitionTimer(held), delay);
    this.transitionTimer.unref();
  }

  private onTransitionTimer(held: Held): void {
    if (this.stopped || this.held !== held) return;
    const now = this.clock.nowMs();
    if (!covers(held.priceList, now)) return this.catchUp(held, now);
    if (held.next || this.preparing === held || now < held.priceList.expiresAtMs - this.prepareAheadMs())
      return this.armTransitionTimer();
    this.preparing = held;
    this.armTransitionTimer();
    void this.render(held.snapshot, new Date(held.priceList.expiresAtMs)).then(
      (next) => {
        if (this.preparing === held) this.preparing = undefined;
        if (this.held === held) this.hold({ ...held, next });
      },
      (error: unknown) => {
        // The timer armed for the instant stays: catchUp renders the list then.
        if (this.preparing === held) this.preparing = undefined;
        if (!this.stopped)
          this.logger.error(`rendering the next price list ahead failed: ${String(error)}; it renders at its instant`);
      },
    );
  }
}
