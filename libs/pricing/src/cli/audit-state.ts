import { quoteValue } from '../errors/bounded-text';
import { openNote, parseCheckpoint, type Checkpoint, type VerifierKey } from '../core/signed-note';

// What `audit` keeps between its runs (docs/price-history-api.md, "Auditing the log"): the last
// checkpoint it verified, the feed's cursor after the last change it read, and every change it
// read (instant, product, hash), so that a rewritten history is named by its first changed change.

/** The first line of every state file: a file of another kind is never read as one. */
export const AUDIT_STATE_FORMAT = 'pricing-audit-state/1';

/** A change as the audit saw it: enough to name it, and its hash. */
export interface SeenChange {
  readonly at: string;
  readonly productKey: string;
  /** Base64, as the feed serves it. */
  readonly hash: string;
}

export interface AuditState {
  /** The base URL audited (`https://api.example.com/v1/pricing`). */
  readonly url: string;
  /** The last checkpoint verified, as served (the signed note), and what it says. */
  readonly note: string;
  readonly checkpoint: Checkpoint;
  /** The feed's `next` after the last change read; `null` before any page was read. */
  readonly next: string | null;
  /** Every change read, by position: at least as many as the checkpoint's size. */
  readonly changes: readonly SeenChange[];
}

const BASE64_HASH = /^[A-Za-z0-9+/]{43}=$/;
/** The longest cursor kept: the audit refuses a feed's longer one rather than keep a state it cannot read (audit.ts). */
export const MAX_CURSOR = 4096;
/**
 * The most changes an audit holds: a state file of that many is about 360 MB, within the longest
 * string Node.js makes (512 MiB), which it is read and written as. A log a hundred times larger
 * than the largest book benchmarked (docs/benchmarks.md).
 */
export const MAX_AUDITED_CHANGES = 3_000_000;
const MAX_AT = 64;
const MAX_PRODUCT_KEY = 1024;

/** The state file's text: JSON, one change a line (a diff between two runs shows what was added). */
export function auditStateText(state: AuditState): string {
  const changes = state.changes.map(
    (change) => `    ${JSON.stringify({ at: change.at, product_key: change.productKey, hash: change.hash })}`,
  );
  return (
    `{\n  "format": ${JSON.stringify(AUDIT_STATE_FORMAT)},\n  "url": ${JSON.stringify(state.url)},\n` +
    `  "checkpoint": ${JSON.stringify(state.note)},\n  "next": ${JSON.stringify(state.next)},\n` +
    `  "changes": [${changes.length === 0 ? '' : `\n${changes.join(',\n')}\n  `}]\n}\n`
  );
}

/**
 * The state in `text`, kept by an earlier run for `url` with `key`; what is wrong otherwise. Its
 * checkpoint is verified again (a state file is text anyone may have edited), and must agree with
 * the hashes kept.
 */
export function parseAuditState(
  text: string,
  url: string,
  key: VerifierKey,
): AuditState | { readonly problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'is not a JSON object' };
  const file = value as Record<string, unknown>;
  if (file.format !== AUDIT_STATE_FORMAT)
    return { problem: `is not an audit state (no "format": "${AUDIT_STATE_FORMAT}")` };
  if (file.url !== url)
    return {
      problem: `was kept for ${typeof file.url === 'string' ? quoteValue(file.url) : 'another URL'}, not ${quoteValue(url)}`,
    };
  if (typeof file.checkpoint !== 'string') return { problem: 'has no checkpoint' };
  const opened = openNote(file.checkpoint, key);
  if ('problem' in opened) return { problem: `has a checkpoint the key does not verify: ${opened.problem}` };
  const checkpoint = parseCheckpoint(opened.text);
  if ('problem' in checkpoint) return { problem: `has a checkpoint that is none: ${checkpoint.problem}` };
  if (checkpoint.origin !== key.name)
    return { problem: `has a checkpoint of ${quoteValue(checkpoint.origin)}, not of ${key.name}` };
  if (file.next !== null && (typeof file.next !== 'string' || file.next.length > MAX_CURSOR))
    return { problem: 'has a "next" that is no cursor' };
  // Changes are read from a cursor: a state that holds some has the one after them.
  if (file.next === null && Array.isArray(file.changes) && file.changes.length > 0)
    return { problem: 'holds changes but no "next" cursor after them' };
  if (!Array.isArray(file.changes)) return { problem: 'has no "changes" list' };
  if (file.changes.length > MAX_AUDITED_CHANGES)
    return { problem: `holds more changes than an audit holds (${MAX_AUDITED_CHANGES})` };
  const changes: SeenChange[] = [];
  for (const [position, item] of (file.changes as unknown[]).entries()) {
    const change = seenChange(item);
    if (change === undefined)
      return { problem: `has a change at position ${position} that is not {at, product_key, hash}` };
    changes.push(change);
  }
  if (changes.length < checkpoint.size)
    return { problem: `holds ${changes.length} changes, fewer than its checkpoint’s ${checkpoint.size}` };
  const head = checkpoint.size === 0 ? Buffer.alloc(32).toString('base64') : changes[checkpoint.size - 1].hash;
  if (head !== checkpoint.head.toString('base64'))
    return { problem: `has a checkpoint whose head is not the hash it holds at position ${checkpoint.size - 1}` };
  return { url, note: file.checkpoint, checkpoint, next: file.next, changes };
}

/** A change as a state file holds it (`{at, product_key, hash}`); `undefined` when no state holds it. */
export function seenChange(item: unknown): SeenChange | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const { at, product_key: productKey, hash } = item as Record<string, unknown>;
  if (typeof at !== 'string' || at.length > MAX_AT) return undefined;
  if (typeof productKey !== 'string' || productKey.length > MAX_PRODUCT_KEY) return undefined;
  if (typeof hash !== 'string' || !BASE64_HASH.test(hash)) return undefined;
  return { at, productKey, hash };
}

/** How a change is named in a message: its position, instant and product (quoted, bounded). */
export function nameChange(position: number, change: SeenChange | undefined): string {
  return change === undefined
    ? `the change at position ${position}`
    : `the change at position ${position} (at ${quoteValue(change.at)}, ${quoteValue(change.productKey)})`;
}
