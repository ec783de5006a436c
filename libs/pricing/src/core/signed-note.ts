import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

// The C2SP signed note and checkpoint formats (c2sp.org/signed-note, c2sp.org/tlog-checkpoint;
// restated in docs/price-history-api.md, "The checkpoint"), Ed25519 only: what
// `/v1/pricing/checkpoint` serves and `npm run -s pricing -- audit` checks.

/** The signature type of Ed25519 in a note's key ID and verifier key. */
const ED25519 = 0x01;
/** A signature line: an em dash (U+2014), a space, the key name, a space, base64(key ID ‖ signature). */
const SIGNATURE_PREFIX = '\u2014 ';
/** Key names: no space, no `+`, printable (the C2SP rule, bounded). */
const KEY_NAME = /^[\x21-\x2a\x2c-\x7e]{1,256}$/;

/** A key that verifies notes: its name, its key ID and its Ed25519 public key. */
export interface VerifierKey {
  readonly name: string;
  readonly keyId: Buffer;
  readonly publicKey: KeyObject;
}

/** Whether `name` may name a key (and so a checkpoint's origin). */
export function isKeyName(name: string): boolean {
  return KEY_NAME.test(name);
}

/** The 32 bytes of an Ed25519 public key. */
export function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' }) as { crv?: string; x?: string };
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new TypeError('not an Ed25519 key');
  return Buffer.from(jwk.x, 'base64url');
}

/** The key ID of an Ed25519 key: the first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key). */
export function keyIdOf(name: string, publicKey: Buffer): Buffer {
  return createHash('sha256')
    .update(name, 'utf8')
    .update(Buffer.from([0x0a, ED25519]))
    .update(publicKey)
    .digest()
    .subarray(0, 4);
}

/** The verifier key of `publicKey` named `name`: `<name>+<key ID, 8 hex>+<base64(0x01 ‖ public key)>`. */
export function verifierKeyText(name: string, publicKey: KeyObject): string {
  const raw = rawPublicKey(publicKey);
  return `${name}+${keyIdOf(name, raw).toString('hex')}+${Buffer.concat([Buffer.from([ED25519]), raw]).toString('base64')}`;
}

/** A verifier key read from its text; what is wrong with it otherwise. */
export function parseVerifierKey(text: string): VerifierKey | { readonly problem: string } {
  if (text.length > 1024) return { problem: 'longer than any verifier key' };
  // The key's base64 may hold "+": split at the first two only, as Go's note.NewVerifier does.
  const first = text.indexOf('+');
  const second = first < 0 ? -1 : text.indexOf('+', first + 1);
  if (second < 0) return { problem: 'not of the form <name>+<key ID>+<key>' };
  const [name, hex, key] = [text.slice(0, first), text.slice(first + 1, second), text.slice(second + 1)];
  if (!isKeyName(name)) return { problem: 'its name has a space, a "+" or an unprintable character' };
  if (!/^[0-9a-f]{8}$/.test(hex)) return { problem: 'its key ID is not 8 lowercase hex digits' };
  if (!/^[A-Za-z0-9+/]{44}$/.test(key)) return { problem: 'its key is not base64 of 33 bytes' };
  const bytes = Buffer.from(key, 'base64');
  if (bytes.length !== 33 || bytes[0] !== ED25519) return { problem: 'its key is not an Ed25519 key (type 0x01)' };
  const raw = bytes.subarray(1);
  if (!keyIdOf(name, raw).equals(Buffer.from(hex, 'hex'))) return { problem: 'its key ID is not its key’s' };
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
    format: 'jwk',
  });
  return { name, keyId: Buffer.from(hex, 'hex'), publicKey };
}

/** `text` (ending in a line feed) signed by `privateKey` named `name`, as a note. */
export function signNote(text: string, name: string, privateKey: KeyObject): string {
  const publicKey = createPublicKey(privateKey);
  const keyId = keyIdOf(name, rawPublicKey(publicKey));
  const signature = sign(null, Buffer.from(text, 'utf8'), privateKey);
  return `${text}\n${SIGNATURE_PREFIX}${name} ${Buffer.concat([keyId, signature]).toString('base64')}\n`;
}

/**
 * The text of `note` when a signature line of `key` verifies it (other keys' lines are ignored, as
 * the format allows several); what is wrong otherwise. At most 1 MiB is read.
 */
export function openNote(note: string, key: VerifierKey): { readonly text: string } | { readonly problem: string } {
  if (note.length > 1 << 20) return { problem: 'the note is larger than 1 MiB' };
  if (/[^\P{Cc}\n]/u.test(note)) return { problem: 'the note has a control character' };
  if (!note.endsWith('\n')) return { problem: 'the note does not end with a line feed' };
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return { problem: 'the note has no signature' };
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  for (const line of lines) {
    if (!line.startsWith(SIGNATURE_PREFIX)) return { problem: 'a signature line does not start with an em dash' };
    const [name, encoded, ...rest] = line.slice(SIGNATURE_PREFIX.length).split(' ');
    if (rest.length > 0 || encoded === undefined) return { problem: 'a signature line is not <name> <signature>' };
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return { problem: 'a signature is not base64' };
    if (name !== key.name) continue;
    const bytes = Buffer.from(encoded, 'base64');
    if (bytes.length !== 4 + 64 || !bytes.subarray(0, 4).equals(key.keyId)) continue;
    if (verify(null, Buffer.from(text, 'utf8'), key.publicKey, bytes.subarray(4))) return { text };
    return { problem: `the signature of ${key.name} does not verify` };
  }
  return { problem: `no signature of ${key.name} (key ID ${key.keyId.toString('hex')})` };
}

/** A checkpoint of a hash chain: its origin, its size (changes) and its head. */
export interface Checkpoint {
  readonly origin: string;
  readonly size: number;
  readonly head: Buffer;
}

/** A checkpoint's text: the origin, the size in decimal and the head in base64, a line each. */
export function checkpointText({ origin, size, head }: Checkpoint): string {
  return `${origin}\n${size}\n${head.toString('base64')}\n`;
}

/** A checkpoint read from a note's text (extension lines after the head are allowed); what is wrong otherwise. */
export function parseCheckpoint(text: string): Checkpoint | { readonly problem: string } {
  const [origin, size, head] = text.split('\n');
  if (origin === undefined || !isKeyName(origin)) return { problem: 'its origin is not a name' };
  // Sixteen digits pass the pattern, but a number holds 2^53 exactly: a larger size would read as another.
  if (size === undefined || !/^(0|[1-9]\d{0,15})$/.test(size) || !Number.isSafeInteger(Number(size)))
    return { problem: 'its size is not a number' };
  if (head === undefined || !/^[A-Za-z0-9+/]{43}=$/.test(head))
    return { problem: 'its head is not base64 of 32 bytes' };
  return { origin, size: Number(size), head: Buffer.from(head, 'base64') };
}
