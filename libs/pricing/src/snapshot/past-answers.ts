import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '@app/clock';
import type { FeedPosition } from '../core/list-history';
import { inSlices } from '../core/slices';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../options/pricing-options';
import { encodeCursor, FEED_START, MAX_CHANGES_PER_PAGE, renderChangesPage } from '../rendering/changes-page';
import { renderPriceList, type PreparedAnswers, type PriceListResponse } from '../rendering/price-list-response';
import type { PricingSnapshot } from './pricing-snapshot';
import { PriceBookLoader } from './price-book-loader';
import { PricingState } from './pricing-state';

/** Requests for answers not kept that may wait for the one preparation under way; more are refused (503). */
const MAX_WAITING = 16;
/**
 * How long a request of the past waits at start-up for the past to be read (seconds at five years
 * of history: docs/benchmarks.md, "The list's past"); then 503.
 */
const PAST_WAIT_MS = 30_000;

interface Kept {
  answers: Promise<PreparedAnswers>;
  /** Prepared at this revision of the history (ListHistory.revision), right while it changed from no earlier than `until`. */
  revision: number;
  until: number;
  bytes: number;
  /**
   * While a page of the feed is read: the instant its changes are read before. A request that may
   * see later changes reads the page again: a page that is not full changes as instants pass.
   */
  readBefore?: number;
}

/**
 * The answers of the list's past (docs/decisions.md, "Prices as they were"): the document of each
 * version the list had (`GET /v1/pricing/at/{instant}`: every instant of a version shares it) and
 * the full pages of the change feed (`GET /v1/pricing/changes`), prepared from the history in
 * memory, one at a time per instance, serialized in slices and compressed off the event loop. What
 * was prepared is kept under a byte budget (`pastAnswersBytes`, every coding counted), the least
 * recently asked going first, and stays right as long as the history did not change at or before
 * what it shows (a write changes the list only from its publication instant on).
 */
@Injectable()
export class PastAnswers implements OnModuleInit {
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private waiting = 0;
  private preparations = 0;

  constructor(
    private readonly state: PricingState,
    @Inject(PRICING_OPTIONS) private readonly options: ResolvedPricingOptions,
    private readonly clock: Clock,
    private readonly loader: PriceBookLoader,
  ) {}

  onModuleInit(): void {
    this.loader.feedStarts$.subscribe(() => this.prepareFeedStart());
  }

  /**
   * The answers of the list as served at `at` (not after now); `undefined` when no prices can be
   * served, or too many answers are being prepared, or the past at `at` is not held within
   * PAST_WAIT_MS of start-up (the caller answers 503).
   */
  listAt(at: number, wait = true): Promise<PriceListResponse | undefined> | undefined {
    const snapshot = this.state.current();
    if (!snapshot) return undefined;
    if (snapshot.heldFrom > at) return wait ? this.wholeSnapshot().then(() => this.listAt(at, false)) : undefined;
    const version = snapshot.history.versionAt(at);
    const key = `${snapshot.lineage} at ${version}`;
    // The version's own instant: the document before any version is the empty one, the same for every instant.
    return this.prepared(snapshot, key, Number.isFinite(version) ? version : -Infinity, () =>
      renderPriceList(snapshot.pastList(at)),
    ) as Promise<PriceListResponse> | undefined;
  }

  /**
   * The answers of the page of the feed of `snapshot` after `position`, at most `limit` changes, at
   * `now`: a change is served once its instant has passed and every write that could precede it was
   * seen. A full page (more changes follow it, so it never changes) is kept, and served as kept
   * without reading the feed again (its changes' hashes are made again when read: ListHistory).
   * `undefined` when too many answers are being prepared.
   */
  changes(
    snapshot: PricingSnapshot,
    position: FeedPosition,
    limit: number,
    now: number,
  ): Promise<PreparedAnswers> | undefined {
    const key = `${snapshot.lineage} changes ${position.at}~${position.productKey} ${limit}`;
    const before = Math.min(now + 1, this.state.settledBefore());
    const kept = this.keptFor(snapshot, key, before);
    if (kept) return kept;
    const history = snapshot.history;
    // Kept while it is read and written (a request for it meanwhile, seeing no later changes, is
    // given it: right whatever the history does, as it is read from the history as it is then),
    // and after, when full, as long as the history does not change at or before its last change;
    // a last page may still grow: not kept.
    return this.keep(snapshot, key, -Infinity, before, async (kept) => {
      const found = await inSlices(history.changesAfter(position, limit, before));
      const last = found.changes.at(-1);
      if (found.more) Object.assign(kept, { revision: history.revision, until: last!.at, readBefore: undefined });
      else this.forget(key, kept);
      return renderChangesPage(
        { changes: found.changes, next: encodeCursor(last ?? position), hasMore: found.more },
        now,
      );
    });
  }

  /**
   * The snapshot shown, once it holds the list's whole past: at start-up, a first read of the
   * present alone is served (PricingSnapshot.heldFrom) while the past is read; what needs the past
   * waits for it, at most PAST_WAIT_MS. `undefined` when no prices can be served, or the past is not
   * held by then.
   */
  async wholeSnapshot(): Promise<PricingSnapshot | undefined> {
    const shown = this.state.current();
    if (!shown || shown.heldFrom === -Infinity) return shown;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise((resolve) => (timer = setTimeout(resolve, PAST_WAIT_MS)));
    await Promise.race([this.loader.loaded(), late]).finally(() => clearTimeout(timer));
    const later = this.state.current();
    return later?.heldFrom === -Infinity ? later : undefined;
  }

  /**
   * Prepares the first page of the feed of the snapshot shown, once it is full: every client that
   * follows the feed from its start asks for it first (PriceBookLoader says when, as it hashes).
   */
  private prepareFeedStart(): void {
    const snapshot = this.state.current();
    if (snapshot)
      void this.changes(snapshot, FEED_START, MAX_CHANGES_PER_PAGE, this.clock.nowMs())?.catch(() => undefined);
  }

  /** Bytes kept now (for metrics and tests). */
  get keptBytes(): number {
    return this.bytes;
  }

  /** Answers prepared since start (for metrics and tests): one per version asked, while kept. */
  get preparedCount(): number {
    return this.preparations;
  }

  /** What is kept under `key` while still right, else `prepare`d, kept and returned. */
  private prepared(
    snapshot: PricingSnapshot,
    key: string,
    shows: number,
    prepare: () => Promise<PreparedAnswers>,
  ): Promise<PreparedAnswers> | undefined {
    return this.keptFor(snapshot, key) ?? this.keep(snapshot, key, shows, undefined, prepare);
  }

  /**
   * `prepare`d, kept under `key` (nothing is kept there now) and returned; `prepare` is given what
   * is kept, to say what it read. `readBefore`: a page of the feed's (Kept).
   */
  private keep(
    snapshot: PricingSnapshot,
    key: string,
    shows: number,
    readBefore: number | undefined,
    prepare: (kept: Kept) => Promise<PreparedAnswers>,
  ): Promise<PreparedAnswers> | undefined {
    const revision = snapshot.history.revision;
    const entry: Kept = { answers: undefined!, revision, until: shows, bytes: 0, readBefore };
    const answers = this.enqueue(() => prepare(entry));
    if (!answers) return undefined;
    entry.answers = answers;
    this.kept.set(key, entry);
    answers.then(
      (done) => {
        if (this.kept.get(key) !== entry) return;
        entry.bytes = done.ok.identity.body!.length + done.ok.gzip.body!.length + done.ok.br.body!.length;
        this.bytes += entry.bytes;
        this.shrink();
      },
      () => this.forget(key, entry),
    );
    return answers;
  }

  /** Forgets `entry`, while kept under `key` (before its answers are ready: nothing counted yet). */
  private forget(key: string, entry: Kept): void {
    if (this.kept.get(key) === entry) this.kept.delete(key);
  }

  /**
   * What is kept under `key`, while still right for `snapshot` (else forgotten); a page of the feed
   * still read before an instant earlier than `before` is left to its own request.
   */
  private keptFor(snapshot: PricingSnapshot, key: string, before = -Infinity): Promise<PreparedAnswers> | undefined {
    const history = snapshot.history;
    const kept = this.kept.get(key);
    if (!kept || (kept.readBefore ?? Infinity) < before) return undefined;
    this.kept.delete(key);
    if (history.changedSince(kept.revision) > kept.until) {
      kept.revision = history.revision;
      this.kept.set(key, kept); // most recently asked: last to go
      return kept.answers;
    }
    this.bytes -= kept.bytes;
    return undefined;
  }

  /** Runs `prepare` after the preparations before it; `undefined` when too many wait already. */
  private enqueue<T>(prepare: () => Promise<T>): Promise<T> | undefined {
    if (this.waiting >= MAX_WAITING) return undefined;
    this.waiting++;
    this.preparations++;
    const done = this.queue.then(() => this.loader.inForeground(prepare));
    this.queue = done.catch(() => undefined).finally(() => this.waiting--);
    return done;
  }

  /** Forgets the least recently asked answers until the rest fit the budget. */
  private shrink(): void {
    for (const [key, kept] of this.kept) {
      if (this.bytes <= this.options.pastAnswersBytes) return;
      if (kept.bytes === 0) continue; // still being prepared
      this.kept.delete(key);
      this.bytes -= kept.bytes;
    }
  }
}
