import { buildPriceList } from '../core/build-price-list';
import type { PriceRecord } from '../core/price-record';
import { priceRecord } from '../core/price-record.fixture';
import { jan1 } from '../core/price-record.fixture';
import type { PricingChanges, PricingData } from '../database/pricing-data';
import { PricingSnapshot } from './pricing-snapshot';

const ms = (iso: string): number => Date.parse(iso);
const at = (iso: string): Date => new Date(iso);
const LOADED = at('2026-06-01T00:00:00Z');
const LATER = at('2026-08-01T00:00:00Z');

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
    listWrites: [ms(jan1(2025))],
    version: '3',
    lastChangeId: '10',
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
      productKeys: ['storage.io1'],
      records: [ended, next],
      availability: new Map([['storage.io1', false]]),
      listWrites: writes,
      version: '4',
      lastChangeId: '13',
      writeCount: 1,
      recordCount: 4,
      ...fields,
    },
    after: data([gp1Ended, gp1, ended, next], {
      availability: new Map([['storage.io1', false]]),
      listWrites: [ms(jan1(2025)), ...writes],
      version: '4',
      lastChangeId: '13',
    }),
  };
}

describe('PricingSnapshot', () => {
  const held = PricingSnapshot.of(data([gp1Ended, gp1, io1, io1Agreed]), LOADED);

  it('holds for the public list only what can still be listed, and what last_changed needs', () => {
    expect(held.listHistory.records).toEqual([gp1, io1]);
    // The ended gp1 price and the write of 2025: the two latest of their instants.
    expect(held.listHistory.writes).toEqual([ms(jan1(2025)), ms(jan1(2026))]);
  });

  it('answers lookups over the whole history, organization prices included', () => {
    expect(held.listPriceAt('storage.gp1', at('2025-06-01T00:00:00Z'))).toBe(gp1Ended);
    expect(held.listPriceAt('storage.gp1', LATER)).toBe(gp1);
    expect(held.organizationPriceAt('storage.io1', 'org_1', LATER)).toBe(io1Agreed);
    expect(held.organizationPriceAt('storage.io1', 'org_2', LATER)).toBeUndefined();
  });

  it("answers an organization's one price and its several prices alike, in any order of records", () => {
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
    const snapshot = PricingSnapshot.of(data([next, io1, io1Agreed, ended]), LOADED);
    expect(snapshot.organizationPriceAt('storage.io1', 'org_1', LATER)).toBe(io1Agreed);
    expect(snapshot.organizationPriceAt('storage.io1', 'org_1', at(jan1(2024)))).toBeUndefined();
    expect(snapshot.organizationPriceAt('storage.io1', 'org_2', LOADED)).toBe(ended);
    expect(snapshot.organizationPriceAt('storage.io1', 'org_2', LATER)).toBe(next);
    expect(snapshot.applicablePrices('storage.io1', 'org_1')).toEqual({ list: [io1], organization: [io1Agreed] });
    expect(snapshot.applicablePrices('storage.io1', 'org_2')).toEqual({ list: [io1], organization: [ended, next] });
    expect(snapshot.applicablePrices('storage.io1', 'org_3')).toEqual({ list: [io1], organization: [] });
  });

  it('builds the list before the instant it was compacted at from the whole history', () => {
    const before = at('2025-06-01T00:00:00Z');
    const whole = { records: [gp1Ended, gp1, io1], writes: [ms(jan1(2025))] };
    expect(buildPriceList(held.listHistoryAt(before), before)).toEqual(buildPriceList(whole, before));
    expect(held.listHistoryAt(LATER)).toBe(held.listHistory);
  });

  it('in slices: the same snapshot as at once', async () => {
    expect(await PricingSnapshot.build(data([gp1Ended, gp1, io1, io1Agreed]), LOADED)).toEqual(held);
  });

  it('with changes: what a full read of the database afterwards gives, other keys untouched', async () => {
    const { changes: read, after } = changes();
    const updated = (await held.withChanges(read, LOADED))!;
    const reread = PricingSnapshot.of(after, LOADED);
    for (const instant of [LOADED, at('2026-07-01T00:00:00Z'), LATER]) {
      expect(buildPriceList(updated.listHistoryAt(instant), instant)).toEqual(
        buildPriceList(reread.listHistoryAt(instant), instant),
      );
      for (const key of ['storage.gp1', 'storage.io1']) {
        expect(updated.listPriceAt(key, instant)).toEqual(reread.listPriceAt(key, instant));
      }
    }
    const before = at('2025-06-01T00:00:00Z');
    expect(buildPriceList(updated.listHistoryAt(before), before)).toEqual(
      buildPriceList(reread.listHistoryAt(before), before),
    );
    expect(updated.listPriceAt('storage.gp1', before)).toBe(gp1Ended); // read once, kept
    expect(updated.organizationPriceAt('storage.io1', 'org_1', LATER)).toBeUndefined();
    expect([updated.isOnSale('storage.io1'), updated.version, updated.lastChangeId]).toEqual([false, '4', '13']);
  });

  it.each([
    ['from another change', { sinceChangeId: '9' }],
    ['the version moved by more than the writes read', { version: '5' }],
    ['the database holds another number of records', { recordCount: 5 }],
  ])('refuses changes that do not follow it (%s): the caller reads everything again', async (_, fields) => {
    expect(await held.withChanges(changes(fields).changes, LOADED)).toBeUndefined();
  });
});
