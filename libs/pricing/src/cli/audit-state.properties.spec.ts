import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { chainHash, EMPTY_CHAIN_HEAD } from '../core/feed-chain';
import { checkpointText, parseVerifierKey, signNote, verifierKeyText, type VerifierKey } from '../core/signed-note';
import { auditStateText, parseAuditState, type AuditState } from './audit-state';

// The state file is text anyone with the file may have edited: `audit` reads it back only when it
// is what an earlier run kept, whole, its checkpoint verified again.

const ORIGIN = 'pricing.example.test/v1/pricing';
const URL_ = 'https://pricing.example.test/v1/pricing';
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const key = parseVerifierKey(verifierKeyText(ORIGIN, publicKey)) as VerifierKey;

function stateOf(products: readonly string[], size = products.length): AuditState {
  let previous = EMPTY_CHAIN_HEAD;
  const changes = products.map((productKey, i) => {
    previous = chainHash(previous, `${i}`);
    return { at: '2027-01-01T00:00:00Z', productKey, hash: previous.toString('base64') };
  });
  const head = size === 0 ? EMPTY_CHAIN_HEAD : Buffer.from(changes[size - 1].hash, 'base64');
  const checkpoint = { origin: ORIGIN, size, head };
  const note = signNote(checkpointText(checkpoint), ORIGIN, privateKey);
  return { url: URL_, note, checkpoint, next: products.length === 0 ? null : 'MTc5~x', changes };
}

describe('the audit state file', () => {
  it('reads back what it wrote, for any product keys', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }), { maxLength: 20 }), fc.nat(), (products, cut) => {
        const state = stateOf(products, products.length === 0 ? 0 : 1 + (cut % products.length));
        expect(parseAuditState(auditStateText(state), URL_, key)).toEqual(state);
      }),
    );
  });

  it('refuses a state kept for another URL, another key, or with a head that is not its hashes', () => {
    const text = auditStateText(stateOf(['storage.gp1', 'storage.gp2']));
    expect(parseAuditState(text, 'https://elsewhere.test/v1/pricing', key)).toEqual({
      problem: `was kept for "${URL_}", not "https://elsewhere.test/v1/pricing"`,
    });
    const other = parseVerifierKey(verifierKeyText(ORIGIN, generateKeyPairSync('ed25519').publicKey)) as VerifierKey;
    expect(parseAuditState(text, URL_, other)).toMatchObject({
      problem: expect.stringMatching(/^has a checkpoint the key does not verify/),
    });
    const edited = text.replace(/"hash":"[^"]+"\}\n {2}\]/, `"hash":"${Buffer.alloc(32, 9).toString('base64')}"}\n  ]`);
    expect(edited).not.toBe(text);
    expect(parseAuditState(edited, URL_, key)).toEqual({
      problem: 'has a checkpoint whose head is not the hash it holds at position 1',
    });
  });

  it('refuses changes without the cursor after them', () => {
    const text = auditStateText({ ...stateOf(['storage.gp1']), next: null });
    expect(parseAuditState(text, URL_, key)).toEqual({ problem: 'holds changes but no "next" cursor after them' });
  });

  it('never throws on any text, and accepts none but a state', () => {
    fc.assert(
      fc.property(outsideText(['{', '"', '"format"', ':', '[', ',', 'pricing-audit-state/1']), (text) => {
        expect(parseAuditState(text, URL_, key)).toHaveProperty('problem');
      }),
    );
  });

  it('costs time in proportion to its text', () => {
    expectLinearTime(
      (text) => parseAuditState(text, URL_, key),
      (n) => `{"format":"pricing-audit-state/1","url":"${URL_}","checkpoint":"${repeated('a', n)}"}`,
    );
    const hash = Buffer.alloc(32).toString('base64');
    expectLinearTime(
      (text) => parseAuditState(text, URL_, key),
      (n) =>
        auditStateText(stateOf([], 0)).replace(
          '"changes": []',
          `"changes": [${repeated(`{"at":"a","product_key":"k","hash":"${hash}"},`, n / 60)}{}]`,
        ),
    );
  });
});
