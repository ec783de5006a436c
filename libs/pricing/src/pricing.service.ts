import { Injectable } from '@nestjs/common';
import { parseProductKey } from './catalogue/catalogue';
import { Clock } from './clock';
import {
  PricingError,
  PricingErrorCode,
  PricingUnavailableError,
  ProductUnavailableError,
  UnknownProductError,
} from './errors/pricing-error';
import { buildPriceList, type PriceListDocument } from './price-list/build-price-list';
import type { PriceRecord } from './price-list/price-record';
import { costOf, parseQuantity, type Quantity } from './price-list/quote';
import type { Price, PriceLookup, PriceQuery, PricingHealth, Quote } from './pricing.types';
import { PriceBookCache } from './snapshot/price-book-cache';
import type { PricingSnapshot } from './snapshot/pricing-snapshot';

/**
 * What the rest of the control plane asks of pricing. Every answer comes from the prices held
 * in memory (no query per call), so changes made with the price book CLI apply without a restart.
 */
@Injectable()
export class PricingService {
  constructor(
    private readonly cache: PriceBookCache,
    private readonly clock: Clock,
  ) {}

  /**
   * The availability guard (rules 4 and 5): call it before creating anything that is billed
   * under `productKey`. Throws `PRODUCT_UNAVAILABLE` when the product is not on sale or has no
   * current list price (a product never priced included), `UNKNOWN_PRODUCT` when the key fits
   * no product family of section 2.4.
   */
  assertOrderable(productKey: string, at: Date = this.clock.now()): void {
    if (!parseProductKey(productKey)) throw new UnknownProductError(productKey);
    const snapshot = this.snapshot();
    if (!snapshot.isOnSale(productKey)) throw new ProductUnavailableError(productKey, 'it is not on sale');
    if (!snapshot.listPriceAt(productKey, at)) throw new ProductUnavailableError(productKey, 'it has no current price');
  }

  /** The price of `productKey` at an instant: the organization's agreed price, else the list price. */
  priceAt(productKey: string, query: PriceQuery = {}): PriceLookup {
    const snapshot = this.snapshot();
    const at = query.at ?? this.clock.now();
    const record =
      (query.organizationId !== undefined && snapshot.organizationPriceAt(productKey, query.organizationId, at)) ||
      snapshot.listPriceAt(productKey, at);
    return record ? { found: true, price: toPrice(record) } : { found: false };
  }

  /**
   * The cost of `quantity` units of `productKey` (in the family's unit) at an instant.
   * Returns `undefined` when there is no price; throws on a quantity that is not a
   * non-negative decimal.
   */
  quote(productKey: string, quantity: Quantity, query: PriceQuery = {}): Quote | undefined {
    const amount = parseQuantity(quantity);
    if (!amount) {
      const text = String(quantity);
      throw new PricingError(PricingErrorCode.InvalidQuantity, `not a non-negative decimal quantity: ${text}`, {
        quantity: text,
      });
    }
    const lookup = this.priceAt(productKey, query);
    if (!lookup.found) return undefined;
    return { price: lookup.price, quantity: amount.toFixed(), cost: costOf(lookup.price, amount) };
  }

  /** The public price list document at an instant (default now). */
  priceList(at: Date = this.clock.now()): PriceListDocument {
    return buildPriceList(this.snapshot().listHistory, at);
  }

  /**
   * For readiness probes: whether the price list can be served (prices confirmed within
   * PRICING_MAX_STALENESS_S), and whether the database answered lately.
   */
  health(): PricingHealth {
    return this.cache.health();
  }

  /** Checks the database for price book changes now (e.g. once the host app has migrated it). */
  refresh(): Promise<void> {
    return this.cache.check();
  }

  private snapshot(): PricingSnapshot {
    const state = this.cache.current();
    if (!state) throw new PricingUnavailableError();
    return state.snapshot;
  }
}

function toPrice(record: PriceRecord): Price {
  return {
    productKey: record.productKey,
    scope: record.organizationId === null ? 'list' : 'organization',
    organizationId: record.organizationId,
    unitType: record.unitType,
    unitCount: record.unitCount,
    amount: record.amount,
    validFrom: record.validFrom,
    validUntil: record.validUntil,
  };
}
