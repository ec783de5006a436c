import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { verifierKeyText } from '../core/signed-note';

/**
 * `keygen NAME FILE` (docs/operations.md, "The public audit log"): a new Ed25519 key named `name`,
 * its private half written to `file` in PKCS#8 PEM, readable by its owner only; returns its
 * verifier key, the text clients audit with. A file already there is never replaced (`wx`): a new
 * key would make every verifier key given out fail. The name is checked by the caller (isKeyName).
 */
export function generateCheckpointKey(name: string, file: string): string {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
  return verifierKeyText(name, publicKey);
}
