import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '@app/clock';
import { createPublicKey } from 'node:crypto';
import { isKeyName } from '../core/signed-note';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../options/pricing-options';
import { renderCheckpoint, type ChainHead } from '../rendering/checkpoint';
import type { PreparedAnswers } from '../rendering/price-list-response';
import { PricingState } from './pricing-state';

/**
 * The checkpoint's merge delay: it counts the changes at least this old. The feed's last page may
 * be cached for 5 minutes (`public, max-age=300`), and the instances' clocks may be a minute
 * apart (CLOCK_SKEW_MS, http/pricing.controller.ts): every copy of the feed a client can get, cached or not, holds every
 * change the checkpoint counts, so an audit never finds the feed short of it.
 */
export const CHECKPOINT_DELAY_MS = 360_000;

/**
 * The signed checkpoint of the change feed (docs/price-history-api.md, "GET
 * /v1/pricing/checkpoint"): the chain of the changes `GET /v1/pricing/changes` serves, up to
 * CHECKPOINT_DELAY_MS ago, signed once per head (a signature is about 50 µs; the last one is kept).
 */
@Injectable()
export class CheckpointAnswers {
  private last: { readonly chain: ChainHead; readonly answers: PreparedAnswers } | undefined;

  constructor(
    private readonly state: PricingState,
    private readonly clock: Clock,
    @Inject(PRICING_OPTIONS) private readonly options: ResolvedPricingOptions,
  ) {
    const signing = options.checkpoint;
    if (signing === undefined) return;
    // Refused here, at start: a checkpoint with such an origin, or signed by another kind of key, verifies nowhere.
    if (!isKeyName(signing.origin))
      throw new TypeError(
        `checkpoint origin ${JSON.stringify(signing.origin)} has a space, a "+" or an unprintable character`,
      );
    if (signing.privateKey.type !== 'private' || createPublicKey(signing.privateKey).asymmetricKeyType !== 'ed25519')
      throw new TypeError('the checkpoint key must be an Ed25519 private key');
  }

  /** Whether checkpoints are signed here (a key was configured). */
  get signed(): boolean {
    return this.options.checkpoint !== undefined;
  }

  /**
   * The answers of the checkpoint now: its size is the number of changes of the feed at least
   * CHECKPOINT_DELAY_MS old (and settled: PricingState.settledBefore); `undefined` when no prices
   * can be served, the list's past is not read yet (the first seconds of a start-up), or no key was
   * configured.
   */
  answers(): PreparedAnswers | undefined {
    const signing = this.options.checkpoint;
    const snapshot = this.state.current();
    // A present alone (PricingSnapshot.heldFrom) has no feed yet: its size would be none.
    if (signing === undefined || snapshot === undefined || snapshot.heldFrom > -Infinity) return undefined;
    const now = this.clock.nowMs();
    const size = snapshot.history.sizeBefore(Math.min(now - CHECKPOINT_DELAY_MS, this.state.settledBefore()));
    const head = snapshot.history.chainHead(size);
    if (this.last?.chain.size === size && this.last.chain.head.equals(head)) return this.last.answers;
    const chain = { size, head };
    const answers = renderCheckpoint(signing.origin, signing.privateKey, chain, now);
    this.last = { chain, answers };
    return answers;
  }
}
