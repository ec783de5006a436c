import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { priceRecord } from './price-record.fixture';
import { canonicalJson, ChainHasher, chainHash, changeLeaf, EMPTY_CHAIN_HEAD } from './feed-chain';
import { listEntry } from './price-list';
import { openNote, parseCheckpoint, parseVerifierKey } from './signed-note';

const ms = (iso: string): number => Date.parse(iso);

describe('the feed as a hash chain', () => {
  const change = {
    at: ms('2027-01-01T00:00:00Z'),
    productKey: 'compute.g2.4',
    family: 0,
    before: priceRecord({ productKey: 'compute.g2.4', unitType: 'seconds', unitCount: 3600, amount: '0.0610' }),
    after: null,
  };

  it('makes a change’s leaf the JSON the feed serves, canonical: what a client recomputes', () => {
    const served = {
      position: 7,
      at: '2027-01-01T00:00:00Z',
      product_key: 'compute.g2.4',
      family: 'compute_instance',
      before: listEntry(change.before),
      after: null,
      hash: 'ignored',
    };
    const leaf = Object.fromEntries(Object.entries(served).filter(([name]) => name !== 'position' && name !== 'hash'));
    expect(changeLeaf(change)).toBe(canonicalJson(leaf));
    expect(changeLeaf(change)).toBe(
      '{"after":null,"at":"2027-01-01T00:00:00Z","before":{"amount":"0.0610","dimensions":{"instance_type":"g2.4"},' +
        '"product_key":"compute.g2.4","unit_count":3600,"unit_type":"seconds","valid_from":"2026-01-01T00:00:00Z",' +
        '"valid_until":null},"family":"compute_instance","product_key":"compute.g2.4"}',
    );
  });

  it('hashes SHA-256 of the previous hash and the leaf, from 32 zero bytes', () => {
    // `(head -c 32 /dev/zero; printf '{}') | sha256sum`
    expect(chainHash(EMPTY_CHAIN_HEAD, '{}').toString('hex')).toBe(
      'fb1634c4e6cd4b1f1afe3ce2d6ef080f7ac5d1f357d723ad4dfca782733b62db',
    );
    const second = chainHash(chainHash(EMPTY_CHAIN_HEAD, '{}'), '[]');
    expect(second).toEqual(
      chainHash(Buffer.from('fb1634c4e6cd4b1f1afe3ce2d6ef080f7ac5d1f357d723ad4dfca782733b62db', 'hex'), '[]'),
    );
    expect(EMPTY_CHAIN_HEAD).toEqual(Buffer.alloc(32));
  });
});

describe('canonicalJson (RFC 8785)', () => {
  it('sorts members by UTF-16 code units and writes numbers as ECMAScript does', () => {
    expect(canonicalJson({ b: [1, 1e21, 0.1, -0], a: { '\u00e9': true, z: null }, '\ud83d\ude00': 'x' })).toBe(
      '{"a":{"z":null,"\u00e9":true},"b":[1,1e+21,0.1,0],"\ud83d\ude00":"x"}',
    );
  });

  it('gives the same text for any JSON value whatever its members’ order, and JSON.parse reads it back', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(text).toBeDefined();
        expect(canonicalJson(JSON.parse(text!))).toBe(text);
        expect(JSON.parse(text!)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('refuses what JSON cannot hold, and values nested too deep', () => {
    expect(canonicalJson({ a: Number.NaN })).toBeUndefined();
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(canonicalJson(deep)).toBeUndefined();
    expect(canonicalJson(deep, 200)).toBe(`${'['.repeat(100)}1${']'.repeat(100)}`);
  });
});

describe('the examples of docs/price-history-api.md', () => {
  const doc = readFileSync(join(__dirname, '../../../../docs/price-history-api.md'), 'utf8');

  it('the example change’s hash is its hash as the first change of a feed', () => {
    const example = JSON.parse(
      doc.slice(doc.indexOf('```json\n') + 8, doc.indexOf('```', doc.indexOf('```json\n') + 8)),
    ) as {
      changes: Record<string, unknown>[];
    };
    const { position, hash, ...change } = example.changes[0];
    expect(position).toBe(0);
    expect(chainHash(EMPTY_CHAIN_HEAD, canonicalJson(change)!).toString('base64')).toBe(hash);
  });

  it('the example checkpoint verifies with the example verifier key, and its head is that hash', () => {
    const note = `${doc.slice(doc.indexOf('```text\n') + 8, doc.indexOf('```', doc.indexOf('```text\n') + 8))}`;
    const key = parseVerifierKey(/`(pricing\.example\.com\/v1\/pricing\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+)`/.exec(doc)![1]);
    if ('problem' in key) throw new Error(key.problem);
    const opened = openNote(note, key);
    if ('problem' in opened) throw new Error(opened.problem);
    expect(parseCheckpoint(opened.text)).toMatchObject({ size: 1 });
    expect(opened.text).toContain('9EM5HE/0viRE3yZyjj1BBnXBoAP1yAxznLJiI8d4tok=');
  });

  it('hashes a chain of leaves as chainHash does, one after another (ChainHasher: any text, any length)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 3000 }), { maxLength: 8 }), (leaves) => {
        const hasher = new ChainHasher();
        let expected = EMPTY_CHAIN_HEAD;
        let actual = EMPTY_CHAIN_HEAD;
        for (const leaf of leaves) {
          expected = chainHash(expected, leaf);
          actual = hasher.hash(actual, leaf);
          expect(actual.equals(expected)).toBe(true);
          // In parts, cut anywhere (a cut may split a surrogate pair's text only between parts' strings).
          const parts = [leaf.slice(0, leaf.length >> 1), leaf.slice(leaf.length >> 1)];
          if (!/[\uD800-\uDBFF]$/.test(parts[0])) {
            const written = Buffer.alloc(32);
            hasher.hashPartsInto(EMPTY_CHAIN_HEAD, parts, written, 0);
            expect(written.equals(chainHash(EMPTY_CHAIN_HEAD, leaf))).toBe(true);
          }
        }
      }),
    );
  });
});
