import { priceRecord } from '../core/price-record.fixture';
import { changeLines, loggedChangeJson } from './format-changes';
import type { LoggedChange } from './format-history';

const logged = (change: Partial<LoggedChange> & Pick<LoggedChange, 'change'>): LoggedChange => ({
  changedAt: Date.parse('2026-08-03T10:15:00.250Z'),
  priceRecordId: null,
  actor: 'ana@example.com',
  reason: null,
  productKey: 'compute.g2.4',
  organizationId: null,
  record: null,
  onSale: null,
  ...change,
});

const price = priceRecord({
  id: 7,
  productKey: 'compute.g2.4',
  unitType: 'seconds',
  unitCount: 3600,
  amount: '0.0590',
  validFrom: '2026-09-01T00:00:00Z',
});

describe('the changes command lines', () => {
  it('gives instant, kind, key, scope, price, actor and reason, the first four lined up', () => {
    const text = changeLines([
      logged({ change: 'set', priceRecordId: 7, record: price, reason: 'Q3 review, "g2" family' }),
      logged({ change: 'availability', productKey: 'storage.io1', actor: 'ops-bot', onSale: true }),
      logged({ change: 'availability', productKey: 'storage.st1', actor: 'ops-bot', onSale: false }),
      logged({ change: 'availability', productKey: 'storage.io1', actor: null }), // before the log kept it
      logged({ change: 'withdraw_price', organizationId: 'org_42', priceRecordId: 9, actor: null }),
    ]);
    expect(text).toBe(
      [
        '2026-08-03T10:15:00.250Z  set             compute.g2.4              list              0.0590 per 3600 seconds from 2026-09-01T00:00:00Z  ana@example.com  "Q3 review, \\"g2\\" family"',
        '2026-08-03T10:15:00.250Z  availability    storage.io1               -                 on-sale  ops-bot',
        '2026-08-03T10:15:00.250Z  availability    storage.st1               -                 off-sale  ops-bot',
        '2026-08-03T10:15:00.250Z  availability    storage.io1               -                 -  -',
        '2026-08-03T10:15:00.250Z  withdraw_price  compute.g2.4              org:org_42        a scheduled price, withdrawn  -',
        '',
      ].join('\n'),
    );
  });

  it('says a price is withdrawn on every row of it once its record is gone, and escapes what a terminal would not show', () => {
    const text = changeLines([
      logged({ change: 'set', priceRecordId: 9, reason: 'entered by mistake \u202e' }),
      logged({ change: 'end', priceRecordId: 9, reason: 'a\u200bb' }),
    ]);
    expect(text).toBe(
      [
        '2026-08-03T10:15:00.250Z  set             compute.g2.4              list              a scheduled price, withdrawn  ana@example.com  "entered by mistake \\u202e"',
        '2026-08-03T10:15:00.250Z  end             compute.g2.4              list              a scheduled price, withdrawn  ana@example.com  "a\\u200bb"',
        '',
      ].join('\n'),
    );
  });

  it('keeps the key the third field for awk', () => {
    const lines = changeLines([logged({ change: 'end', record: price, reason: 'a b  c' })]).trimEnd();
    expect(lines.split(/\s+/)[2]).toBe('compute.g2.4');
  });

  it('gives a change as JSON with its key, scope, actor, reason and price', () => {
    expect(loggedChangeJson(logged({ change: 'set', record: price, organizationId: 'org_42' }))).toEqual({
      at: '2026-08-03T10:15:00.250Z',
      change: 'set',
      product_key: 'compute.g2.4',
      organization_id: 'org_42',
      actor: 'ana@example.com',
      reason: null,
      price: {
        unit_type: 'seconds',
        unit_count: 3600,
        amount: '0.0590',
        valid_from: '2026-09-01T00:00:00Z',
        valid_until: null,
      },
      on_sale: null,
    });
  });

  it('gives an availability change as JSON with what it set', () => {
    for (const onSale of [true, false, null]) {
      expect(loggedChangeJson(logged({ change: 'availability', productKey: 'storage.io1', onSale }))).toEqual({
        at: '2026-08-03T10:15:00.250Z',
        change: 'availability',
        product_key: 'storage.io1',
        organization_id: null,
        actor: 'ana@example.com',
        reason: null,
        price: null,
        on_sale: onSale,
      });
    }
  });
});
