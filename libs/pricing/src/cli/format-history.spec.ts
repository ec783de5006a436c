import { jan1, priceRecord } from '../core/price-record.fixture';
import type { LoggedEffect } from '../price-book/change-log-chain';
import { formatHistory, historyJson } from './format-history';
import { statusAt, type PriceChange } from '../price-book/price-history';
import { loggedRecord } from '../price-book/logged-record.fixture';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const at = (text: string): number => Date.parse(text);
const change = (
  changedAt: string,
  kind: PriceChange['change'],
  id: number | null,
  author: Pick<PriceChange, 'actor' | 'reason'> = { actor: null, reason: null },
  effect: LoggedEffect | null = null,
): PriceChange => ({ changedAt: at(changedAt), change: kind, priceRecordId: id, ...author, effect });

describe('history of one key and scope', () => {
  const ended = priceRecord({
    id: 1,
    amount: '0.0500',
    validFrom: jan1(2025),
    validUntil: jan1(2026),
    supersededBy: 2,
    recordedAt: at('2024-12-01T09:00:00.120Z'),
  });
  const inForce = priceRecord({
    id: 2,
    amount: '0.0480',
    validFrom: jan1(2026),
    validUntil: jan1(2027),
    supersededBy: 3,
    recordedAt: at('2025-11-01T09:00:00Z'),
  });
  const scheduled = priceRecord({
    id: 3,
    amount: '0.0450',
    validFrom: jan1(2027),
    recordedAt: at('2026-05-01T09:00:00Z'),
  });

  it('tells ended, in force and scheduled apart at an instant (valid_until exclusive)', () => {
    expect([ended, inForce, scheduled].map((r) => statusAt(r, NOW))).toEqual(['ended', 'in-force', 'scheduled']);
    expect(statusAt(inForce, at(jan1(2027)))).toBe('ended');
    expect(statusAt(scheduled, at(jan1(2027)))).toBe('in-force');
  });

  it('prints the records oldest first, then the change log with a withdrawn price', () => {
    const text = formatHistory(
      {
        records: [ended, inForce, scheduled],
        changes: [
          change('2024-12-01T09:00:00.120Z', 'set', 1),
          change('2025-11-01T09:00:00Z', 'set', 2),
          change('2025-11-01T09:00:00Z', 'end', 1),
          change('2026-04-01T09:00:00Z', 'set', 9),
          change('2026-04-01T09:00:00Z', 'end', 2),
          change('2026-04-20T09:00:00Z', 'withdraw_price', 9),
          change('2026-05-01T09:00:00Z', 'set', 3),
          change('2026-05-01T09:00:00Z', 'end', 2),
        ],
      },
      'storage.gp1',
      null,
      NOW,
    );
    expect(text).toBe(
      [
        'history of storage.gp1 (list price) at 2026-06-01T12:00:00Z: 3 records, 1 withdrawn, oldest first',
        'ended     0.0500 per 730 gib_hours  from 2025-01-01T00:00:00Z until 2026-01-01T00:00:00Z  recorded 2024-12-01T09:00:00.120Z',
        'in-force  0.0480 per 730 gib_hours  from 2026-01-01T00:00:00Z until 2027-01-01T00:00:00Z  recorded 2025-11-01T09:00:00Z',
        'scheduled 0.0450 per 730 gib_hours  from 2027-01-01T00:00:00Z                             recorded 2026-05-01T09:00:00Z',
        'changes, oldest first:',
        '  2024-12-01T09:00:00.120Z  set           0.0500 per 730 gib_hours from 2025-01-01T00:00:00Z',
        '  2025-11-01T09:00:00Z      set           0.0480 per 730 gib_hours from 2026-01-01T00:00:00Z',
        '  2025-11-01T09:00:00Z      end set       0.0500 per 730 gib_hours from 2025-01-01T00:00:00Z',
        '  2026-04-01T09:00:00Z      set           a scheduled price, withdrawn since',
        '  2026-04-01T09:00:00Z      end set       0.0480 per 730 gib_hours from 2026-01-01T00:00:00Z',
        '  2026-04-20T09:00:00Z      withdrawn     the scheduled price recorded 2026-04-01T09:00:00Z',
        '  2026-05-01T09:00:00Z      set           0.0450 per 730 gib_hours from 2027-01-01T00:00:00Z',
        '  2026-05-01T09:00:00Z      end set       0.0480 per 730 gib_hours from 2026-01-01T00:00:00Z',
        '',
      ].join('\n'),
    );
  });

  it("names an organization's scope, and says when there is nothing", () => {
    const org = priceRecord({ id: 5, organizationId: 'org_42', recordedAt: at('2026-02-01T00:00:00Z') });
    expect(formatHistory({ records: [org], changes: [] }, 'storage.gp1', 'org_42', NOW)).toBe(
      'history of storage.gp1 (organization org_42) at 2026-06-01T12:00:00Z: 1 record, oldest first\n' +
        'in-force  0.0480 per 730 gib_hours  from 2026-01-01T00:00:00Z  recorded 2026-02-01T00:00:00Z\n',
    );
    expect(formatHistory({ records: [], changes: [] }, 'compute.x1.1', null, NOW)).toBe(
      'history of compute.x1.1 (list price) at 2026-06-01T12:00:00Z: no records\n',
    );
  });
});

describe('who changed a price, and why', () => {
  const first = priceRecord({ id: 1, amount: '0.0500', validFrom: jan1(2025), supersededBy: 2 });
  const second = priceRecord({ id: 2, amount: '0.0480', validFrom: jan1(2026) });
  const history = {
    records: [first, second],
    changes: [
      change('2024-12-01T09:00:00Z', 'set', 1, undefined, { record: loggedRecord({ ...first, supersededBy: null }) }),
      change(
        '2025-11-01T09:00:00Z',
        'set',
        2,
        { actor: 'ana@example.com', reason: 'Q1 "storage" review' },
        { record: loggedRecord(second) },
      ),
      change(
        '2025-11-01T09:00:00Z',
        'end',
        1,
        { actor: 'ana@example.com', reason: null },
        { ends: [loggedRecord(first)] },
      ),
    ],
  };

  it('appends the actor and the quoted reason to each change line, lined up after the price', () => {
    const lines = formatHistory(history, 'storage.gp1', null, NOW).split('\n');
    expect(lines.slice(4, 7)).toEqual([
      '  2024-12-01T09:00:00Z  set           0.0500 per 730 gib_hours from 2025-01-01T00:00:00Z',
      '  2025-11-01T09:00:00Z  set           0.0480 per 730 gib_hours from 2026-01-01T00:00:00Z  ana@example.com  "Q1 \\"storage\\" review"',
      '  2025-11-01T09:00:00Z  end set       0.0500 per 730 gib_hours from 2025-01-01T00:00:00Z  ana@example.com',
    ]);
  });

  it('gives them in --json, null where a write was recorded before actors were', () => {
    const json = JSON.parse(historyJson(history, 'storage.gp1', null, NOW)) as {
      changes: { at: string; change: string; actor: string | null; reason: string | null; price: unknown }[];
    };
    expect(json.changes.map(({ at, change, actor, reason }) => [at, change, actor, reason])).toEqual([
      ['2024-12-01T09:00:00Z', 'set', null, null],
      ['2025-11-01T09:00:00Z', 'set', 'ana@example.com', 'Q1 "storage" review'],
      ['2025-11-01T09:00:00Z', 'end', 'ana@example.com', null],
    ]);
    expect(json.changes[1].price).toEqual({
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0480',
      valid_from: jan1(2026),
      valid_until: null,
    });
  });
});

describe('history of a scope with many records', () => {
  it('lines them up without failing on their number (the widths were a spread into Math.max)', () => {
    const many = 250_000;
    const records = Array.from({ length: many }, (_, i) =>
      priceRecord({
        amount: String(i),
        validFrom: Date.UTC(2000, 0, 1) + i * 60_000,
        validUntil: Date.UTC(2000, 0, 1) + (i + 1) * 60_000,
      }),
    );
    const text = formatHistory({ records, changes: [] }, 'storage.gp1', null, at(jan1(2030)));
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(many + 1);
    expect(lines[0]).toMatch(/: 250000 records, oldest first$/);
  });
});

describe('history of a product that is not on sale, or whose availability changed', () => {
  const record = priceRecord({
    id: 20,
    productKey: 'storage.io1',
    amount: '0.1250',
    recordedAt: at('2026-02-01T00:00:00Z'),
  });
  const schema = { actor: 'pricing-schema', reason: 'off sale since the schema was made' };
  const history = {
    records: [record],
    changes: [
      { ...change('2026-01-01T00:00:00Z', 'availability', null, schema, { on_sale: false }), onSale: false },
      change('2026-02-01T00:00:00Z', 'set', 20, { actor: 'ana', reason: null }),
      { ...change('2026-03-01T00:00:00Z', 'availability', null, { actor: 'bo', reason: null }, null), onSale: null },
    ],
    onSale: false,
  };

  it('says so on a line of its own, and the availability changes among the others, in every scope', () => {
    const lines = formatHistory(history, 'storage.io1', null, NOW).split('\n');
    expect(lines[2]).toBe('availability: off sale (ordering it fails with PRODUCT_UNAVAILABLE)');
    expect(lines.slice(3, -1).map((line) => line.trim().split(/ {2,}/).slice(1))).toEqual([
      [], // changes, oldest first:
      ['off sale', 'the product, in every scope', 'pricing-schema', '"off sale since the schema was made"'],
      ['set', '0.1250 per 730 gib_hours from 2026-01-01T00:00:00Z', 'ana'],
      ['availability', 'the product, in every scope', 'bo'], // recorded before the log kept what it set
    ]);
  });

  it('gives on_sale in JSON, for the product and for each availability change', () => {
    const json = JSON.parse(historyJson(history, 'storage.io1', null, NOW)) as {
      on_sale: boolean;
      changes: { change: string; on_sale: boolean | null }[];
    };
    expect(json.on_sale).toBe(false);
    expect(json.changes.map(({ change, on_sale }) => [change, on_sale])).toEqual([
      ['availability', false],
      ['set', null],
      ['availability', null],
    ]);
  });

  it('says nothing of availability for a product on sale that never changed, and "no records" for one never priced', () => {
    expect(formatHistory({ records: [record], changes: [] }, 'storage.io1', null, NOW)).not.toContain('availability');
    expect(formatHistory({ records: [], changes: [], onSale: true }, 'compute.h9.1', null, NOW)).toMatch(
      /: no records\n$/,
    );
    expect(formatHistory({ records: [], changes: [], onSale: false }, 'compute.h9.1', null, NOW)).toContain(
      'availability: off sale',
    );
  });
});
