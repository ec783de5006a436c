import fc from 'fast-check';
import {
  canonicalJson,
  CHAIN_START,
  entryHash,
  INITIAL_AVAILABILITY,
  LogReplay,
  loggedInstant,
  type ChainEntry,
  type LoggedRecord,
} from './change-log-chain';

const record: LoggedRecord = {
  id: '1',
  product_key: 'storage.gp1',
  organization_id: null,
  unit_type: 'gib_hours',
  unit_count: '730',
  amount: '0.0480',
  valid_from: loggedInstant(Date.parse('2026-01-01T00:00:00Z')),
  valid_until: null,
  recorded_at: loggedInstant(Date.parse('2025-12-01T00:00:00Z')),
  superseded_by: null,
};

const set: ChainEntry = {
  changedAt: loggedInstant(Date.parse('2025-12-01T00:00:00.123Z')),
  change: 'set',
  productKey: 'storage.gp1',
  organizationId: null,
  priceRecordId: '1',
  actor: 'ops@example.com',
  reason: null,
  onSale: null,
  effect: { record },
};

describe('canonicalJson', () => {
  it('sorts keys, leaves out undefined, and gives one text for equal values', () => {
    expect(canonicalJson({ b: '1', a: [true, null, { d: 'x', c: undefined }] })).toBe(
      '{"a":[true,null,{"d":"x"}],"b":"1"}',
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.boolean(), fc.constant(null))), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(object));
        expect(JSON.parse(canonicalJson(object))).toEqual(object);
      }),
    );
  });

  it('refuses numbers: an entry writes them as text', () => {
    expect(() => canonicalJson({ unit_count: 730 })).toThrow(TypeError);
  });
});

describe('entryHash', () => {
  it('is 64 hex digits, and changes with the entry and with the hash before it', () => {
    const hash = entryHash(CHAIN_START, set);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(entryHash(CHAIN_START, set)).toBe(hash);
    expect(entryHash(hash, set)).not.toBe(hash);
    expect(entryHash(CHAIN_START, { ...set, effect: { record: { ...record, amount: '0.0490' } } })).not.toBe(hash);
    expect(entryHash(CHAIN_START, { ...set, actor: 'someone.else' })).not.toBe(hash);
  });
});

describe('LogReplay', () => {
  it('gives the records and availability its entries wrote, from the schema’s initial availability', () => {
    const replay = new LogReplay();
    expect(replay.apply(set)).toBeUndefined();
    const until = loggedInstant(Date.parse('2027-01-01T00:00:00Z'));
    const next: LoggedRecord = { ...record, id: '2', amount: '0.0500', valid_from: until, recorded_at: set.changedAt };
    expect(replay.apply({ ...set, priceRecordId: '2', effect: { record: next } })).toBeUndefined();
    expect(
      replay.apply({ ...set, change: 'end', effect: { ends: [{ id: '1', valid_until: until, superseded_by: '2' }] } }),
    ).toBeUndefined();
    const ended = { ...record, valid_until: until, superseded_by: '2' };
    expect(replay.firstDifference([ended, next], INITIAL_AVAILABILITY)).toBeUndefined();
    // A withdrawal of the scheduled price deletes it and reopens the one it would have ended.
    replay.apply({
      ...set,
      change: 'withdraw_price',
      effect: { deleted: '2', ends: [{ id: '1', valid_until: null, superseded_by: null }] },
    });
    expect(replay.firstDifference([record], INITIAL_AVAILABILITY)).toBeUndefined();
    replay.apply({
      ...set,
      change: 'availability',
      productKey: 'storage.io1',
      onSale: true,
      effect: { on_sale: true },
    });
    expect(replay.firstDifference([record], new Map([...INITIAL_AVAILABILITY, ['storage.io1', true]]))).toBeUndefined();
  });

  it('names the first product key whose stored records differ, and what differs', () => {
    const replay = new LogReplay();
    replay.apply(set);
    const io1 = { ...record, id: '9', product_key: 'storage.io1' };
    expect(replay.firstDifference([{ ...record, amount: '0.0100' }, io1], INITIAL_AVAILABILITY)).toEqual({
      productKey: 'storage.gp1',
      what: 'record 1 differs: amount 0.0100 stored, 0.0480 in the log',
    });
    expect(replay.firstDifference([record, io1], INITIAL_AVAILABILITY)).toEqual({
      productKey: 'storage.io1',
      what: 'record 9 is stored but no entry wrote it',
    });
    expect(replay.firstDifference([], INITIAL_AVAILABILITY)).toEqual({
      productKey: 'storage.gp1',
      what: 'record 1 is in the log but not stored',
    });
    expect(replay.firstDifference([record], new Map())).toEqual({
      productKey: 'storage.io1',
      what: 'availability is undefined stored, false in the log',
    });
  });

  it('says when an entry names a record that is not there', () => {
    const replay = new LogReplay();
    expect(
      replay.apply({ ...set, change: 'end', effect: { ends: [{ id: '7', valid_until: null, superseded_by: null }] } }),
    ).toBe('record 7 is not there');
  });
});
