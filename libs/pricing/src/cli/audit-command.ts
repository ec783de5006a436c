import { randomBytes } from 'node:crypto';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';
import type { VerifierKey } from '../core/signed-note';
import { audit, auditedUrl, type AuditIo, type AuditOutcome } from './audit';
import { auditStateText, parseAuditState, type AuditState } from './audit-state';
import { PriceBookFileError, readFileBytes } from './price-book-file';

/** The largest state file read: MAX_AUDITED_CHANGES of about 120 bytes, and room (below Node.js's longest string). */
const MAX_STATE_BYTES = 500 * 1024 * 1024;

/**
 * An audit with its state file (docs/price-history-api.md, "Auditing the log"): the state kept by
 * the last run (none on a first run: no file), the audit, and the new state kept only when the
 * checkpoint was verified, written whole or not at all (a new file renamed over the old one).
 */
export async function auditWithState(
  url: string,
  key: VerifierKey,
  stateFile: string,
  io: AuditIo,
): Promise<AuditOutcome> {
  const previous = await readState(stateFile, auditedUrl(url), key);
  const outcome = await audit(url, key, previous, io);
  if (outcome.kind === 'verified') await keepState(stateFile, outcome.state);
  return outcome;
}

async function readState(file: string, url: string, key: VerifierKey): Promise<AuditState | undefined> {
  // No file yet: a first run. A directory, a device or a file too large is refused (readFileBytes).
  const stats = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new PriceBookFileError(`cannot read ${file}: ${error.code ?? 'unknown error'}`);
  });
  if (stats === undefined) return undefined;
  if (stats.isFile() && stats.size > MAX_STATE_BYTES)
    throw new PriceBookFileError(`${file} is ${stats.size} bytes, more than any audit state: nothing was audited`);
  const bytes = await readFileBytes(file, { maxBytes: MAX_STATE_BYTES });
  const state = parseAuditState(bytes.toString('utf8'), url, key);
  if ('problem' in state) throw new PriceBookFileError(`${file} ${state.problem}: nothing was audited`);
  return state;
}

async function keepState(file: string, state: AuditState): Promise<void> {
  const temporary = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(temporary, auditStateText(state), { mode: 0o600, flag: 'wx', flush: true });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
