import { runNow } from '../core/slices';
import type { PriceRecord } from '../core/price-record';
import { jan1, priceRecord } from '../core/price-record.fixture';
import type { PricingChanges, PricingData } from '../database/pricing-data';
import { renderPriceList } from '../rendering/price-list-response';
import { PREPARE_AHEAD_MS, PricingSnapshot } from './pricing-snapshot';

const ms = (iso: string): number => Date.parse(iso);
const LOADED = ms('2026-06-01T00:00:00Z');
const LATER = ms('2026-08-01T00:00:00Z');

const gp1Ended = priceRecord({
  amount: '0.0400',
  validFrom: jan1(2025),
  validUntil: jan1(2026),
});
const gp1 = priceRecord({ amount: '0.0480', validFrom: jan1(2026) });
const io1 = priceRecord({ productKey: 'storage.io1', amount: '0.1250', validFrom: '2025-06-01T00:00:00Z' });
const io1Agreed = priceRecord({ productKey: 'storage.io1', organizationId: 'org_1', amount: '0.1000' });

function data(records: PriceRecord[], fields: Partial<PricingData> = {}): PricingData {
  return {
    records,
    availability: new Map(),
    ends: new Map(),
    listWrites: [ms(jan1(2025))],
    version: '3',
    lastChangeId: '10',
    lastChangedAt: ms('2026-05-01T00:00:00Z'),
    readAt: LOADED,
    marginMs: 0,
    ...fields,
  };
}

/** The io1 list price ends on 2026-07-01 and a new one follows; org_1's agreed price is withdrawn. */
function changes(fields: Partial<PricingChanges> = {}): { changes: PricingChanges; after: PricingData } {
  const ended = { ...io1, validUntil: ms('2026-07-01T00:00:00Z') };
  const next = priceRecord({ productKey: 'storage.io1', amount: '0.1300', validFrom: '2026-07-01T00:00:00Z' });
  const writes = [ms('2026-06-01T00:00:00Z')];
  return {
    changes: {
      sinceChangeId: '10',
      sinceChangedAt: ms('2026-05-01T00:00:00Z'),
      productKeys: ['storage.io1'],
      records: [ended, next],
      ends: new Map([
        [
          io1.id,
          [
            { from: io1.recordedAt ?? io1.validFrom, validUntil: null },
            { from: writes[0], validUntil: ended.validUntil },
          ],
        ],
      ]),
      availability: new Map([['storage.io1', false]]),
      // The list's entries of the write (org_1's withdrawal is not the list's).
      listLog: [
        {
          changeId: 11,
          at: writes[0],
          productKey: 'storage.io1',
          ends: [{ id: io1.id, validUntil: ended.validUntil }],
        },
        { changeId: 12, at: writes[0], productKey: 'storage.io1', set: { id: next.id, validUntil: null } },
      ],
      version: '4',
      lastChangeId: '13',
      lastChangedAt: writes[0],
      readAt: writes[0],
      marginMs: 0,
      writeCount: 1,
      recordCount: 4,
      ...fields,
    },
    after: data([gp1Ended, gp1, ended, next], {
      availability: new Map([['storage.io1', false]]),
      ends: new Map([
        [
          io1.id,
          [
            { from: io1.recordedAt, validUntil: null },
            { from: writes[0], validUntil: ended.validUntil },
          ],
        ],
      ]),
      listWrites: [ms(jan1(2025)), ...writes],
      version: '4',
      lastChangeId: '13',
      lastChangedAt: writes[0],
    }),
  };
}

describe('PricingSnapshot', () => {
  let held: PricingSnapshot;
  beforeAll(async () => {
    held = await PricingSnapshot.build(data([gp1Ended, gp1, io1, io1Agreed]), LOADED);
  });

  it('prepares the answers of the list now, and serves them without rendering again', () => {
    const now = held.priceListAt(LOADED);
    expect(held.priceListAt(LATER)).toBe(now); // nothing changes by itself: one list from now on
    expect(now.expiresAtMs).toBe(Infinity);
    expect(JSON.parse(now.body.toString())).toEqual(held.documentAt(LOADED));
    expect(now.ok.gzip.headers['content-encoding']).toBe('gzip');
    expect(held.preparedUntil).toBe(Infinity);
  });

  it('prepares the lists of the instants at which the list changes within PREPARE_AHEAD_MS', async () => {
    const soon = LOADED + PREPARE_AHEAD_MS / 2;
    const ending = { ...gp1, validUntil: soon };
    const later = priceRecord({ productKey: 'storage.st1', validFrom: LOADED + 10 * PREPARE_AHEAD_MS });
    const snapshot = await PricingSnapshot.build(data([gp1Ended, ending, io1, later]), LOADED);
    const first = snapshot.priceListAt(LOADED);
    const second = snapshot.priceListAt(soon);
    expect([first.expiresAtMs, second.builtForMs, second.expiresAtMs]).toEqual([soon, soon, later.validFrom]);
    expect(snapshot.priceListAt(soon)).toBe(second); // prepared, not rendered on demand
    expect(snapshot.preparedUntil).toBe(later.validFrom - PREPARE_AHEAD_MS);
    // Past what is prepared: rendered on demand (never an outdated list), in the plain coding.
    const onDemand = snapshot.priceListAt(later.validFrom);
    expect(onDemand).not.toBe(snapshot.priceListAt(later.validFrom));
    expect(JSON.parse(onDemand.body.toString())).toEqual(snapshot.documentAt(later.validFrom));
    expect(onDemand.ok.gzip.headers['content-encoding']).toBeUndefined();
    // The loader's timer prepares it ahead (price-book-loader.ts).
    const prepared = await snapshot.preparedFor(later.validFrom - PREPARE_AHEAD_MS);
    expect(prepared.priceListAt(later.validFrom)).toBe(prepared.priceListAt(later.validFrom));
    expect(prepared.priceListAt(later.validFrom).etag).toBe(onDemand.etag);
  });

  it('answers lookups over the whole history, organization prices included', () => {
    expect(held.listPriceAt('storage.gp1', ms('2025-06-01T00:00:00Z'))).toBe(gp1Ended);
    expect(held.listPriceAt('storage.gp1', LATER)).toBe(gp1);
    expect(held.organizationPriceAt('storage.io1', 'org_1', LATER)).toBe(io1Agreed);
    expect(held.organizationPriceAt('storage.io1', 'org_2', LATER)).toBeUndefined();
  });

  it("answers an organization's one price and its several prices alike, in any order of records", async () => {
    const ended = priceRecord({
      productKey: 'storage.io1',
      organizationId: 'org_2',
      amount: '0.0900',
      validFrom: jan1(2025),
      validUntil: '2026-07-01T00:00:00Z',
    });
    const next = priceRecord({
      productKey: 'storage.io1',
      organizationId: 'org_2',
      amount: '0.0950',
      validFrom: '2026-07-01T00:00:00Z',
    });
    const snapshot = await PricingSnapshot.build(data([next, io1, io1Agreed, ended]), LOADED);
    expect(snapshot.organizationPriceAt('storage.io1', 'org_1', LATER)).toBe(io1Agreed);
    expect(snapshot.organizationPriceAt('storage.io1', 'org_1', ms(jan1(2024)))).toBeUndefined();
    expect(snapshot.organizationPriceAt('storage.io1', 'org_2', LOADED)).toBe(ended);
    expect(snapshot.organizationPriceAt('storage.io1', 'org_2', LATER)).toBe(next);
    expect(snapshot.applicablePrices('storage.io1', 'org_1')).toEqual({ list: [io1], organization: [io1Agreed] });
    expect(snapshot.applicablePrices('storage.io1', 'org_2')).toEqual({ list: [io1], organization: [ended, next] });
    expect(snapshot.applicablePrices('storage.io1', 'org_3')).toEqual({ list: [io1], organization: [] });
  });

  it('gives the document at an instant before the one it was built at from the whole history', async () => {
    const before = ms('2025-12-15T00:00:00Z');
    const then = await PricingSnapshot.build(data([gp1Ended, gp1, io1, io1Agreed]), before);
    expect(held.documentAt(before)).toEqual(then.documentAt(before));
    expect(held.documentAt(before).families[0].prices[0].amount).toBe('0.0400');
    expect(held.priceListAt(before).body).toEqual(then.priceListAt(before).body);
  });

  it('with changes: what a full read of the database afterwards gives, other keys untouched', async () => {
    const { changes: read, after } = changes();
    const updated = (await held.withChanges(read, LOADED))!;
    const reread = await PricingSnapshot.build(after, LOADED);
    for (const instant of [LOADED, ms('2026-07-01T00:00:00Z'), LATER]) {
      expect(updated.documentAt(instant)).toEqual(reread.documentAt(instant));
      expect(updated.priceListAt(instant).body).toEqual(reread.priceListAt(instant).body);
      for (const key of ['storage.gp1', 'storage.io1']) {
        expect(updated.listPriceAt(key, instant)).toEqual(reread.listPriceAt(key, instant));
      }
    }
    const before = ms('2025-06-01T00:00:00Z');
    expect(updated.documentAt(before)).toEqual(reread.documentAt(before));
    expect(updated.listPriceAt('storage.gp1', before)).toBe(gp1Ended); // read once, kept
    expect(updated.organizationPriceAt('storage.io1', 'org_1', LATER)).toBeUndefined();
    expect([updated.isOnSale('storage.io1'), updated.version, updated.lastChangeId]).toEqual([false, '4', '13']);
    expect(updated.recordCount).toBe(4);
  });

  it.each([
    ['from another change', { sinceChangeId: '9' }],
    ['the version moved by more than the writes read', { version: '5' }],
    ['the database holds another number of records', { recordCount: 5 }],
    // A restore that lost the change read last and gave its id to a later one, or lost it outright.
    ['the change read last is another now', { sinceChangedAt: ms('2026-06-02T00:00:00Z') }],
    ['the change read last is gone', { sinceChangedAt: null }],
  ])('refuses changes that do not follow it (%s): the caller reads everything again', async (_, fields) => {
    expect(await held.withChanges(changes(fields).changes, LOADED)).toBeUndefined();
  });

  it('the list as served at an instant: now, what GET /v1/pricing serves; every instant of a version, one document', async () => {
    const { changes: read } = changes();
    const updated = (await held.withChanges(read, LOADED))!;
    runNow(updated.history.hashFeed()); // as PriceBookLoader does once it shows a snapshot
    const feed = runNow(updated.changesAfter({ at: -8.64e15, productKey: '' }, 1000, Infinity)).changes;
    expect(feed.map((c) => [c.productKey, c.at])).toEqual([
      ['storage.gp1', gp1Ended.recordedAt], // known from its record: recorded 2025-12-01
      ['storage.io1', io1.recordedAt],
      ['storage.gp1', ms(jan1(2026))],
      ['storage.io1', ms('2026-06-01T00:00:00Z')], // its end set: shown from the write on
      ['storage.io1', ms('2026-07-01T00:00:00Z')],
    ]);
    for (const at of [LOADED, ms('2026-06-30T23:59:59.999Z'), ms('2026-07-01T00:00:00Z'), LATER]) {
      const past = await renderPriceList(updated.pastList(at));
      expect(past.body.toString()).toBe(updated.priceListAt(at).body.toString());
      const version = updated.history.versionAt(at);
      expect(version).toBeLessThanOrEqual(at);
      const span = await renderPriceList(updated.pastList(version));
      expect(span.etag).toBe(past.etag);
    }
    expect(updated.history.versionAt(ms('2024-12-31T23:59:59.999Z'))).toBe(-Infinity);
    expect(updated.history.versionAt(ms(jan1(2025)))).toBe(ms(jan1(2025))); // the write of 2025
    // Paged, and only what is settled: changes at or after `before` wait.
    expect(runNow(updated.changesAfter({ at: -8.64e15, productKey: '' }, 1, Infinity))).toMatchObject({ more: true });
    const settled = runNow(updated.changesAfter({ at: -8.64e15, productKey: '' }, 1000, ms('2026-07-01T00:00:00Z')));
    expect([settled.changes.length, settled.more]).toEqual([4, false]);
  });
});
