import type { KeyObject } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { checkpointText, signNote } from '../core/signed-note';
import { ANY_ORIGIN, uncompressedAnswers, type PreparedAnswers } from './price-list-response';

/**
 * How long a checkpoint may be cached: it counts the changes at least CHECKPOINT_DELAY_MS old
 * (snapshot/checkpoint-answers.ts), so a client sees one at most this much later than that
 * (docs/price-history-api.md, "GET /v1/pricing/checkpoint").
 */
export const CHECKPOINT_CACHE_CONTROL = 'public, max-age=10';
export const CHECKPOINT_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** The chain of the feed's first `size` changes, whose last hash is `head` (core/feed-chain.ts). */
export interface ChainHead {
  readonly size: number;
  readonly head: Buffer;
}

/**
 * The answers of `GET /v1/pricing/checkpoint` for `chain`: the checkpoint signed by `privateKey`
 * named `origin`, a signed note (c2sp.org/tlog-checkpoint). Ed25519 signs deterministically: every
 * instance serving the same chain serves the same bytes, and the same ETag.
 */
export function renderCheckpoint(
  origin: string,
  privateKey: KeyObject,
  chain: ChainHead,
  now: number,
): PreparedAnswers {
  const note = signNote(checkpointText({ origin, ...chain }), origin, privateKey);
  const headers: OutgoingHttpHeaders = { 'cache-control': CHECKPOINT_CACHE_CONTROL, ...ANY_ORIGIN };
  return uncompressedAnswers(Buffer.from(note, 'utf8'), headers, {
    lastChangedMs: null,
    previousChangeMs: null,
    builtForMs: now,
    contentType: CHECKPOINT_CONTENT_TYPE,
  });
}
