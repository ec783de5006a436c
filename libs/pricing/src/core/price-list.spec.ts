import { compareNatural } from '../catalogue/natural-order';
import { seededRandom } from '../testing/seeded-random';
import { ListHistory } from './list-history';
import { priceListDocument } from './price-list';
import type { ListAt, PriceListDocument } from './price-list';
import { isInForce, type PriceRecord } from './price-record';
import { priceRecord } from './price-record.fixture';
import { runNow } from './slices';

/** An instant as the list holds it: epoch milliseconds. */
const ms = (iso: string): number => Date.parse(iso);

/** The history of `records` (each known from when it was recorded, with its end as stored) and `writes`. */
const historyOf = (records: readonly PriceRecord[], writes: readonly number[]): ListHistory =>
  runNow(ListHistory.build({ records, ends: new Map(), writes, lastChangeId: 0 }));

/** The public list of `records` and `writes` at `at`. */
function listOf(records: readonly PriceRecord[], writes: readonly number[], at: number): ListAt {
  return runNow(historyOf(records, writes).listAt(at));
}

interface History {
  readonly records: readonly PriceRecord[];
  readonly writes: readonly number[];
}

function buildPriceList(history: History, at: Date): PriceListDocument {
  return priceListDocument(listOf(history.records, history.writes, at.getTime()));
}

const at = (iso: string): Date => new Date(iso);

/** A price per hour of use (per 3600 seconds), as compute instances and floating IPs are priced. */
const perHour = (productKey: string, fields: Parameters<typeof priceRecord>[0] = {}): PriceRecord =>
  priceRecord({ productKey, unitType: 'seconds', unitCount: 3600, ...fields });

describe('buildPriceList', () => {
  it('lists families in the order of section 2.4 and leaves out families without a current price', () => {
    const records = [
      priceRecord({
        productKey: 'observability.ingested_sample',
        unitType: 'samples',
        unitCount: 1000000,
        amount: '0.000012',
      }),
      priceRecord({ productKey: 'network.vpc_egress', unitType: 'gb', unitCount: 1, amount: '0.01' }),
      perHour('compute.g2.4', { amount: '0.0610' }),
      priceRecord({ productKey: 'storage.snapshot', amount: '0.02' }),
      perHour('network.floating_ip', { amount: '0.005' }),
    ];
    const list = buildPriceList({ records, writes: [] }, at('2026-06-01T00:00:00Z'));
    expect(list.families.map((f) => f.family)).toEqual([
      'compute_instance',
      'network_floating_ip',
      'network_vpc_egress',
      'storage_snapshot',
      'observability_ingested_sample',
    ]);
  });

  it('orders prices by product key with numeric parts compared as numbers', () => {
    const keys = ['compute.g2.16', 'compute.m3.2', 'compute.g2.2', 'compute.g2.4'];
    const records = keys.map((productKey) => perHour(productKey));
    const list = buildPriceList({ records, writes: [] }, at('2026-06-01T00:00:00Z'));
    expect(list.families[0].prices.map((p) => p.product_key)).toEqual([
      'compute.g2.2',
      'compute.g2.4',
      'compute.g2.16',
      'compute.m3.2',
    ]);
  });

  it('serializes to exactly the documented shape, dimensions only where the family has them', () => {
    const records = [
      perHour('compute.g2.4', { amount: '0.0610', validUntil: '2027-01-01T00:00:00Z' }),
      priceRecord({ productKey: 'storage.gp1', amount: '0.0480' }),
      priceRecord({ productKey: 'network.vpc_ingress', unitType: 'gb', unitCount: 1, amount: '0' }),
    ];
    const list = buildPriceList({ records, writes: [ms('2026-02-03T04:05:06.789Z')] }, at('2026-06-01T00:00:00Z'));
    expect(JSON.stringify(list)).toBe(
      '{"currency":"EUR","amounts_exclude_vat":true,"last_changed":"2026-02-03T04:05:06.789Z","families":[' +
        '{"family":"compute_instance","prices":[{"product_key":"compute.g2.4","dimensions":{"instance_type":"g2.4"},' +
        '"unit_type":"seconds","unit_count":3600,"amount":"0.0610","valid_from":"2026-01-01T00:00:00Z","valid_until":"2027-01-01T00:00:00Z"}]},' +
        '{"family":"network_vpc_ingress","prices":[{"product_key":"network.vpc_ingress","unit_type":"gb","unit_count":1,' +
        '"amount":"0","valid_from":"2026-01-01T00:00:00Z","valid_until":null}]},' +
        '{"family":"storage_volume","prices":[{"product_key":"storage.gp1","dimensions":{"storage_class":"gp1"},' +
        '"unit_type":"gib_hours","unit_count":730,"amount":"0.0480","valid_from":"2026-01-01T00:00:00Z","valid_until":null}]}]}',
    );
    expect(list.families[1].prices[0]).not.toHaveProperty('dimensions');
  });

  it('keeps amounts as set: trailing zeros, many decimals, never exponent form', () => {
    const records = [
      priceRecord({ productKey: 'storage.gp1', amount: '0.000000012' }),
      priceRecord({ productKey: 'storage.io1', amount: '12.50000' }),
    ];
    const list = buildPriceList({ records, writes: [] }, at('2026-06-01T00:00:00Z'));
    expect(list.families[0].prices.map((p) => p.amount)).toEqual(['0.000000012', '12.50000']);
  });

  it('lists only prices in effect: valid_from inclusive, valid_until exclusive', () => {
    const old = priceRecord({ amount: '1', validFrom: '2026-01-01T00:00:00Z', validUntil: '2026-07-01T00:00:00Z' });
    const next = priceRecord({ amount: '2', validFrom: '2026-07-01T00:00:00Z' });
    const history = { records: [old, next], writes: [] };
    const amountsAt = (iso: string) =>
      buildPriceList(history, at(iso)).families.flatMap((f) => f.prices.map((p) => p.amount));
    expect(amountsAt('2025-12-31T23:59:59.999Z')).toEqual([]);
    expect(amountsAt('2026-01-01T00:00:00Z')).toEqual(['1']);
    expect(amountsAt('2026-06-30T23:59:59.999Z')).toEqual(['1']);
    expect(amountsAt('2026-07-01T00:00:00Z')).toEqual(['2']); // exactly one price at the boundary
  });

  it('never lists organization prices', () => {
    const records = [priceRecord({ organizationId: 'org_42', amount: '0.01' })];
    const list = buildPriceList({ records, writes: [] }, at('2026-06-01T00:00:00Z'));
    expect(list.families).toEqual([]);
    expect(list.last_changed).toBeNull();
  });

  it('has last_changed null and no families when nothing was ever priced', () => {
    expect(JSON.stringify(buildPriceList({ records: [], writes: [] }, at('2026-06-01T00:00:00Z')))).toBe(
      '{"currency":"EUR","amounts_exclude_vat":true,"last_changed":null,"families":[]}',
    );
  });
});

describe('last_changed', () => {
  const lastChangedAt = (history: History, instant: Date): Date | null => {
    const latest = listOf(history.records, history.writes, instant.getTime()).lastChanged;
    return latest === null ? null : new Date(latest);
  };
  const record = priceRecord({ validFrom: '2026-03-01T00:00:00Z', validUntil: '2026-09-01T00:00:00Z' });

  it('is the latest write, valid_from or valid_until that has passed', () => {
    const history = { records: [record], writes: [ms('2026-02-01T00:00:00Z')] };
    expect(lastChangedAt(history, at('2026-02-15T00:00:00Z'))).toEqual(at('2026-02-01T00:00:00Z'));
    expect(lastChangedAt(history, at('2026-03-01T00:00:00Z'))).toEqual(at('2026-03-01T00:00:00Z'));
    expect(lastChangedAt(history, at('2026-12-01T00:00:00Z'))).toEqual(at('2026-09-01T00:00:00Z'));
  });

  it('counts a write that removed a record (a withdrawal) through the change log', () => {
    const history = { records: [record], writes: [ms('2026-02-01T00:00:00Z'), ms('2026-04-01T00:00:00Z')] };
    expect(lastChangedAt(history, at('2026-05-01T00:00:00Z'))).toEqual(at('2026-04-01T00:00:00Z'));
  });

  it('ignores organization records', () => {
    const org = priceRecord({ organizationId: 'org_1', validFrom: '2026-05-01T00:00:00Z' });
    expect(lastChangedAt({ records: [record, org], writes: [] }, at('2026-06-01T00:00:00Z'))).toEqual(
      at('2026-03-01T00:00:00Z'),
    );
  });
});

describe('the next change', () => {
  const nextTransitionAfter = (history: History, instant: Date): Date | null => {
    const next = listOf(history.records, history.writes, instant.getTime()).nextChange;
    return next === Infinity ? null : new Date(next);
  };
  it('is the next valid_from or valid_until of a list price after the instant', () => {
    const records = [
      priceRecord({ validFrom: '2026-01-01T00:00:00Z', validUntil: '2026-07-01T00:00:00Z' }),
      priceRecord({ productKey: 'storage.io1', validFrom: '2026-05-01T00:00:00Z' }),
      priceRecord({ organizationId: 'org_1', validFrom: '2026-02-01T00:00:00Z' }),
    ];
    expect(nextTransitionAfter({ records, writes: [] }, at('2026-01-15T00:00:00Z'))).toEqual(
      at('2026-05-01T00:00:00Z'),
    );
    expect(nextTransitionAfter({ records, writes: [] }, at('2026-05-01T00:00:00Z'))).toEqual(
      at('2026-07-01T00:00:00Z'),
    );
    expect(nextTransitionAfter({ records, writes: [] }, at('2026-07-01T00:00:00Z'))).toBeNull();
  });

  it('counts a write stamped a little after the instant (the database clock ahead of ours)', () => {
    const history = { records: [], writes: [ms('2026-07-01T00:00:00.004Z')] };
    expect(nextTransitionAfter(history, at('2026-07-01T00:00:00Z'))).toEqual(at('2026-07-01T00:00:00.004Z'));
    expect(nextTransitionAfter(history, at('2026-07-01T00:00:00.004Z'))).toBeNull();
  });
});

describe('the prices listed', () => {
  const countListPrices = (history: History, instant: Date): number =>
    listOf(history.records, history.writes, instant.getTime()).prices.length;
  it('counts the prices the list at that instant holds: list prices in force only', () => {
    const records = [
      priceRecord({ productKey: 'storage.gp1', validUntil: '2026-07-01T00:00:00Z' }),
      priceRecord({ productKey: 'storage.gp1', validFrom: '2026-07-01T00:00:00Z', amount: '0.0500' }),
      priceRecord({ productKey: 'storage.st1', validFrom: '2026-03-01T00:00:00Z' }),
      priceRecord({ productKey: 'storage.io1', organizationId: 'org_42' }),
      perHour('compute.g2.4', { validUntil: '2026-02-01T00:00:00Z' }),
    ];
    const history = { records, writes: [] };
    for (const instant of ['2026-01-15T00:00:00Z', '2026-06-30T23:59:59Z', '2026-07-01T00:00:00Z']) {
      const listed = buildPriceList(history, at(instant)).families.flatMap((f) => f.prices).length;
      expect(countListPrices(history, at(instant))).toBe(listed);
    }
    expect(countListPrices(history, at('2026-01-15T00:00:00Z'))).toBe(2);
    expect(countListPrices(history, at('2026-07-01T00:00:00Z'))).toBe(2);
  });
});

describe('the list at every instant', () => {
  const from = at('2026-06-01T00:00:00Z');
  const day = 86_400_000;

  /** What the rules of the document give, computed naively from the whole history. */
  function expected(history: History, t: number): { document: PriceListDocument; next: number } {
    const listed = history.records
      .filter((r) => r.organizationId === null && isInForce(r, t))
      .sort((a, b) => compareNatural(a.productKey, b.productKey));
    const instants = [
      ...history.writes,
      ...history.records
        .filter((r) => r.organizationId === null)
        .flatMap((r) => [r.validFrom, r.validUntil ?? Infinity]),
    ];
    const past = instants.filter((i) => i <= t);
    const lastChanged = past.length === 0 ? null : Math.max(...past);
    const document = listOf(listed, [], t); // families in the order of section 2.4, checked above
    return {
      document: {
        ...priceListDocument(document),
        last_changed: lastChanged === null ? null : new Date(lastChanged).toISOString().replace('.000Z', 'Z'),
      },
      next: Math.min(...instants.filter((i) => i > t)),
    };
  }

  /** A whole number of days from `base`, drawn from the `days` days around it. */
  const near = (random: () => number, base: number, days: number): number =>
    base + Math.round((random() - 0.5) * days) * day;

  function randomHistory(random: () => number, base: number): History {
    const records = Array.from({ length: 1 + Math.floor(random() * 8) }, (_, i) => {
      const validFrom = near(random, base, 200);
      const validUntil = random() < 0.3 ? null : validFrom + (1 + Math.floor(random() * 90)) * day;
      return perHour(`compute.g${i}.${Math.floor(random() * 3)}`, {
        organizationId: random() < 0.2 ? 'org_1' : null,
        validFrom,
        validUntil,
      });
    });
    return { records, writes: Array.from({ length: Math.floor(random() * 4) }, () => near(random, base, 200)) };
  }

  it('gives the list, last_changed and next change the rules of the document give for the whole history', () => {
    const random = seededRandom(20261122);
    for (let round = 0; round < 200; round++) {
      const history = randomHistory(random, from.getTime());
      const built = historyOf(history.records, history.writes);
      const start = near(random, from.getTime(), 200);
      for (const offset of [0, 1, day, 30 * day, 120 * day]) {
        const t = start + offset;
        const found = runNow(built.listAt(t));
        const { document, next } = expected(history, t);
        expect(priceListDocument(found)).toEqual(document);
        expect(found.nextChange).toBe(next);
      }
    }
  });
});
