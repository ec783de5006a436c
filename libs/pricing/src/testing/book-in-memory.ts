import type { PriceRecord } from '../core/price-record';
import type { PricingData } from '../database/pricing-data';
import { PriceBookRefusedError } from '../errors/pricing-error';
import { INITIAL_AVAILABILITY } from '../price-book/change-log-chain';
import { planImport } from '../price-book/plan-import';
import { parsePriceBook } from '../price-book/price-book';

/**
 * What a migrated database holds once the price book `json` (the file format) is imported into it
 * at `nowMs` as its first book: the same checks and plan as `PriceBookService.apply` (a refused
 * book throws PRICE_BOOK_REFUSED naming every entry at fault), each planned price a record
 * written at `nowMs`. The one place the in-memory pricing reads the price book layer.
 */
export function pricingDataOfBook(json: unknown, nowMs: number): PricingData {
  const parsed = parsePriceBook(json);
  if ('errors' in parsed) throw new PriceBookRefusedError(parsed.errors);
  const planned = planImport(parsed.book, [], INITIAL_AVAILABILITY, nowMs);
  if ('errors' in planned) throw new PriceBookRefusedError(planned.errors);
  const { inserts, availability } = planned.plan;
  // A record's id is its insert's position + 1, so that supersededBy (an insert's position) maps too.
  const records = inserts.map((insert, index): PriceRecord => ({
    id: index + 1,
    productKey: insert.productKey,
    organizationId: insert.organizationId,
    unitType: insert.unitType,
    unitCount: insert.unitCount,
    amount: insert.amount,
    validFrom: insert.validFrom,
    validUntil: insert.validUntil,
    recordedAt: nowMs,
    supersededBy: insert.supersededBy === null ? null : insert.supersededBy + 1,
  }));
  return {
    records,
    availability: new Map([
      ...INITIAL_AVAILABILITY,
      ...availability.map((product): [string, boolean] => [product.productKey, product.onSale]),
    ]),
    listEnds: new Map(),
    listWrites: records.some((record) => record.organizationId === null) ? [nowMs] : [],
    version: '1',
    lastChangeId: '0',
    lastChangedAt: null,
    readAt: nowMs,
    marginMs: 0,
  };
}
