import { priceListDocument, listAt, publicList } from './price-list';
import { priceRecord } from './price-record.fixture';
import type { PriceRecord } from './price-record';
import {
  countUpTo,
  indexAfter,
  knownAt,
  knownPrices,
  productChanges,
  recordsKnownAt,
  type ListWrite,
} from './list-history';
import { runNow } from './slices';

const ms = (iso: string): number => Date.parse(iso);
const W0 = ms('2026-01-10T00:00:00Z'); // the book's first write
const W1 = ms('2026-02-10T00:00:00Z'); // an immediate change
const W2 = ms('2026-03-10T00:00:00Z'); // an end set, ahead
const END = ms('2026-06-01T00:00:00Z');

// gp1: recorded at W0 from 2026-01-01 (a backfill), open; ended at W1 by a new price from W1.
const gp1 = priceRecord({ id: 1, validFrom: '2026-01-01T00:00:00Z', validUntil: W1, recordedAt: W0 });
const gp1Next = priceRecord({ id: 2, amount: '0.0500', validFrom: W1, recordedAt: W1 });
// io1: recorded at W0 from W0, its end set at W2 (to END), by a successor from END.
const io1 = priceRecord({ id: 3, productKey: 'storage.io1', validFrom: W0, validUntil: END, recordedAt: W0 });
const io1Next = priceRecord({ id: 4, productKey: 'storage.io1', amount: '0.2', validFrom: END, recordedAt: W2 });
const records: PriceRecord[] = [gp1, gp1Next, io1, io1Next];
const log: ListWrite[] = [
  { at: W0, set: { id: 1, validUntil: null } },
  { at: W0, set: { id: 3, validUntil: null } },
  { at: W1, set: { id: 2, validUntil: null } },
  { at: W1, ends: [{ id: 1, validUntil: W1 }] },
  { at: W2, set: { id: 4, validUntil: null } },
  { at: W2, ends: [{ id: 3, validUntil: END }] },
];
const writes = [W0, W1, W2];

describe('knownPrices and knownAt', () => {
  const known = runNow(knownPrices(records, log));

  it('knows a price from the write that recorded it, with the end it had at each instant', () => {
    const [io1Known] = known.get('storage.io1')!;
    expect(knownAt(io1Known, W0 - 1)).toBeUndefined();
    expect(knownAt(io1Known, W0)).toEqual({ ...io1, validUntil: null });
    expect(knownAt(io1Known, W2 - 1)?.validUntil).toBeNull();
    expect(knownAt(io1Known, W2)).toBe(io1); // as stored from the write that ended it on
  });

  it('knows a record no write recorded (written before the log kept what writes did) from its recorded_at, as stored', () => {
    const [unlogged] = runNow(knownPrices([io1], [])).get('storage.io1')!;
    expect(knownAt(unlogged, W0 - 1)).toBeUndefined();
    expect(knownAt(unlogged, W0)).toBe(io1);
  });

  it('knows a record read without when it was recorded, and no write of it, from its start', () => {
    const withoutIt: PriceRecord = { ...io1 };
    delete (withoutIt as { recordedAt?: number }).recordedAt;
    const [unlogged] = runNow(knownPrices([withoutIt], [])).get('storage.io1')!;
    expect(unlogged.knownFrom).toBe(io1.validFrom);
  });

  it('lists at an instant the prices as known then: no backfill before its write, no end before it was set', () => {
    const document = (at: number) => {
      const atThen = runNow(recordsKnownAt(known, at));
      return priceListDocument(
        runNow(listAt(runNow(publicList(atThen, writes.slice(0, countUpTo(writes, at)), at)), at)),
      );
    };
    // Before the first write the backfilled gp1 (in effect since 2026-01-01) was not served.
    expect(document(W0 - 1)).toEqual({ currency: 'EUR', amounts_exclude_vat: true, last_changed: null, families: [] });
    const atW1 = document(W1 + 1).families[0].prices;
    expect(atW1.map((p) => [p.product_key, p.amount, p.valid_until])).toEqual([
      ['storage.gp1', '0.0500', null],
      ['storage.io1', '0.0480', null], // its end is set only at W2
    ]);
    expect(document(W2).families[0].prices[1].valid_until).toBe('2026-06-01T00:00:00Z');
    expect(document(W2).last_changed).toBe('2026-03-10T00:00:00Z');
  });
});

describe('productChanges', () => {
  const known = runNow(knownPrices(records, log));

  it('gives each change of a product’s entry: when recorded, changed, its end set, and ended', () => {
    const gp1Changes = productChanges('storage.gp1', known.get('storage.gp1')!);
    expect(gp1Changes.map((c) => [c.at, c.before?.amount ?? null, c.after?.amount ?? null])).toEqual([
      [W0, null, '0.0480'], // a backfill appears at its write, not at its valid_from
      [W1, '0.0480', '0.0500'],
    ]);
    expect(gp1Changes[1].before?.validUntil).toBeNull(); // as the list showed it just before W1
    const io1Changes = productChanges('storage.io1', known.get('storage.io1')!);
    expect(
      io1Changes.map((c) => [c.at, c.before === null ? 'none' : c.before.validUntil, c.after?.amount ?? null]),
    ).toEqual([
      [W0, 'none', '0.0480'],
      [W2, null, '0.0480'], // the end set: the entry shows valid_until from W2 on
      [END, END, '0.2'],
    ]);
  });

  it('orders the feed by instant, then the list’s order; indexAfter finds the change after a place', () => {
    const feed = [...known]
      .flatMap(([key, prices]) => productChanges(key, prices))
      .sort((a, b) => a.at - b.at || a.family - b.family || (a.sortKey < b.sortKey ? -1 : 1));
    expect(feed.map((c) => [c.at, c.productKey])).toEqual([
      [W0, 'storage.gp1'],
      [W0, 'storage.io1'],
      [W1, 'storage.gp1'],
      [W2, 'storage.io1'],
      [END, 'storage.io1'],
    ]);
    expect(indexAfter(feed, { at: W0, productKey: '' })).toBe(0);
    expect(indexAfter(feed, { at: W0, productKey: 'storage.gp1' })).toBe(1);
    expect(indexAfter(feed, { at: W0, productKey: 'storage.io1' })).toBe(2);
    expect(indexAfter(feed, { at: W0, productKey: 'compute.g2.4' })).toBe(0); // a family before storage
    expect(indexAfter(feed, { at: END, productKey: 'storage.io1' })).toBe(5);
    expect(countUpTo(writes, W1)).toBe(2);
    expect(countUpTo(writes, W0 - 1)).toBe(0);
  });
});
