import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '@app/clock';
import { createPublicKey } from 'node:crypto';
import { isKeyName } from '../core/signed-note';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../options/pricing-options';
import { renderCheckpoint, type ChainHead } from '../rendering/checkpoint';
import type { PreparedAnswers } from '../rendering/price-list-response';
import { PricingState } from './pricing-state';

/**
 * The signed checkpoint of the change feed as served now (docs/price-history-api.md, "The
 * checkpoint"): the chain of the changes `GET /v1/pricing/changes` serves now, signed once per
 * head (a signature is about 50 µs; the last one is kept).
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
   * The answers of the checkpoint now: its size is the number of changes the feed serves now (their
   * instants passed, and settled: PricingState.settledBefore); `undefined` when no prices can be
   * served, or no key was configured.
   */
  answers(): PreparedAnswers | undefined {
    const signing = this.options.checkpoint;
    const snapshot = this.state.current();
    if (signing === undefined || snapshot === undefined) return undefined;
    const now = this.clock.nowMs();
    const size = snapshot.history.sizeBefore(Math.min(now + 1, this.state.settledBefore()));
    const head = snapshot.history.chainHead(size);
    if (this.last?.chain.size === size && this.last.chain.head.equals(head)) return this.last.answers;
    const chain = { size, head };
    const answers = renderCheckpoint(signing.origin, signing.privateKey, chain, now);
    this.last = { chain, answers };
    return answers;
  }
}
