import { canonicalJson, chainHash, EMPTY_CHAIN_HEAD } from '../core/feed-chain';
import { openNote, parseCheckpoint, type Checkpoint, type VerifierKey } from '../core/signed-note';
import { quoteValue } from '../errors/bounded-text';
import {
  MAX_AUDITED_CHANGES,
  MAX_CURSOR,
  nameChange,
  seenChange,
  type AuditState,
  type SeenChange,
} from './audit-state';
import { findDuplicateKey } from './json-duplicate-keys';

// `audit URL --key VKEY --state FILE` (docs/price-history-api.md, "Auditing the log"): what a
// customer or a witness runs. It fetches the signed checkpoint and the feed's changes since its
// last run, recomputes the chain from the changes alone (core/feed-chain.ts), and accepts the
// checkpoint only when its signature verifies and it extends the one kept: the same history, and
// more. This file is the audit itself; reading and keeping the state file is the command's.

/** The largest answer read: a page of 1,000 changes is about 600 KB. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** How long one request may take. */
const REQUEST_TIMEOUT_MS = 30_000;
/** A 429 or 503 is retried after its Retry-After, this many times, waiting at most MAX_RETRY_WAIT_S each. */
const RETRIES = 5;
const MAX_RETRY_WAIT_S = 120;

/** What the audit needs from outside: HTTP, and a way to wait (tests pass their own). */
export interface AuditIo {
  readonly fetch: (url: string, init: { signal: AbortSignal; headers: Record<string, string> }) => Promise<Response>;
  readonly sleep: (ms: number) => Promise<void>;
}

export type AuditOutcome =
  /** The checkpoint verifies and extends the one kept: `state` is what to keep. */
  | { readonly kind: 'verified'; readonly checkpoint: Checkpoint; readonly read: number; readonly state: AuditState }
  /** History seen before was rewritten: the first change that differs, as seen then and as served now. */
  | {
      readonly kind: 'rewritten';
      readonly position: number;
      readonly was: SeenChange;
      readonly now: SeenChange | undefined;
    }
  /** The log contradicts itself (a hash or a head that is not its changes'), or its checkpoint is not the key's. */
  | { readonly kind: 'inconsistent'; readonly problem: string }
  /** The feed served fewer changes than the checkpoint counts: a cache may hold an older last page. */
  | { readonly kind: 'behind'; readonly served: number; readonly size: number }
  /** The checkpoint is older than the one kept (the feed still serves every change seen): a cache may hold it. */
  | { readonly kind: 'older'; readonly size: number; readonly kept: number };

/** The URL audited as kept in the state: without a trailing slash (with or without one, one log). */
export function auditedUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The service could not be asked, or answered what the audit cannot read: nothing is proven either way. */
export class AuditFetchError extends Error {
  override readonly name = 'AuditFetchError';
}

/**
 * Audits the log at `url` (the list's base URL, `https://api.example.com/v1/pricing`) against
 * `previous` (undefined on a first run) with `key`.
 */
export async function audit(
  url: string,
  key: VerifierKey,
  previous: AuditState | undefined,
  io: AuditIo,
): Promise<AuditOutcome> {
  const base = auditedUrl(url);
  const note = (await get(io, `${base}/checkpoint`, 64 * 1024)).toString('utf8');
  const opened = openNote(note, key);
  if ('problem' in opened) return { kind: 'inconsistent', problem: `the checkpoint: ${opened.problem}` };
  const checkpoint = parseCheckpoint(opened.text);
  if ('problem' in checkpoint) return { kind: 'inconsistent', problem: `the checkpoint: ${checkpoint.problem}` };
  if (checkpoint.origin !== key.name)
    return { kind: 'inconsistent', problem: `the checkpoint is of ${quoteValue(checkpoint.origin)}, not ${key.name}` };
  // What a run reads is bounded by the size signed: a size no audit can hold is not read for.
  if (checkpoint.size > MAX_AUDITED_CHANGES)
    throw new AuditFetchError(
      `the checkpoint counts ${checkpoint.size} changes, more than an audit holds (${MAX_AUDITED_CHANGES})`,
    );

  const seen = previous?.changes ?? [];
  if (previous !== undefined && checkpoint.size < previous.checkpoint.size) {
    // Smaller than a checkpoint signed before: either changes went, or this is an older one, cached.
    const rewrite = await findRewrite(io, base, seen);
    if (rewrite !== undefined) return rewrite;
    if (checkpoint.head.toString('base64') !== headOf(seen, checkpoint.size))
      return notTheChain(checkpoint, seen.length);
    return { kind: 'older', size: checkpoint.size, kept: previous.checkpoint.size };
  }
  const read = await readFeed(io, base, previous?.next ?? null, seen, checkpoint.size);
  if (read.problem !== undefined)
    return (await findRewrite(io, base, seen)) ?? { kind: 'inconsistent', problem: read.problem };
  if (read.changes.length < checkpoint.size)
    return { kind: 'behind', served: read.changes.length, size: checkpoint.size };
  if (checkpoint.head.toString('base64') !== headOf(read.changes, checkpoint.size))
    return (await findRewrite(io, base, seen)) ?? notTheChain(checkpoint, read.changes.length);
  return {
    kind: 'verified',
    checkpoint,
    read: read.changes.length - seen.length,
    state: { url: base, note, checkpoint, next: read.next, changes: read.changes },
  };
}

/** The head of the chain of the first `size` of `changes` (base64). */
function headOf(changes: readonly SeenChange[], size: number): string {
  return size === 0 ? EMPTY_CHAIN_HEAD.toString('base64') : changes[size - 1].hash;
}

function notTheChain(checkpoint: Checkpoint, read: number): AuditOutcome {
  return {
    kind: 'inconsistent',
    problem:
      `the checkpoint (size ${checkpoint.size}, head ${checkpoint.head.toString('base64')}) is not the chain of ` +
      `the changes the feed serves (${read} read)`,
  };
}

/**
 * The changes after `next`, appended to `seen` and checked: each at its position, its hash that of
 * its change after the one before. Reads until the feed has no more ready, or `size` are held.
 */
async function readFeed(
  io: AuditIo,
  base: string,
  next: string | null,
  seen: readonly SeenChange[],
  size: number,
): Promise<{ readonly changes: SeenChange[]; readonly next: string | null; readonly problem?: string }> {
  const changes = [...seen];
  let previous = changes.length === 0 ? EMPTY_CHAIN_HEAD : Buffer.from(changes[changes.length - 1].hash, 'base64');
  let cursor = next;
  for (;;) {
    const page = await getPage(io, `${base}/changes${cursor === null ? '' : `?after=${encodeURIComponent(cursor)}`}`);
    for (const item of page.changes) {
      const checked = checkChange(item, changes.length, previous);
      if ('problem' in checked) return { changes, next: cursor, problem: checked.problem };
      changes.push(checked.change);
      previous = checked.hash;
    }
    cursor = page.next;
    if (!page.hasMore || page.changes.length === 0 || changes.length >= size) return { changes, next: cursor };
  }
}

/**
 * Reads the feed again from its start and names the first change that differs from what was seen,
 * or went; `undefined` when the feed still serves every change seen, as seen.
 */
async function findRewrite(io: AuditIo, base: string, seen: readonly SeenChange[]): Promise<AuditOutcome | undefined> {
  if (seen.length === 0) return undefined;
  const again = await readFeed(io, base, null, [], seen.length);
  for (let position = 0; position < seen.length; position++) {
    const now = again.changes[position];
    if (now?.hash === seen[position].hash) continue;
    // Where the feed contradicts itself, that is what is said: what it serves there is not proven.
    if (now === undefined && again.problem !== undefined) return { kind: 'inconsistent', problem: again.problem };
    return { kind: 'rewritten', position, was: seen[position], now };
  }
  return undefined;
}

/** A change of a page, checked at `position` after the hash `previous`; what is wrong with it otherwise. */
function checkChange(
  item: unknown,
  position: number,
  previous: Buffer,
): { readonly change: SeenChange; readonly hash: Buffer } | { readonly problem: string } {
  const at = `the feed’s change at position ${position}`;
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return { problem: `${at} is not an object` };
  const { position: served, hash, ...rest } = item as Record<string, unknown>;
  if (served !== position) return { problem: `${at} says it is at position ${quoteValue(String(served))}` };
  const leaf = canonicalJson(rest);
  if (leaf === undefined) return { problem: `${at} holds a value JSON cannot` };
  const computed = chainHash(previous, leaf);
  if (hash !== computed.toString('base64'))
    return { problem: `${at}: its hash is not the hash of the change and the one before it` };
  const { at: instant, product_key: productKey } = rest;
  if (typeof instant !== 'string' || typeof productKey !== 'string')
    return { problem: `${at} has no at or product_key` };
  // Kept only as a state file holds it (audit-state.ts): a state the next run refused would leave
  // the auditor to start again from nothing, forgetting what it saw.
  const change = seenChange({ at: instant, product_key: productKey, hash });
  if (change === undefined) return { problem: `${at} has an at or product_key longer than any` };
  return { change, hash: computed };
}

interface Page {
  readonly changes: readonly unknown[];
  readonly next: string;
  readonly hasMore: boolean;
}

async function getPage(io: AuditIo, url: string): Promise<Page> {
  const body = await get(io, url, MAX_ANSWER_BYTES);
  const text = body.toString('utf8');
  let page: unknown;
  try {
    page = JSON.parse(text);
  } catch {
    throw new AuditFetchError(`${url} answered what is not JSON`);
  }
  // JSON.parse keeps the last of two equal names, a client may read the first: the chain would
  // commit to a change read two ways (RFC 8785 canonicalizes I-JSON, whose names are unique).
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined)
    throw new AuditFetchError(`${url} answered JSON with ${quoteValue(duplicate.key)} twice in one object`);
  const { changes, next, has_more: hasMore } = (page ?? {}) as Record<string, unknown>;
  if (!Array.isArray(changes) || typeof next !== 'string' || typeof hasMore !== 'boolean')
    throw new AuditFetchError(`${url} answered no page of changes (changes, next, has_more)`);
  if (next.length > MAX_CURSOR)
    throw new AuditFetchError(`${url} answered a "next" of ${next.length} characters: no cursor`);
  return { changes, next, hasMore };
}

/** The body of a 200 to GET `url`, at most `max` bytes; 429 and 503 retried after their Retry-After. */
async function get(io: AuditIo, url: string, max: number): Promise<Buffer> {
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await io.fetch(url, {
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        headers: { accept: 'application/json, text/plain' },
      });
    } catch (error) {
      throw new AuditFetchError(`cannot GET ${url}: ${describe(error)}`);
    }
    if (response.status === 200) return await bodyOf(response, url, max);
    await response.body?.cancel();
    const wait = Number(response.headers.get('retry-after') ?? 'NaN');
    if (
      (response.status === 429 || response.status === 503) &&
      attempt < RETRIES &&
      wait >= 0 &&
      wait <= MAX_RETRY_WAIT_S
    ) {
      await io.sleep(Math.max(wait, 1) * 1000);
      continue;
    }
    throw new AuditFetchError(`GET ${url} answered ${response.status}`);
  }
}

async function bodyOf(response: Response, url: string, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  const reader = response.body?.getReader();
  try {
    for (let read = await reader?.read(); read && !read.done; read = await reader!.read()) {
      length += read.value.length;
      if (length > max) {
        await reader!.cancel();
        throw new AuditFetchError(`${url} answered more than ${max} bytes`);
      }
      chunks.push(Buffer.from(read.value));
    }
  } catch (error) {
    if (error instanceof AuditFetchError) throw error;
    throw new AuditFetchError(`reading ${url}: ${describe(error)}`);
  }
  return Buffer.concat(chunks);
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}

/** How an outcome that is not `verified` reads, one line. */
export function auditProblem(outcome: Exclude<AuditOutcome, { kind: 'verified' }>): string {
  switch (outcome.kind) {
    case 'rewritten':
      return (
        `history was rewritten: ${nameChange(outcome.position, outcome.was)} ` +
        (outcome.now === undefined
          ? 'is no longer served'
          : outcome.now.at === outcome.was.at && outcome.now.productKey === outcome.was.productKey
            ? 'shows other prices now'
            : `is now ${nameChange(outcome.position, outcome.now)}`)
      );
    case 'inconsistent':
      return `the log is not what it signs: ${outcome.problem}`;
    case 'behind':
      return (
        `the feed served ${outcome.served} changes, fewer than the checkpoint’s ${outcome.size}: a cache may still ` +
        'hold an older last page; run again in a few minutes (nothing was kept)'
      );
    case 'older':
      return (
        `the checkpoint served (size ${outcome.size}) is older than the one kept (size ${outcome.kept}), and the ` +
        'feed still serves every change seen: a cache may hold it; run again in a few minutes (nothing was kept)'
      );
  }
}
