import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { anyCodePoint, outsideText } from '../../../../test/support/outside-text';
import { escapeJson } from '../errors/bounded-text';
import { changeLines, loggedChangeJson } from './format-changes';
import { formatHistory, historyJson } from './format-history';
import type { HistoryRecord, LoggedChange, PriceChangeKind } from '../price-book/price-history';
import type { LoggedRecord } from '../price-book/change-log-chain';

// `changes` and `history` print stored rows, which whoever can write the database chose: any text in
// any column (price_change has no rule on its product key or organization id, and a superuser can
// write any effect), any instant PostgreSQL holds. Nothing of it may reach the terminal raw, move a
// column, or fail the command.

const HOSTILE = ['\u001b[2K', '\r', '\n', '\u0085', '\u009b', '\u202e', '\u2066', '\u2028', '\u200b', '  ', '\\', '"'];
const text = fc.oneof(fc.string({ unit: anyCodePoint, maxLength: 40 }), fc.constantFrom(...HOSTILE));
/** Text of any length, for the fields a line shows first (long values must not cost more than their length). */
const longText = fc.oneof(text, outsideText(HOSTILE));
const instantText = fc.oneof(
  fc.constantFrom('infinity', '-infinity', '9224318015999999999', '-210866803200000000'),
  fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
  text,
);
const record: fc.Arbitrary<LoggedRecord> = fc.record({
  id: text,
  product_key: text,
  organization_id: fc.option(text),
  unit_type: text,
  unit_count: text,
  amount: text,
  valid_from: instantText,
  valid_until: fc.option(instantText),
  recorded_at: instantText,
  superseded_by: fc.option(text),
});
const kind = fc.constantFrom<PriceChangeKind>('set', 'end', 'withdraw_price', 'withdraw_end', 'availability');
/** Names every object has, which a stored kind may be (a lookup in an object literal finds them). */
const inherited = fc.constantFrom<string>('toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf');
const change: fc.Arbitrary<LoggedChange> = fc.record(
  {
    changedAt: fc.oneof(fc.double(), fc.integer({ min: -9.3e15, max: 9.3e15 })),
    changedAtText: instantText,
    change: fc.oneof(kind, text as fc.Arbitrary<PriceChangeKind>, inherited as fc.Arbitrary<PriceChangeKind>),
    priceRecordId: fc.option(fc.nat()),
    actor: fc.option(text),
    reason: fc.option(longText),
    effect: fc.option(
      fc.record(
        { record, ends: fc.array(record, { maxLength: 2 }), deleted: text, on_sale: fc.boolean() },
        { requiredKeys: [] },
      ),
    ),
    productKey: longText,
    organizationId: fc.option(text),
    onSale: fc.option(fc.boolean()),
  },
  {
    requiredKeys: [
      'changedAt',
      'change',
      'priceRecordId',
      'actor',
      'reason',
      'effect',
      'productKey',
      'organizationId',
      'onSale',
    ],
  },
);
const anyMs = fc.oneof(fc.double(), fc.integer({ min: -9.3e15, max: 9.3e15 }));
const storedRecord: fc.Arbitrary<HistoryRecord> = fc.record(
  {
    id: fc.nat(),
    productKey: text,
    organizationId: fc.option(text),
    unitType: text as fc.Arbitrary<HistoryRecord['unitType']>,
    unitCount: fc.integer(),
    amount: text,
    validFrom: anyMs,
    validUntil: fc.option(anyMs),
    recordedAt: anyMs,
    supersededBy: fc.option(fc.nat()),
    instantTexts: fc.record(
      { validFrom: instantText, validUntil: instantText, recordedAt: instantText },
      { requiredKeys: [] },
    ),
  },
  {
    requiredKeys: [
      'id',
      'productKey',
      'organizationId',
      'unitType',
      'unitCount',
      'amount',
      'validFrom',
      'validUntil',
      'recordedAt',
      'supersededBy',
    ],
  },
);
/** What a terminal acts on or hides: nothing of it may be printed raw (line feeds end lines). */
const RAW = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/u;

describe('the changes command on any stored row', () => {
  it('prints one line per change, its first four columns one word each, nothing raw; never throws', () => {
    fc.assert(
      fc.property(fc.array(change, { maxLength: 5 }), (changes) => {
        const lines = changeLines(changes).split('\n');
        expect(lines.pop()).toBe('');
        expect(lines).toHaveLength(changes.length);
        for (const line of lines) {
          expect(line).not.toMatch(RAW);
          // Columns are apart by two spaces or more, and only they: the first four are single words.
          const columns = line.split(/ {2,}/);
          expect(columns.length).toBeGreaterThanOrEqual(6);
          for (const column of columns.slice(0, 4)) expect(column).toMatch(/^\S+$/);
        }
      }),
    );
  });

  it('gives JSON that escapes what JSON.stringify leaves raw, and reads back; never throws', () => {
    fc.assert(
      fc.property(change, (logged) => {
        const json = escapeJson(JSON.stringify(loggedChangeJson(logged), null, 2));
        expect(json.replaceAll('\n', '')).not.toMatch(RAW);
        expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(loggedChangeJson(logged))));
      }),
    );
  });

  it('costs time in proportion to the text of its rows', () => {
    const base = {
      changedAt: 0,
      change: 'set' as const,
      priceRecordId: 1,
      actor: 'ana',
      reason: null,
      effect: null,
      organizationId: null,
      onSale: null,
    };
    expectLinearTime(
      (productKey) => changeLines([{ ...base, productKey }]),
      (n) => repeated('\u001b[2K\u202e ', n),
    );
  });
});

describe('the history command on any stored row', () => {
  it('prints text with nothing raw, and JSON that reads back; never throws', () => {
    fc.assert(
      fc.property(
        fc.array(storedRecord, { maxLength: 3 }),
        fc.array(change, { maxLength: 4 }),
        text,
        fc.option(text),
        (records, changes, productKey, organizationId) => {
          const history = { records, changes };
          const printed = formatHistory(history, productKey, organizationId, 0);
          expect(printed.replaceAll('\n', '')).not.toMatch(RAW);
          const json = historyJson(history, productKey, organizationId, 0);
          expect(json.replaceAll('\n', '')).not.toMatch(RAW);
          expect(JSON.parse(json)).toMatchObject({ product_key: productKey });
        },
      ),
    );
  });
});
