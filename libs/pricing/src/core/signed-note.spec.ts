import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { expectLinearTime, LARGE_OUTPUT, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import {
  checkpointText,
  openNote,
  parseCheckpoint,
  parseVerifierKey,
  signNote,
  verifierKeyText,
  type VerifierKey,
} from './signed-note';

// The known answer of Go's golang.org/x/mod/sumdb/note (note_test.go, TestSign): the same key and
// text give the same note, byte for byte, so a witness or a client built on Go's package reads ours.
/** The DER of a PKCS#8 Ed25519 private key before its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const GO_SEED = Buffer.from('AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz', 'base64').subarray(1);
const GO_KEY = createPrivateKey({
  key: Buffer.concat([PKCS8_ED25519_PREFIX, GO_SEED]),
  format: 'der',
  type: 'pkcs8',
});
const GO_VERIFIER = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE =
  GO_TEXT +
  '\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';

function verifier(text: string): VerifierKey {
  const key = parseVerifierKey(text);
  if ('problem' in key) throw new Error(key.problem);
  return key;
}

describe('signed notes (c2sp.org/signed-note)', () => {
  it("signs and names keys as Go's note package does", () => {
    expect(signNote(GO_TEXT, 'PeterNeumann', GO_KEY)).toBe(GO_NOTE);
    expect(verifierKeyText('PeterNeumann', createPublicKey(GO_KEY))).toBe(GO_VERIFIER);
    expect(openNote(GO_NOTE, verifier(GO_VERIFIER))).toEqual({ text: GO_TEXT });
  });

  it('opens a note with empty lines in its text, and one signed by other keys too', () => {
    const other = generateKeyPairSync('ed25519').privateKey;
    const text = 'a\n\nb\n';
    const note = signNote(text, 'PeterNeumann', GO_KEY);
    const cosigned = note + signNote(text, 'witness.example', other).slice(text.length + 1);
    expect(openNote(note, verifier(GO_VERIFIER))).toEqual({ text });
    expect(openNote(cosigned, verifier(GO_VERIFIER))).toEqual({ text });
  });

  it('refuses a changed text, a changed signature, another key of the same name and a missing signature', () => {
    const key = verifier(GO_VERIFIER);
    expect(openNote(GO_NOTE.replace('answer', 'Answer'), key)).toEqual({
      problem: 'the signature of PeterNeumann does not verify',
    });
    expect(openNote(GO_NOTE.replace('x08go/', 'x08go+'), key)).toEqual({
      problem: 'the signature of PeterNeumann does not verify',
    });
    const impostor = generateKeyPairSync('ed25519').privateKey;
    expect(openNote(signNote(GO_TEXT, 'PeterNeumann', impostor), key)).toEqual({
      problem: 'no signature of PeterNeumann (key ID c74f20a3)',
    });
    expect(openNote(GO_TEXT, key)).toEqual({ problem: 'the note has no signature' });
    expect(openNote(GO_NOTE.replace('\u2014', '-'), key)).toEqual({
      problem: 'a signature line does not start with an em dash',
    });
    expect(openNote(`\r${GO_NOTE}`, key)).toEqual({ problem: 'the note has a control character' });
  });

  it('reads a verifier key only when its key ID is its name and key’s', () => {
    expect(parseVerifierKey(GO_VERIFIER.replace('c74f20a3', 'c74f20a4'))).toEqual({
      problem: 'its key ID is not its key’s',
    });
    expect(parseVerifierKey(`Peter Neumann+c74f20a3+${GO_VERIFIER.split('+').slice(2).join('+')}`)).toEqual({
      problem: 'its name has a space, a "+" or an unprintable character',
    });
    expect(parseVerifierKey('PeterNeumann')).toEqual({ problem: 'not of the form <name>+<key ID>+<key>' });
    expect(parseVerifierKey('PeterNeumann+c74f20a3+AA==')).toEqual({ problem: 'its key is not base64 of 33 bytes' });
  });

  it('reads back the verifier key of any Ed25519 key (base64 holding "+" and "/" too)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (seed) => {
        const privateKey = createPrivateKey({
          key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
          format: 'der',
          type: 'pkcs8',
        });
        const text = verifierKeyText('pricing.example.com/v1/pricing', createPublicKey(privateKey));
        const key = verifier(text);
        expect(openNote(signNote('x\n', key.name, privateKey), key)).toEqual({ text: 'x\n' });
      }),
      { numRuns: 100 },
    );
  });

  it('writes and reads checkpoints (c2sp.org/tlog-checkpoint), extension lines allowed', () => {
    const checkpoint = { origin: 'pricing.example.com/v1/pricing', size: 42, head: Buffer.alloc(32, 7) };
    const text = checkpointText(checkpoint);
    expect(text).toBe('pricing.example.com/v1/pricing\n42\nBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n');
    expect(parseCheckpoint(text)).toEqual(checkpoint);
    expect(parseCheckpoint(`${text}extension\n`)).toEqual(checkpoint);
    expect(parseCheckpoint(text.replace('42', '042'))).toEqual({ problem: 'its size is not a number' });
    // A size a number cannot hold exactly is not read as another (Go's int64 reads it; no log this one audits is that long).
    expect(parseCheckpoint(text.replace('42', String(Number.MAX_SAFE_INTEGER)))).toEqual({
      ...checkpoint,
      size: Number.MAX_SAFE_INTEGER,
    });
    expect(parseCheckpoint(text.replace('42', '9007199254740993'))).toEqual({ problem: 'its size is not a number' });
  });
});

describe('the parsers of notes from outside, on any text', () => {
  const key = verifier(GO_VERIFIER);
  const units = ['\n', '\n\n', '\u2014 ', 'PeterNeumann ', '+', 'A', '='];

  it('never throw, and open only what the key signed', () => {
    fc.assert(
      fc.property(outsideText(units), (text) => {
        const vkey = parseVerifierKey(text);
        expect('problem' in vkey || text === GO_VERIFIER).toBe(true);
        const opened = openNote(text, key);
        if ('text' in opened) expect(text.startsWith(opened.text)).toBe(true);
        const checkpoint = parseCheckpoint(text);
        if (!('problem' in checkpoint))
          expect(checkpointText(checkpoint)).toBe(text.slice(0, checkpointText(checkpoint).length));
      }),
    );
  });

  it('open any note signed by the key, whatever its text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '\n', ' ', '\u2014', 'é') }), (body) => {
        const text = body.endsWith('\n') ? body : `${body}\n`;
        expect(openNote(signNote(text, 'PeterNeumann', GO_KEY), key)).toEqual({ text });
      }),
      { numRuns: 200 },
    );
  });

  it('cost time in proportion to their text', () => {
    expectLinearTime(
      (text) => openNote(text, key),
      (n) => `${repeated('x\n', n / 2)}\n\u2014 PeterNeumann AAAA\n`,
      undefined,
      LARGE_OUTPUT, // its lines are copied out
    );
    expectLinearTime(
      (text) => openNote(text, key),
      (n) => `a\n\n${repeated('\u2014 x AAAA\n', n / 11)}`,
      undefined,
      LARGE_OUTPUT,
    );
    expectLinearTime(
      (text) => parseCheckpoint(text),
      (n) => `a\n1\n${repeated('\n', n)}`,
      undefined,
      LARGE_OUTPUT,
    );
    expectLinearTime(
      (text) => parseVerifierKey(text),
      (n) => repeated('+', n),
    );
  });
});
