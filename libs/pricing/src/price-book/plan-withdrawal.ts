import { formatInstant } from '../core/instant';
import type { PriceRecord } from '../core/price-record';

/**
 * What an operator withdraws: a scheduled price (by its start) or a scheduled end (`organizationId`
 * null: the list price). Instants are epoch milliseconds.
 */
export type Withdrawal = Pick<PriceRecord, 'productKey' | 'organizationId'> &
  ({ readonly validFrom: number } | { readonly validUntil: number });

export interface WithdrawalPlan {
  /** The scheduled price to delete, if a price is withdrawn. */
  readonly deleteId: number | null;
  /** Records whose end moves (`validUntil` null reopens them), with the price that now ends them. */
  readonly reends: readonly Pick<PriceRecord, 'id' | 'validUntil' | 'supersededBy'>[];
}

export type PlannedWithdrawal = { readonly plan: WithdrawalPlan } | { readonly error: string };

/**
 * Only what has not taken effect at `now` (epoch milliseconds) can be withdrawn. Withdrawing a
 * scheduled price that ended an open price gives that price back the end the withdrawn one had (no
 * end, when it had none).
 */
export function planWithdrawal(withdrawal: Withdrawal, stored: readonly PriceRecord[], now: number): PlannedWithdrawal {
  const scope = stored.filter(
    (r) => r.productKey === withdrawal.productKey && r.organizationId === withdrawal.organizationId,
  );
  const what =
    withdrawal.organizationId === null
      ? `list price ${withdrawal.productKey}`
      : `${withdrawal.productKey} for organization ${withdrawal.organizationId}`;

  if ('validFrom' in withdrawal) {
    const at = formatInstant(withdrawal.validFrom);
    const target = scope.find((r) => r.validFrom === withdrawal.validFrom);
    if (!target) return { error: `no ${what} starts at ${at}` };
    if (target.validFrom <= now) {
      return { error: `the ${what} starting at ${at} took effect; what took effect cannot be withdrawn` };
    }
    const reends = scope
      .filter((r) => r.supersededBy === target.id)
      .map((r) => ({ id: r.id, validUntil: target.validUntil, supersededBy: target.supersededBy }));
    return { plan: { deleteId: target.id, reends } };
  }

  const at = formatInstant(withdrawal.validUntil);
  const target = scope.find((r) => r.validUntil === withdrawal.validUntil);
  if (!target) return { error: `no ${what} ends at ${at}` };
  if (withdrawal.validUntil <= now) {
    return { error: `the ${what} ended at ${at}; what took effect cannot be withdrawn` };
  }
  if (target.supersededBy !== null) {
    const successor = scope.find((r) => r.id === target.supersededBy);
    const start = successor ? formatInstant(successor.validFrom) : at;
    return {
      error: `the end of the ${what} at ${at} comes from the price scheduled at ${start}; withdraw that price instead`,
    };
  }
  const later = scope.find((r) => r.validFrom >= withdrawal.validUntil);
  if (later) {
    return {
      error: `the ${what} cannot be reopened at ${at}: a later price starts at ${formatInstant(later.validFrom)}; withdraw it first`,
    };
  }
  return { plan: { deleteId: null, reends: [{ id: target.id, validUntil: null, supersededBy: null }] } };
}
