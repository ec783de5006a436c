import { priceRecord } from '../core/price-record.fixture';
import { changeLines, loggedChangeJson } from './format-changes';
import type { LoggedChange } from '../price-book/price-history';
import { loggedRecord } from '../price-book/logged-record.fixture';

const logged = (change: Partial<LoggedChange> & Pick<LoggedChange, 'change'>): LoggedChange => ({
  changedAt: Date.parse('2026-08-03T10:15:00.250Z'),
  priceRecordId: null,
  actor: 'ana@example.com',
  reason: null,
  productKey: 'compute.g2.4',
  organizationId: null,
  effect: null,
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

/** What changeLines prints for these lines: each one ends with a line break. */
const printed = (...lines: string[]): string => lines.map((line) => `${line}\n`).join('');

describe('the changes command lines', () => {
  it('gives instant, kind, key, scope, price, actor and reason, the first four lined up', () => {
    const text = changeLines([
      logged({
        change: 'set',
        priceRecordId: 7,
        effect: { record: loggedRecord(price) },
        reason: 'Q3 review, "g2" family',
      }),
      logged({ change: 'availability', productKey: 'storage.io1', actor: 'ops-bot', onSale: true }),
      logged({ change: 'availability', productKey: 'storage.st1', actor: 'ops-bot', onSale: false }),
      logged({ change: 'availability', productKey: 'storage.io1', actor: null }), // before the log kept it
      logged({
        change: 'withdraw_price',
        organizationId: 'org_42',
        priceRecordId: 9,
        effect: { deleted: '9' },
        actor: null,
      }),
    ]);
    expect(text).toBe(
      printed(
        '2026-08-03T10:15:00.250Z  set             compute.g2.4              list              0.0590 per 3600 seconds from 2026-09-01T00:00:00Z  ana@example.com  "Q3 review, \\"g2\\" family"',
        '2026-08-03T10:15:00.250Z  availability    storage.io1               -                 on-sale  ops-bot',
        '2026-08-03T10:15:00.250Z  availability    storage.st1               -                 off-sale  ops-bot',
        '2026-08-03T10:15:00.250Z  availability    storage.io1               -                 -  -',
        '2026-08-03T10:15:00.250Z  withdraw_price  compute.g2.4              org:org_42        a scheduled price, withdrawn  -',
      ),
    );
  });

  it('says a price is withdrawn where the log holds no record of it (rows from before the chain whose record was gone by then), and escapes what a terminal would not show', () => {
    const text = changeLines([
      logged({ change: 'set', priceRecordId: 9, effect: { before_chain: true }, reason: 'entered by mistake \u202e' }),
      logged({ change: 'end', priceRecordId: 9, effect: { before_chain: true }, reason: 'a\u200bb' }),
    ]);
    expect(text).toBe(
      printed(
        '2026-08-03T10:15:00.250Z  set             compute.g2.4              list              a scheduled price, withdrawn  ana@example.com  "entered by mistake \\u202e"',
        '2026-08-03T10:15:00.250Z  end             compute.g2.4              list              a scheduled price, withdrawn  ana@example.com  "a\\u200bb"',
      ),
    );
  });

  it('keeps the key the third field for awk', () => {
    const lines = changeLines([
      logged({ change: 'end', priceRecordId: 7, effect: { ends: [loggedRecord(price)] }, reason: 'a b  c' }),
    ]).trimEnd();
    expect(lines.split(/\s+/)[2]).toBe('compute.g2.4');
  });

  it('gives a change as JSON with its key, scope, actor, reason and price', () => {
    const effect = { record: loggedRecord({ ...price, organizationId: 'org_42' }) };
    expect(loggedChangeJson(logged({ change: 'set', priceRecordId: 7, effect, organizationId: 'org_42' }))).toEqual({
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

  it('shows what each write did when it did it: a first open-ended set keeps no end once a later change ended it', () => {
    const first = loggedRecord(price);
    const ended = { ...first, valid_until: '1798761600000000', superseded_by: '8' };
    const text = changeLines([
      logged({ change: 'set', priceRecordId: 7, effect: { record: first } }),
      logged({ change: 'end', priceRecordId: 7, effect: { ends: [ended] } }),
      logged({ change: 'withdraw_end', priceRecordId: 7, effect: { ends: [first] } }),
    ]);
    expect(text.split('\n').map((line) => line.split(/ {2,}/)[4])).toEqual([
      '0.0590 per 3600 seconds from 2026-09-01T00:00:00Z',
      '0.0590 per 3600 seconds from 2026-09-01T00:00:00Z until 2027-01-01T00:00:00Z',
      '0.0590 per 3600 seconds from 2026-09-01T00:00:00Z',
      undefined,
    ]);
  });

  it('escapes every field of a row written by hand, and shows an instant JavaScript cannot represent', () => {
    const hostile = logged({
      change: 'set',
      changedAt: Infinity,
      changedAtText: 'infinity',
      productKey: 'compute.g2.4\u001b[2K\rcompute.g2.8  list',
      organizationId: 'org\u202e24_gro',
      actor: 'ana\nmallory',
      priceRecordId: 7,
      effect: {
        record: {
          ...loggedRecord(price),
          amount: '0.01\u0085',
          unit_type: 'per hour',
          valid_from: '9224318015999999999',
          valid_until: '-infinity',
        },
      },
    });
    expect(changeLines([hostile, logged({ change: 'end', changedAtText: '-infinity', effect: null })])).toBe(
      printed(
        'infinity  set             compute.g2.4\\u001b[2K\\u000dcompute.g2.8\\u0020\\u0020list  org:org\\u202e24_gro  ' +
          '0.01\\u0085 per 3600 per\\u0020hour from +294276-12-31T23:59:59.999Z until -infinity  ana\\u000amallory',
        '-infinity  end             compute.g2.4              list              -  ana@example.com',
      ),
    );
    const json = loggedChangeJson(hostile);
    expect(json).toMatchObject({
      at: 'infinity',
      price: { valid_from: '+294276-12-31T23:59:59.999Z', valid_until: '-infinity' },
    });
  });
});
