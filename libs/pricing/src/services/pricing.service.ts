import { Injectable } from '@nestjs/common';
import { Clock } from '@app/clock';
import { firstValueFrom, from, throwError, timeout } from 'rxjs';
import { parseProductKey } from '../catalogue/catalogue';
import {
  PricingError,
  PricingErrorCode,
  PricingUnavailableError,
  ProductUnavailableError,
  UnknownProductError,
} from '../errors/pricing-error';
import { focusRows, type FocusBilling, type FocusCost, type FocusUsage } from '../core/focus';
import type { PriceListDocument } from '../core/price-list';
import type { PriceRecord } from '../core/price-record';
import { costOf, parseQuantity, type Quantity } from '../core/quote';
import {
  costOfEvents,
  costOfUsage,
  roundForInvoice,
  type ApplicablePrices,
  type MeteredEvent,
  type TimeUsage,
  type UsageCost as UsageCostOfRecords,
} from '../core/usage';
import type { UnitType } from '../catalogue/catalogue';
import type {
  AsRecorded,
  Price,
  PriceLookup,
  PriceQuery,
  QuoteLookup,
  RecordedQuery,
  UsageCost,
  UsageQuery,
} from './pricing.types';
import { PastAnswers } from '../snapshot/past-answers';
import { PriceBookLoader } from '../snapshot/price-book-loader';
import type { PricingSnapshot } from '../snapshot/pricing-snapshot';
import { PricingState, type PricingHealth } from '../snapshot/pricing-state';

/** How long whenReady() waits for the first load by default. */
export const READY_TIMEOUT_MS = 30_000;

/**
 * What the rest of the control plane asks of pricing. Every answer comes from the prices held
 * in memory (no query per call), so changes made with the price book CLI apply without a restart.
 */
@Injectable()
export class PricingService {
  constructor(
    private readonly prices: PricingState,
    private readonly loader: PriceBookLoader,
    private readonly past: PastAnswers,
    private readonly clock: Clock,
  ) {}

  /**
   * Resolves once every price is loaded for the first time (every other method throws
   * PRICING_UNAVAILABLE until then, but for lookups without an organization, which list prices
   * answer a moment earlier: snapshot/price-book-loader.ts); rejects with PRICING_UNAVAILABLE
   * after `timeoutMs`.
   * Await it where an answer is needed at start-up: a worker or a billing job before its run.
   */
  whenReady(timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    const late = (): Error => new PricingUnavailableError();
    return firstValueFrom(from(this.loader.loaded()).pipe(timeout({ first: timeoutMs, with: () => throwError(late) })));
  }

  /**
   * The availability guard (docs/price-list-api.md, section 1, rules 4 and 5): call it before
   * creating anything that is billed under `productKey`. Throws `PRODUCT_UNAVAILABLE` when the
   * product is not on sale or has no current list price (a product never priced included),
   * `UNKNOWN_PRODUCT` when the key fits no product family of section 2.4.
   */
  assertOrderable(productKey: string, at: Date = this.clock.now()): void {
    if (!parseProductKey(productKey)) throw new UnknownProductError(productKey);
    const snapshot = this.snapshot(undefined, at.getTime());
    if (!snapshot.isOnSale(productKey)) throw new ProductUnavailableError(productKey, 'it is not on sale');
    if (!snapshot.listPriceAt(productKey, at.getTime()))
      throw new ProductUnavailableError(productKey, 'it has no current price');
  }

  /** Whether a product is on sale (availability is data; a product not marked otherwise is). */
  isOnSale(productKey: string): boolean {
    return this.snapshot(undefined, Infinity).isOnSale(productKey);
  }

  /**
   * The price of `productKey` at an instant: the organization's agreed price, else the list price;
   * `{ found: false }` when none is in force (a key of a family's shape never priced included). From
   * the book as recorded at `asRecordedAt` (default now; the answer says which instant). Throws
   * UNKNOWN_PRODUCT for a key that fits no family (a typo is never "no price"), FUTURE_INSTANT for
   * an `asRecordedAt` later than now.
   */
  priceAt(productKey: string, query: PriceQuery = {}): PriceLookup {
    if (!parseProductKey(productKey)) throw new UnknownProductError(productKey);
    const snapshot = this.snapshot(query.organizationId, Infinity);
    const recorded = this.recordedInstant(query);
    const at = (query.at ?? this.clock.now()).getTime();
    if (snapshot.heldFrom > Math.min(at, recorded)) throw new PricingUnavailableError(); // as snapshot() says
    const record =
      (query.organizationId !== undefined &&
        snapshot.organizationPriceAt(productKey, query.organizationId, at, recorded)) ||
      snapshot.listPriceAt(productKey, at, recorded);
    const asRecordedAt = new Date(recorded);
    return record ? { found: true, price: toPrice(record), asRecordedAt } : { found: false, asRecordedAt };
  }

  /**
   * The cost of `quantity` units of `productKey` (in the family's unit) at an instant:
   * `{ found: false }` when there is no price (never zero), as priceAt answers; throws
   * INVALID_QUANTITY on a quantity that is not a non-negative decimal, and UNKNOWN_PRODUCT as
   * priceAt does.
   */
  quote(productKey: string, quantity: Quantity, query: PriceQuery = {}): QuoteLookup {
    const amount = parseQuantity(quantity);
    if (!amount) {
      const text = String(quantity);
      throw new PricingError(PricingErrorCode.InvalidQuantity, `not a non-negative decimal quantity: ${text}`, {
        quantity: text,
      });
    }
    const lookup = this.priceAt(productKey, query);
    if (!lookup.found) return lookup;
    const { price, asRecordedAt } = lookup;
    return { found: true, price, quantity: amount.toFixed(), cost: costOf(price, amount), asRecordedAt };
  }

  /**
   * The cost of time-based usage (families billed in `seconds` or `gib_hours`) over
   * `[from, to)`, e.g. a volume that existed from one date to another: split at every change of
   * the price that applies (the organization's agreed price where in force, else the list price),
   * one line per window; a part with no price is an unpriced line, and the result is incomplete.
   * `sizeGib` is required for `gib_hours`. From the prices in memory: no query per call.
   * Throws UNKNOWN_PRODUCT, or INVALID_USAGE naming the input at fault (`from` after `to`, ...).
   */
  costOfUsage(productKey: string, usage: TimeUsage, query: UsageQuery = {}): UsageCost {
    const { prices, unitType, asRecordedAt } = this.pricesFor(productKey, query);
    return withPublicPrices(costOfUsage(prices, unitType, usage), asRecordedAt);
  }

  /**
   * The cost of metered events (families billed in `gb`, `requests`, `samples`,
   * `metric_months`): each event priced at its instant, summed per window of one price. Each
   * event has a `quantity` in the family's unit, or, for `gb` only, `bytes` (a whole number of
   * bytes; GB are decimal, 10^9 bytes).
   */
  costOfEvents(productKey: string, events: readonly MeteredEvent[], query: UsageQuery = {}): UsageCost {
    const { prices, unitType, asRecordedAt } = this.pricesFor(productKey, query);
    return withPublicPrices(costOfEvents(prices, unitType, events), asRecordedAt);
  }

  /**
   * Usage as FOCUS 1.2 cost rows (core/focus.ts; docs/using-pricing.md, "FOCUS cost rows"): one
   * row per window of one applicable price (the organization's agreed price where in force, else
   * the list price) and one list price, with the ids of both records; time-based usage as
   * costOfUsage takes it, metered usage over a period (`{ from, to, quantity }`) or as events
   * (`{ events }`). `billing` gives what pricing cannot know (the provider, the billing account and
   * period). Unpriced parts have no row: they are in `unpriced`, and `complete` is false. Throws
   * UNKNOWN_PRODUCT, or INVALID_USAGE naming the input at fault.
   */
  focusRows(productKey: string, usage: FocusUsage, query: UsageQuery, billing: FocusBilling): FocusCost & AsRecorded {
    const { prices, asRecordedAt } = this.pricesFor(productKey, query);
    return { ...focusRows(productKey, prices, usage, billing), asRecordedAt };
  }

  /**
   * The amount of one invoice line: a priced usage line's (or a quote's) `cost` rounded to the
   * cent, half up, with two decimals (`'3.15616438356164383562'` is `'3.16'`). One invoice line per
   * priced usage line; the invoice's total is the sum of its rounded lines (`sumCosts`), never a
   * usage's `total` rounded (docs/using-pricing.md, "Rounding an invoice"). Throws on anything but
   * a plain non-negative decimal string. Needs no prices: it answers before the first load too.
   */
  roundForInvoice(cost: string): string {
    return roundForInvoice(cost);
  }

  /**
   * The public price list document at an instant (default now), as an object: by default the list
   * as it shows that instant (what was served then, for a past one; what is scheduled now, for a
   * future one); with `asRecordedAt`, the list the book as recorded then gives for that instant
   * (a correction recorded since `at` included, one recorded after `asRecordedAt` not).
   */
  priceList(at: Date = this.clock.now(), query: RecordedQuery = {}): PriceListDocument {
    const snapshot = this.snapshot(undefined, query.asRecordedAt === undefined ? at.getTime() : -Infinity);
    if (query.asRecordedAt === undefined) return snapshot.documentAt(at.getTime());
    return snapshot.documentAsRecordedAt(at.getTime(), this.recordedInstant(query));
  }

  /**
   * The public list as it was served at `at` (not later than now): what `GET /v1/pricing` served
   * then and `GET /v1/pricing/at/{at}` serves, with its ETag, for an invoice to cite the list it
   * was priced from. From the prices in memory; throws FUTURE_INSTANT for an instant later than
   * now, PRICING_UNAVAILABLE when no prices are held.
   */
  async priceListAsOf(at: Date): Promise<{ readonly etag: string; readonly document: PriceListDocument }> {
    const ms = at.getTime();
    if (!(ms <= this.clock.nowMs())) {
      throw new PricingError(PricingErrorCode.FutureInstant, `the list at ${String(at)} is not known yet`);
    }
    const list = await this.past.listAt(ms);
    if (!list) throw new PricingUnavailableError();
    return { etag: list.etag, document: JSON.parse(list.body.toString('utf8')) as PriceListDocument };
  }

  /**
   * For readiness probes: whether the price list can be served (prices confirmed within
   * PRICING_MAX_STALENESS_S), and whether the database answered lately.
   */
  health(): PricingHealth {
    return this.prices.health();
  }

  /**
   * Checks the database for price book changes now (e.g. once the host app has migrated it), and
   * waits for a write read to take effect when it does within seconds: a write committed before
   * the call is in the answers when this resolves.
   */
  refresh(): Promise<void> {
    return this.loader.checkPublished();
  }

  private pricesFor(
    productKey: string,
    query: UsageQuery,
  ): { prices: ApplicablePrices; unitType: UnitType } & AsRecorded {
    const parts = parseProductKey(productKey);
    if (!parts) throw new UnknownProductError(productKey);
    const snapshot = this.snapshot(query.organizationId);
    const recorded = this.recordedInstant(query);
    return {
      prices: snapshot.applicablePrices(productKey, query.organizationId, recorded),
      unitType: parts.family.unitType,
      asRecordedAt: new Date(recorded),
    };
  }

  /**
   * The instant of the book that prices an answer (docs/using-pricing.md, "The book as recorded"):
   * `asRecordedAt`, or now; never an instant whose book may still change (a write not seen yet,
   * while the database was out of reach: snapshot/price-book-loader.ts, settledBefore).
   */
  private recordedInstant(query: RecordedQuery): number {
    const now = this.clock.nowMs();
    const settled = this.prices.settledBefore() - 1;
    if (query.asRecordedAt === undefined) return Math.min(now, settled);
    const at = query.asRecordedAt.getTime();
    if (!(at <= now)) {
      throw new PricingError(
        PricingErrorCode.FutureInstant,
        `the book as recorded at ${String(query.asRecordedAt)} is not known: asRecordedAt must be an instant not later than now`,
      );
    }
    // The database was out of reach since: a write may have taken effect by then that is not held.
    if (at > settled) throw new PricingUnavailableError();
    return at;
  }

  /**
   * The prices served now, for a lookup of instants from `from` on; PRICING_UNAVAILABLE before they
   * are loaded, for a lookup of an organization's prices while only the list prices are, and for one
   * before the list's present while only it is (the first moments of a start-up:
   * snapshot/price-book-loader.ts), never a list price in place of an agreed one or of a past one.
   */
  private snapshot(organizationId?: string, from = -Infinity): PricingSnapshot {
    const snapshot = this.prices.current();
    if (!snapshot || (organizationId !== undefined && !snapshot.hasOrganizationPrices) || snapshot.heldFrom > from) {
      throw new PricingUnavailableError();
    }
    return snapshot;
  }
}

function withPublicPrices(cost: UsageCostOfRecords, asRecordedAt: Date): UsageCost {
  return {
    ...cost,
    lines: cost.lines.map((line) => (line.priced ? { ...line, price: toPrice(line.price) } : line)),
    asRecordedAt,
  };
}

/** A held price as other modules see it: instants as Dates, made when asked for (never held). */
function toPrice(held: PriceRecord): Price {
  return {
    id: held.id,
    productKey: held.productKey,
    scope: held.organizationId === null ? 'list' : 'organization',
    organizationId: held.organizationId,
    unitType: held.unitType,
    unitCount: held.unitCount,
    amount: held.amount,
    validFrom: new Date(held.validFrom),
    validUntil: held.validUntil === null ? null : new Date(held.validUntil),
  };
}
