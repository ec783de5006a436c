import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  canonicalJson,
  CHAIN_START,
  entryHash,
  INITIAL_AVAILABILITY,
  isLoggedEffect,
  loggedInstant,
  type ChainEntry,
  type LoggedRecord,
} from './change-log-chain';
import { ChainVerifier, LogReplay, type StoredEntry } from './change-log-replay';

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
  it('hashes the previous hash, a line feed and the canonical JSON of the whole entry', () => {
    expect(entryHash(CHAIN_START, set)).toBe(
      createHash('sha256')
        .update(`${CHAIN_START}\n${canonicalJson(set)}`)
        .digest('hex'),
    );
    expect(entryHash(CHAIN_START, set, canonicalJson(set.effect))).toBe(entryHash(CHAIN_START, set));
  });

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
    const ended = { ...record, valid_until: until, superseded_by: '2' };
    expect(replay.apply({ ...set, change: 'end', effect: { ends: [ended] } })).toBeUndefined();
    expect(replay.firstDifference([ended, next], INITIAL_AVAILABILITY)).toBeUndefined();
    // A withdrawal of the scheduled price deletes it and reopens the one it would have ended.
    replay.apply({
      ...set,
      change: 'withdraw_price',
      effect: { deleted: '2', ends: [record] },
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
      what: 'availability is unset stored, off sale in the log',
    });
  });

  it('says when an entry names a record that is not there', () => {
    const replay = new LogReplay();
    expect(replay.apply({ ...set, change: 'end', effect: { ends: [{ ...record, id: '7' }] } })).toBe(
      'it ends record 7, which the entries before it did not leave',
    );
    expect(replay.apply({ ...set, change: 'withdraw_price', effect: { deleted: '7' } })).toBe(
      'it deletes record 7, which the entries before it did not leave',
    );
  });
});

describe('an entry that does not fit', () => {
  const replayWith = (...entries: ChainEntry[]): LogReplay => {
    const replay = new LogReplay();
    for (const entry of entries) expect(replay.apply(entry)).toBeUndefined();
    return replay;
  };

  it('is named: a record written twice, an end that rewrites history, another scope, an effect of another kind', () => {
    expect(replayWith(set).apply(set)).toBe('it writes record 1, which an entry before it wrote');
    expect(replayWith(set).apply({ ...set, change: 'end', effect: { ends: [{ ...record, amount: '0.0100' }] } })).toBe(
      'its end of record 1 changes amount',
    );
    expect(new LogReplay().apply({ ...set, organizationId: 'org_42' })).toBe(
      'its effect names record 1, of another product key or scope',
    );
    expect(new LogReplay().apply({ ...set, priceRecordId: '2' })).toBe('it names record 2 and writes record 1');
    expect(new LogReplay().apply({ ...set, change: 'availability' })).toBe(
      'its effect (record) does not fit an entry of kind availability',
    );
  });

  it('is named, never thrown, whatever its effect holds (a hand-written row)', () => {
    expect(new LogReplay().apply({ ...set, effect: null })).toBe("its effect is not of the change log's form");
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.constantFrom('set', 'end', 'withdraw_price', 'availability', 'x'),
        (effect, change) => {
          const problem = new LogReplay().apply({ ...set, change, effect: effect as ChainEntry['effect'] });
          expect(problem === undefined || typeof problem === 'string').toBe(true);
          if (!isLoggedEffect(effect)) expect(problem).toBe("its effect is not of the change log's form");
        },
      ),
    );
  });

  it('has its stored values escaped where a problem quotes them', () => {
    const hostile = { ...record, id: '1\u001b[2K', product_key: 'storage.gp1' };
    expect(
      new LogReplay().apply({ ...set, priceRecordId: hostile.id, change: 'end', effect: { ends: [hostile] } }),
    ).toBe('it ends record 1\\u001b[2K, which the entries before it did not leave');
  });
});

describe('isLoggedEffect', () => {
  it('takes the parts of an effect, each of its form, and nothing else', () => {
    expect(isLoggedEffect({ record })).toBe(true);
    expect(isLoggedEffect({ ends: [record], deleted: '2' })).toBe(true);
    expect(isLoggedEffect({ on_sale: false, before_chain: true })).toBe(true);
    expect(isLoggedEffect({})).toBe(true);
    for (const bad of [null, [], 'x', { record: { ...record, amount: 0.048 } }, { record: { ...record, x: '1' } }]) {
      expect(isLoggedEffect(bad)).toBe(false);
    }
    expect(isLoggedEffect({ ends: record })).toBe(false);
    expect(isLoggedEffect({ before_chain: false })).toBe(false);
    expect(isLoggedEffect({ amount: '1' })).toBe(false);
  });
});

describe('BookComparison', () => {
  it('takes the stored records a page at a time, and names the first key in natural order', () => {
    const replay = new LogReplay();
    const records = ['compute.g2.16', 'compute.g2.2', 'compute.g2.4'].map((productKey, i) => ({
      ...record,
      id: String(i + 1),
      product_key: productKey,
      unit_type: 'seconds',
    }));
    for (const written of records) {
      replay.apply({ ...set, productKey: written.product_key, priceRecordId: written.id, effect: { record: written } });
    }
    const comparison = replay.comparison();
    comparison.add([records[0]]);
    comparison.add([{ ...records[2], valid_until: '1' }]);
    expect(comparison.firstDifference(INITIAL_AVAILABILITY)).toEqual({
      productKey: 'compute.g2.2',
      what: 'record 2 is in the log but not stored',
    });
    comparison.add([{ ...records[1] }]);
    expect(comparison.firstDifference(INITIAL_AVAILABILITY)).toEqual({
      productKey: 'compute.g2.4',
      what: 'record 3 differs: valid_until 1 stored, null in the log',
    });
  });

  it('escapes what it quotes of stored values', () => {
    const replay = new LogReplay();
    replay.apply(set);
    expect(replay.firstDifference([{ ...record, amount: '1\u202e0' }], INITIAL_AVAILABILITY)?.what).toBe(
      'record 1 differs: amount 1\\u202e0 stored, 0.0480 in the log',
    );
  });
});

describe('ChainVerifier', () => {
  /** A log of `entries`, each with the hash a write stores. */
  function chained(entries: readonly ChainEntry[]): StoredEntry[] {
    let previous = CHAIN_START;
    return entries.map((entry, i) => ({
      id: String(i + 1),
      entry,
      hash: (previous = entryHash(previous, entry)),
      rule: 1 as const,
    }));
  }
  const until = loggedInstant(Date.parse('2027-01-01T00:00:00Z'));
  const next: LoggedRecord = { ...record, id: '2', amount: '0.0500', valid_from: until, recorded_at: set.changedAt };
  const log = chained([
    set,
    { ...set, priceRecordId: '2', effect: { record: next } },
    { ...set, change: 'end', effect: { ends: [{ ...record, valid_until: until, superseded_by: '2' }] } },
    {
      ...set,
      change: 'availability',
      productKey: 'storage.io1',
      priceRecordId: null,
      onSale: true,
      effect: { on_sale: true },
    },
  ]);

  it('checks every link and replays every entry: the count and the head', () => {
    const verifier = new ChainVerifier();
    expect(verifier.head).toBe(CHAIN_START);
    for (const stored of log) expect(verifier.check(stored)).toBeUndefined();
    expect(verifier.entries).toBe(4);
    expect(verifier.head).toBe(log[3].hash);
    expect(verifier.head).toMatch(/^[0-9a-f]{64}$/);
  });

  function firstProblem(stored: readonly StoredEntry[]): string | undefined {
    const verifier = new ChainVerifier();
    for (const entry of stored) {
      const problem = verifier.check(entry);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }

  it('names the first entry whose content was changed, and says how many before it check out', () => {
    const changed = log.map((stored, i) =>
      i === 1 ? { ...stored, entry: { ...stored.entry, effect: { record: { ...next, amount: '0.0400' } } } } : stored,
    );
    expect(firstProblem(changed)).toBe(
      `entry 2 (2025-12-01T00:00:00.123Z, set storage.gp1): its hash does not match its content and the entry before it ` +
        `(stored ${log[1].hash}, computed ${entryHash(log[0].hash!, changed[1].entry)}): it, or its hash, was changed ` +
        `after it was written (the entry before it checks out)`,
    );
    expect(firstProblem([{ ...log[0], entry: { ...set, reason: 'rewritten' } }])).toMatch(
      /^entry 1 \(.*\): its hash does not match .* \(it is the first entry\)$/,
    );
  });

  it('names the entry after one that was removed, or whose content and hash were both rewritten', () => {
    expect(firstProblem([log[0], ...log.slice(2)])).toMatch(
      /^entry 3 \(2025-12-01T00:00:00\.123Z, end storage\.gp1\): its hash/,
    );
    const rewritten = { ...set, reason: 'rewritten' };
    expect(
      firstProblem([{ ...log[0], entry: rewritten, hash: entryHash(CHAIN_START, rewritten) }, ...log.slice(1)]),
    ).toMatch(/^entry 2 .*: its hash does not match/);
  });

  it('names an entry whose hash is right but whose effect does not fit, and one it cannot hash', () => {
    const [forged] = chained([{ ...set, change: 'end', effect: { ends: [{ ...record, id: '9' }] } }]);
    expect(firstProblem([forged])).toBe(
      'entry 1 (2025-12-01T00:00:00.123Z, end storage.gp1): it ends record 9, which the entries before it did not leave',
    );
    const numbered = { ...log[0], entry: { ...set, effect: { on_sale: 1 } as unknown as ChainEntry['effect'] } };
    expect(firstProblem([numbered])).toBe(
      "entry 1 (2025-12-01T00:00:00.123Z, set storage.gp1): its effect is not of the change log's form",
    );
  });

  it('names an entry of any instant and any key, escaped', () => {
    const hostile = { ...set, changedAt: 'infinity', productKey: 'storage.gp1\u001b]0;x\u0007' };
    expect(firstProblem([{ id: '1', entry: hostile, hash: null, rule: 1 }])).toMatch(
      /^entry 1 \(infinity, set storage\.gp1\\u001b\]0;x\\u0007\): its hash does not match its content and the entry before it \(stored null,/,
    );
  });
});
