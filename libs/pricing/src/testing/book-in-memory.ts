import type { KnownEnd } from '../core/list-history';
import type { PriceRecord } from '../core/price-record';
import type { PricingData } from '../database/pricing-data';
import { PriceBookRefusedError } from '../errors/pricing-error';
import { INITIAL_AVAILABILITY } from '../price-book/change-log-chain';
import { planImport } from '../price-book/plan-import';
import { parsePriceBook } from '../price-book/price-book';

/**
 * A price book in memory (PricingTestingModule), written as a migrated database is: the same checks
 * and plan as `PriceBookService.apply` (a refused book throws PRICE_BOOK_REFUSED naming every entry
 * at fault). The book given at the compile is the book as it always was (recorded before anything,
 * as a fixture is); each book applied after it is a write at its instant, recorded then, its ends
 * kept, so that the book as recorded before it (`asRecordedAt`) is the book before it. The one place
 * the in-memory pricing reads the price book layer.
 */
export class BookInMemory {
  private readonly records: PriceRecord[] = [];
  private readonly ends = new Map<number, KnownEnd[]>();
  private readonly availability = new Map<string, boolean>(INITIAL_AVAILABILITY);
  /** The instants of the writes of list prices after the compile. */
  private readonly writes: number[] = [];
  /** The instant of the last write after the compile. */
  private lastWrite = -Infinity;
  private version = 0;

  /** The book `json` (the file format) as it always was, planned at `nowMs` (entries without `valid_from` start then). */
  constructor(json: unknown, nowMs: number) {
    this.write(json, nowMs, false);
  }

  /** Writes the book `json` at `nowMs`, as an import would; not before the last write. */
  apply(json: unknown, nowMs: number): void {
    if (!(nowMs >= this.lastWrite)) {
      throw new PriceBookRefusedError([
        `the clock (${new Date(nowMs).toISOString()}) stands before the book's last write (${new Date(this.lastWrite).toISOString()})`,
      ]);
    }
    this.write(json, nowMs, true);
    this.lastWrite = nowMs;
  }

  /** What a database holding this book would give PricingSnapshot. */
  data(nowMs: number): PricingData {
    return {
      records: [...this.records],
      ends: new Map(this.ends),
      availability: new Map(this.availability),
      listWrites: [...this.writes],
      version: String(this.version),
      lastChangeId: '0',
      lastChangedAt: null,
      readAt: nowMs,
      marginMs: 0,
    };
  }

  private write(json: unknown, nowMs: number, recorded: boolean): void {
    const parsed = parsePriceBook(json);
    if ('errors' in parsed) throw new PriceBookRefusedError(parsed.errors);
    const planned = planImport(parsed.book, this.records, this.availability, nowMs);
    if ('errors' in planned) throw new PriceBookRefusedError(planned.errors);
    const { inserts, ends, availability } = planned.plan;
    // Ids follow the records held; supersededBy (an insert's position) maps to the id of that insert.
    const firstId = this.records.length + 1;
    const ids = inserts.map((_, index) => firstId + index);
    for (const [index, insert] of inserts.entries()) {
      this.records.push({
        id: ids[index],
        productKey: insert.productKey,
        organizationId: insert.organizationId,
        unitType: insert.unitType,
        unitCount: insert.unitCount,
        amount: insert.amount,
        validFrom: insert.validFrom,
        validUntil: insert.validUntil,
        ...(recorded && { recordedAt: nowMs }),
        supersededBy: insert.supersededBy === null ? null : ids[insert.supersededBy],
      });
    }
    for (const end of ends) {
      const at = this.records.findIndex((record) => record.id === end.id);
      const before = this.records[at];
      // An end of its own (supersededBy null) has no successor.
      const by = end.supersededBy === null ? null : ids[end.supersededBy];
      this.records[at] = { ...before, validUntil: end.validUntil, supersededBy: by };
      const known = this.ends.get(end.id) ?? [{ from: before.recordedAt ?? -Infinity, validUntil: before.validUntil }];
      this.ends.set(end.id, [...known, { from: nowMs, validUntil: end.validUntil }]);
    }
    for (const product of availability) this.availability.set(product.productKey, product.onSale);
    // A write of list prices moves the list's last_changed (PricingData.listWrites).
    const listWritten =
      inserts.some((i) => i.organizationId === null) || ends.some((e) => e.record.organizationId === null);
    if (recorded && listWritten) this.writes.push(nowMs);
    this.version += 1;
  }
}
