import { priceRecord } from '../price-list/price-record.fixture';
import { formatHistory, statusAt, type PriceChange } from './format-history';

const NOW = new Date('2026-06-01T12:00:00Z');
const at = (text: string): Date => new Date(text);
const change = (changedAt: string, kind: PriceChange['change'], id: string | null): PriceChange => ({
  changedAt: at(changedAt),
  change: kind,
  priceRecordId: id,
});

describe('history of one key and scope', () => {
  const ended = priceRecord({
    id: '1',
    amount: '0.0500',
    validFrom: '2025-01-01T00:00:00Z',
    validUntil: '2026-01-01T00:00:00Z',
    supersededBy: '2',
    recordedAt: at('2024-12-01T09:00:00.120Z'),
  });
  const inForce = priceRecord({
    id: '2',
    amount: '0.0480',
    validFrom: '2026-01-01T00:00:00Z',
    validUntil: '2027-01-01T00:00:00Z',
    supersededBy: '3',
    recordedAt: at('2025-11-01T09:00:00Z'),
  });
  const scheduled = priceRecord({
    id: '3',
    amount: '0.0450',
    validFrom: '2027-01-01T00:00:00Z',
    recordedAt: at('2026-05-01T09:00:00Z'),
  });

  it('tells ended, in force and scheduled apart at an instant (valid_until exclusive)', () => {
    expect([ended, inForce, scheduled].map((r) => statusAt(r, NOW))).toEqual(['ended', 'in-force', 'scheduled']);
    expect(statusAt(inForce, at('2027-01-01T00:00:00Z'))).toBe('ended');
    expect(statusAt(scheduled, at('2027-01-01T00:00:00Z'))).toBe('in-force');
  });

  it('prints the records oldest first, then the change log with a withdrawn price', () => {
    const text = formatHistory(
      {
        records: [ended, inForce, scheduled],
        changes: [
          change('2024-12-01T09:00:00.120Z', 'set', '1'),
          change('2025-11-01T09:00:00Z', 'set', '2'),
          change('2025-11-01T09:00:00Z', 'end', '1'),
          change('2026-04-01T09:00:00Z', 'set', '9'),
          change('2026-04-01T09:00:00Z', 'end', '2'),
          change('2026-04-20T09:00:00Z', 'withdraw_price', '9'),
          change('2026-05-01T09:00:00Z', 'set', '3'),
          change('2026-05-01T09:00:00Z', 'end', '2'),
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
    const org = priceRecord({ id: '5', organizationId: 'org_42', recordedAt: at('2026-02-01T00:00:00Z') });
    expect(formatHistory({ records: [org], changes: [] }, 'storage.gp1', 'org_42', NOW)).toBe(
      'history of storage.gp1 (organization org_42) at 2026-06-01T12:00:00Z: 1 record, oldest first\n' +
        'in-force  0.0480 per 730 gib_hours  from 2026-01-01T00:00:00Z  recorded 2026-02-01T00:00:00Z\n',
    );
    expect(formatHistory({ records: [], changes: [] }, 'compute.x1.1', null, NOW)).toBe(
      'history of compute.x1.1 (list price) at 2026-06-01T12:00:00Z: no records\n',
    );
  });
});
