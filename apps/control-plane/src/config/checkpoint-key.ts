import { createPrivateKey, type KeyObject } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Larger than any PEM of one Ed25519 key (119 bytes): a file this long is not one. */
const MAX_KEY_FILE_BYTES = 16 * 1024;
// Opening a FIFO without O_NONBLOCK waits for a writer, before fstat can refuse it (as
// libs/pricing/src/cli/price-book-file.ts opens a book); a regular file reads the same.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/**
 * The Ed25519 private key in the PKCS#8 PEM file at `path` (what `pricing keygen` writes), or what
 * is wrong with the file. Only a regular file is read (never a device or a pipe, which could block
 * the start for good), at most MAX_KEY_FILE_BYTES, and one that others than its owner may write is
 * refused: whoever can replace the key can sign a history of their choosing.
 */
export function readCheckpointKey(path: string): KeyObject | { readonly problem: string } {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    return { problem: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { problem: 'is not a regular file' };
    if ((stat.mode & 0o022) !== 0)
      return {
        problem: `may be written by others than its owner (mode ${(stat.mode & 0o777).toString(8)}): chmod 600 it`,
      };
    if (stat.size > MAX_KEY_FILE_BYTES) return { problem: 'is larger than any key file' };
    const bytes = Buffer.alloc(stat.size);
    const read = readSync(fd, bytes, 0, stat.size, 0);
    const key = privateKeyOf(bytes.subarray(0, read));
    if (key === undefined || key.asymmetricKeyType !== 'ed25519')
      return { problem: 'holds no Ed25519 private key in PKCS#8 PEM (make one with `npm run -s pricing -- keygen`)' };
    return key;
  } finally {
    closeSync(fd);
  }
}

function privateKeyOf(pem: Buffer): KeyObject | undefined {
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    return undefined;
  }
}
