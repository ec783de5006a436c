import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '@app/clock';
import { DatabaseConnection } from '@app/database';
import { performance } from 'node:perf_hooks';
import { filter, Subject, take, type Subscription } from 'rxjs';
import type { ReadHead } from '../database/pricing-data';
import { PriceSnapshotReads } from '../database/price-snapshot-reads';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../options/pricing-options';
import { inSlices } from '../core/slices';
import type { ListHistory } from '../core/list-history';
import { MAX_CHANGES_PER_PAGE } from '../rendering/changes-page';
import { BrokenRecordsError, PricingSnapshot } from './pricing-snapshot';

/**
 * How far ahead `checkPublished` waits for a write held to take effect: a write's default delay
 * is about a second; one published later (`--publish-in`, a large book) is answered from its
 * instant on without a wait.
 */
const PUBLISHED_WAIT_MS = 10_000;
/** Past the publication instant by this much, a check's instant (the database's) is surely after it. */
const PUBLISHED_MARGIN_MS = 2;

const RETRY_MS = 1_000;
/**
 * The feed is hashed in slices this short: a request takes several turns of the event loop, each
 * waiting for a slice (8 ms slices made a cached page of /changes wait 60 ms during the hashing).
 */
const BACKGROUND_SLICE_MS = 2;
/** setTimeout holds at most 2^31-1 ms; a later instant is waited for in several turns. */
const MAX_TIMER_MS = 2_147_483_647;
/**
 * How long a COMMIT that passed its publication check may take to be seen by other sessions (its
 * WAL flushed): a write unseen at a read still takes effect at least the publication margin minus
 * this after it (docs/decisions.md, "One clock").
 */
export const COMMIT_VISIBILITY_MS = 250;

/**
 * Loads the prices into memory and keeps them current: once the database is ready, on the NOTIFY
 * a price book change sends (PriceBookListener), and on a periodic version check that catches
 * lost notifications. A reload reads only the product keys written since the last one. Each load
 * makes a new PricingSnapshot (its list prepared) and swaps it in whole; one timer makes the next
 * one as time passes, so that the list's answers for each instant at which it changes are ready
 * before that instant. What the database confirmed last, and when, is what PricingState judges
 * staleness by.
 *
 * A load whose list does not render changes nothing: the last snapshot is served, and the next
 * check, which finds the version still differing, loads again.
 */
@Injectable()
export class PriceBookLoader implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceBookLoader.name);
  private shown: PricingSnapshot | undefined;
  /** performance.now() when the database last confirmed the snapshot shown (staleness is real time). */
  private confirmedAt = -Infinity;
  /**
   * Epoch ms (the database's clock) before which the snapshot shown holds every change of the list
   * for good: the last read or heartbeat that found it current, plus what is left of the publication
   * margin then (docs/decisions.md, "One clock").
   */
  private settled = -Infinity;
  /** Serializes every change of the history and every preparation of lists (`exclusive`). */
  private work: Promise<unknown> = Promise.resolve();
  private reachable = false;
  private checkTimer: NodeJS.Timeout | undefined;
  private listTimer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private checkAgain = false;
  /** A run of hashFeed is going on; `hashAgain`: a snapshot was shown since it began. */
  private hashing = false;
  private hashAgain = false;
  /** While changes are read and applied: hashing waits, so that a change is ready first. */
  private reloading = false;
  /** Answers being prepared for requests (inForeground): hashing waits for them too. */
  private foreground = 0;
  private stopped = false;
  private databaseReady: Subscription | undefined;
  private readonly firstLoad: Promise<void>;
  private markLoaded!: () => void;
  private readonly builds = new Subject<number>();
  private readonly renderFailures = new Subject<void>();
  private readonly lateWrites = new Subject<void>();
  private readonly refusedLoads = new Subject<void>();
  private readonly feedStarts = new Subject<void>();
  /** The history whose feed's first page feedStarts$ announced. */
  private feedStartOf: ListHistory | undefined;
  /** What the last refused load said, so that the same problem is logged once. */
  private refusedFor: string | undefined;
  /** Seconds each load took (read from the database, index, render): for metrics. */
  readonly builds$ = this.builds.asObservable();
  /** Each list that did not render (the last one was kept): for metrics. */
  readonly renderFailures$ = this.renderFailures.asObservable();
  /** Each write seen after its publication instant had passed a confirmed read: for metrics. */
  readonly lateWrites$ = this.lateWrites.asObservable();
  /** Each load refused for prices that break the book's rules (the last snapshot was kept): for metrics. */
  readonly refusedLoads$ = this.refusedLoads.asObservable();
  /**
   * Once per full read of the book, when the first page of its feed is hashed and full (more
   * changes follow it): PastAnswers prepares it before it is asked for.
   */
  readonly feedStarts$ = this.feedStarts.asObservable();

  constructor(
    @Inject(PRICING_OPTIONS) private readonly options: ResolvedPricingOptions,
    private readonly reads: PriceSnapshotReads,
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
    clearTimeout(this.checkTimer);
    clearTimeout(this.listTimer);
    this.builds.complete();
    this.renderFailures.complete();
    this.lateWrites.complete();
    this.refusedLoads.complete();
    this.feedStarts.complete();
  }

  /** The snapshot shown, `undefined` before the first load. */
  get snapshot(): PricingSnapshot | undefined {
    return this.shown;
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
   * Epoch ms before which the snapshot shown holds every change of the list for good: a write not
   * seen yet takes effect at this instant or later (each read and heartbeat that finds the book
   * where the snapshot holds it moves it on).
   */
  get settledBefore(): number {
    return this.settled;
  }

  /**
   * A head read elsewhere (the LISTEN connection's heartbeat): confirms the snapshot shown when it
   * holds the book at that head, else checks.
   */
  heard(head: ReadHead, sentAt: number): void {
    if (this.checking || !this.shown?.isAt(head) || !this.shown.hasOrganizationPrices) {
      void this.check();
      return;
    }
    this.confirm(sentAt, head);
  }

  /**
   * Reloads when the price book's head (its version and latest change) differs from the one
   * shown, otherwise confirms it: a restore that lost writes, then had as many new ones, brings
   * the version back but not the change. A call
   * during a running check makes it run once more, so a change committed meanwhile is seen. A
   * check that failed, whoever asked for it (a NOTIFY that met a dead pool connection), is tried
   * again within a second, not at the next interval.
   */
  /**
   * Checks now, then, when a write held takes effect within PUBLISHED_WAIT_MS, waits for its
   * publication instant (on the real clock, the database's: docs/decisions.md, "One clock") and
   * checks again, so that the book as recorded now includes it: PricingService.refresh().
   */
  async checkPublished(): Promise<void> {
    await this.check();
    const wait = (this.shown?.latestWrite ?? -Infinity) + PUBLISHED_MARGIN_MS - Date.now();
    if (wait <= 0 || wait > PUBLISHED_WAIT_MS) return;
    await new Promise((resolve) => setTimeout(resolve, wait));
    await this.check();
  }

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
    const startedAt = performance.now();
    let snapshot: PricingSnapshot;
    let read: ReadHead;
    try {
      const head = await this.reads.readHead();
      const shown = this.shown;
      if (shown?.isAt(head) && shown.hasOrganizationPrices) return this.confirm(startedAt, head);
      this.reloading = true;
      try {
        [snapshot, read] = await this.exclusive(() => this.read(shown));
      } finally {
        this.reloading = false;
        this.hashFeed(); // what the read stopped, whether it made a snapshot or not
      }
      if (this.stopped) return;
      this.show(snapshot);
      // The snapshot read holds every write committed before its head was read.
      this.confirm(startedAt, read);
      this.announceFeedStart(snapshot.history); // once settled: its first page is served from now on
    } catch (error) {
      return this.markReachable(false, error);
    }
    this.builds.next((performance.now() - startedAt) / 1000);
    // The list prices shown first at start-up: organizations' prices are read next, at once.
    if (snapshot.hasOrganizationPrices) this.markLoaded();
    else this.checkAgain = true;
    const held = snapshot.hasOrganizationPrices ? 'records' : "list prices alone, organizations' next";
    this.logger.debug(
      `prices ${snapshot.version} loaded (${snapshot.recordCount} ${held}): read and rendered in ` +
        `${(performance.now() - startedAt).toFixed(0)} ms`,
    );
  }

  /**
   * The snapshot shown with the changes since it (or everything, when they do not follow it), and
   * the head it was read at. The first read takes the list prices alone, and of a long past only
   * what the present needs (PricingData.present): the public list, list prices and availability are
   * served from them within seconds whatever the number of organizations' prices and the length of
   * the past; the next read, at once, takes only what the first left, and only then are prices
   * loaded (`loaded()`), and the list's past served (PastAnswers waits for it).
   */
  private async read(shown: PricingSnapshot | undefined): Promise<[PricingSnapshot, ReadHead]> {
    if (shown?.hasOrganizationPrices) {
      const changes = await this.reads.loadChangesSince(shown.lastChangeId);
      const updated = await this.rendered(shown.withChanges(changes, this.clock.nowMs()));
      if (updated) {
        this.noteLate(changes.listLog);
        return [updated, changes];
      }
      this.logger.log(`changes since version ${shown.version} do not follow it: reading every price again`);
    } else if (shown) {
      // Held at the head of the list prices it holds, settled no further: the changes since are read next.
      const head = { ...shownHead(shown), readAt: -Infinity, marginMs: 0 };
      const cut = shown.presentCut;
      if (cut !== undefined) {
        const rest = await this.reads.loadPastAndOrganizationPrices(cut);
        return [await this.rendered(shown.withPastAndOrganizationPrices(rest, this.clock.nowMs())), head];
      }
      const organizations = await this.reads.loadOrganizationPrices();
      return [await this.rendered(shown.withOrganizationPrices(organizations)), head];
    }
    const data = await this.reads.loadPricingData({ listOnly: shown === undefined, presentFirst: shown === undefined });
    return [await this.rendered(PricingSnapshot.build(data, this.clock.nowMs())), data];
  }

  /**
   * Says so when a write takes effect before an instant an earlier read had found settled: it
   * committed after its publication instant (a COMMIT that stalled after its check, or a session
   * that deferred nothing), so the list served at instants since then differs from the past now held.
   */
  private noteLate(listLog: readonly { readonly at: number }[]): void {
    const earliest = listLog.reduce((min, write) => Math.min(min, write.at), Infinity);
    if (earliest >= this.settled) return;
    this.lateWrites.next();
    this.logger.error(
      `a write took effect at ${new Date(earliest).toISOString()}, before ${new Date(this.settled).toISOString()}, ` +
        'which an earlier read had found settled: it committed after its publication instant, and the list served ' +
        'since differs from the past now held (docs/operations.md, "One clock")',
    );
  }

  /** Runs `work` after every change of the history and preparation of lists before it. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const done = this.work.then(work, work);
    this.work = done.catch(() => undefined);
    return done;
  }

  /**
   * A snapshot being made; one whose list did not render, or whose prices break the book's rules,
   * is logged and counted, and the database was read.
   */
  private async rendered<T>(making: Promise<T>): Promise<T> {
    try {
      return await making;
    } catch (error) {
      this.markReachable(true);
      if (error instanceof BrokenRecordsError) {
        this.refusedLoads.next();
        const held = this.shown ? `version ${this.shown.version}` : 'nothing yet';
        if (error.message !== this.refusedFor) {
          this.logger.error(`${error.message}: refused them, serving ${held}; reading again at the next check`);
        }
        this.refusedFor = error.message;
        throw new RenderFailedError();
      }
      this.renderFailures.next();
      const held = this.shown ? `version ${this.shown.version}` : 'nothing yet';
      this.logger.error(
        `the price list did not render: ${String(error)}; serving ${held}, rendering again at the next check`,
      );
      throw new RenderFailedError();
    }
  }

  /**
   * Hashes the feed of the history shown (ListHistory.hashFeed), in slices, one run at a time:
   * `/changes` and the checkpoint serve only what is hashed, the list is served meanwhile. A run
   * stops while changes are read and applied (a change is ready first: it shares the event loop
   * with nothing else) and begins again when their snapshot is shown.
   */
  private hashFeed(): void {
    const history = this.shown?.history;
    if (this.hashing) {
      this.hashAgain = true;
      return;
    }
    // A present alone (PricingSnapshot.heldFrom) has no feed to hash: the whole past, read next, has.
    if (this.stopped || !history || history.hashed || this.foreground > 0 || this.shown!.heldFrom > -Infinity) return;
    this.hashing = true;
    this.hashAgain = false;
    const started = performance.now();
    const stop = () => this.stopped || this.reloading || this.foreground > 0 || this.shown?.history !== history;
    // The first page first, announced, then the rest.
    const announcing = this.feedStartOf !== history;
    inSlices(
      history.hashFeed(() => stop() || (announcing && firstPageHashed(history))),
      BACKGROUND_SLICE_MS,
    )
      .then(() => {
        if (announcing) this.announceFeedStart(history);
        if (!announcing || stop()) return;
        return inSlices(history.hashFeed(stop), BACKGROUND_SLICE_MS);
      })
      .then(
        () => {
          if (history.hashed && performance.now() - started > 100) {
            this.logger.debug(
              `the feed's ${history.changeCount} changes hashed in ${(performance.now() - started).toFixed(0)} ms`,
            );
          }
        },
        (error: unknown) => this.logger.error(`the feed was not hashed: ${String(error)}`),
      )
      .finally(() => {
        this.hashing = false;
        if (this.hashAgain) this.hashFeed();
      });
  }

  /**
   * Runs `work` (an answer a request waits for: PastAnswers) with the feed's hashing paused, and
   * resumes it after: the hashing is background work, and shared the event loop with an `/at`
   * being prepared, which then took twice as long.
   */
  async inForeground<T>(work: () => Promise<T>): Promise<T> {
    this.foreground++;
    try {
      return await work();
    } finally {
      if (--this.foreground === 0) this.hashFeed();
    }
  }

  /** Says once per history that its feed's first page is hashed and full (feedStarts$). */
  private announceFeedStart(history: ListHistory): void {
    if (this.feedStartOf === history || !firstPageHashed(history)) return;
    this.feedStartOf = history;
    this.feedStarts.next();
  }

  /** Swaps `snapshot` in, and sets the one timer for the next instant its list needs preparing. */
  private show(snapshot: PricingSnapshot): void {
    this.shown = snapshot;
    this.hashFeed();
    clearTimeout(this.listTimer);
    if (this.stopped || snapshot.preparedUntil === Infinity) return;
    const delay = Math.min(Math.max(snapshot.preparedUntil - this.clock.nowMs(), 0), MAX_TIMER_MS);
    this.listTimer = setTimeout(() => void this.prepareLists(snapshot), delay);
    this.listTimer.unref();
  }

  /** The timer's work: the same prices, their list prepared from now on, swapped in unless a load came first. */
  private async prepareLists(shown: PricingSnapshot): Promise<void> {
    if (this.shown !== shown) return;
    if (shown.preparedUntil > this.clock.nowMs()) return this.show(shown); // a long wait, in turns
    try {
      const prepared = await this.exclusive(() => shown.preparedFor(this.clock.nowMs()));
      if (this.shown === shown && !this.stopped) this.show(prepared);
    } catch (error) {
      this.renderFailures.next();
      this.logger.error(`preparing the next price list failed: ${String(error)}; it renders on demand meanwhile`);
      if (this.shown === shown && !this.stopped)
        this.listTimer = setTimeout(() => void this.prepareLists(shown), RETRY_MS).unref();
    }
  }

  private confirm(startedAt: number, head: ReadHead): void {
    if (startedAt > this.confirmedAt) this.confirmedAt = startedAt;
    const settled = head.readAt + Math.max(0, head.marginMs - COMMIT_VISIBILITY_MS);
    if (settled > this.settled) this.settled = settled;
    this.markReachable(true);
  }

  private scheduleCheck(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => {
      void this.check().then(() =>
        this.scheduleCheck(this.shown && this.reachable ? this.checkIntervalMs() : RETRY_MS),
      );
    }, delayMs);
    this.checkTimer.unref();
  }

  /** Well inside the staleness limit, so that a reachable database keeps the list fresh. */
  private checkIntervalMs(): number {
    return Math.max(RETRY_MS, Math.min(30_000, (this.options.maxStalenessS * 1000) / 4));
  }

  private markReachable(reachable: boolean, error?: unknown): void {
    if (error instanceof RenderFailedError) return; // the database answered: rendered() said what failed
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

/** The head a snapshot holds the book at (without the clock it was read by). */
function shownHead(shown: PricingSnapshot): Pick<ReadHead, 'version' | 'lastChangeId' | 'lastChangedAt'> {
  return { version: shown.version, lastChangeId: shown.lastChangeId, lastChangedAt: shown.lastChangedAt };
}

/** Whether the feed's first page is hashed and full (more changes follow it). */
function firstPageHashed(history: ListHistory): boolean {
  return history.sizeBefore(Infinity) > MAX_CHANGES_PER_PAGE;
}

/** A load whose list did not render: already logged and counted. */
class RenderFailedError extends Error {}
