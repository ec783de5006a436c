import { formatInstant } from '../core/instant';
import type { DatedPriceRecord as PriceRecord } from '../core/price-record';

/** What an operator withdraws: a scheduled price (by its start) or a scheduled end. */
export type Withdrawal =
  | { readonly productKey: string; readonly organizationId: string | null; readonly validFrom: Date }
  | { readonly productKey: string; readonly organizationId: string | null; readonly validUntil: Date };

export interface WithdrawalPlan {
  /** The scheduled price to delete, if a price is withdrawn. */
  readonly deleteId: string | null;
  /** Records whose end moves (`validUntil` null reopens them), with the price that now ends them. */
  readonly reends: readonly {
    readonly id: string;
    readonly validUntil: Date | null;
    readonly supersededBy: string | null;
  }[];
}

export type PlannedWithdrawal = { readonly plan: WithdrawalPlan } | { readonly error: string };

/**
 * Only what has not taken effect can be withdrawn. Withdrawing a scheduled price that ended an
 * open price gives that price back the end the withdrawn one had (no end, when it had none).
 */
export function planWithdrawal(withdrawal: Withdrawal, stored: readonly PriceRecord[], now: Date): PlannedWithdrawal {
  const scope = stored.filter(
    (r) => r.productKey === withdrawal.productKey && r.organizationId === withdrawal.organizationId,
  );
  const what =
    withdrawal.organizationId === null
      ? `list price ${withdrawal.productKey}`
      : `${withdrawal.productKey} for organization ${withdrawal.organizationId}`;

  if ('validFrom' in withdrawal) {
    const at = formatInstant(withdrawal.validFrom);
    const target = scope.find((r) => r.validFrom.getTime() === withdrawal.validFrom.getTime());
    if (!target) return { error: `no ${what} starts at ${at}` };
    if (target.validFrom.getTime() <= now.getTime()) {
      return { error: `the ${what} starting at ${at} took effect; what took effect cannot be withdrawn` };
    }
    const reends = scope
      .filter((r) => r.supersededBy === target.id)
      .map((r) => ({ id: r.id, validUntil: target.validUntil, supersededBy: target.supersededBy }));
    return { plan: { deleteId: target.id, reends } };
  }

  const at = formatInstant(withdrawal.validUntil);
  const target = scope.find((r) => r.validUntil?.getTime() === withdrawal.validUntil.getTime());
  if (!target) return { error: `no ${what} ends at ${at}` };
  if (withdrawal.validUntil.getTime() <= now.getTime()) {
    return { error: `the ${what} ended at ${at}; what took effect cannot be withdrawn` };
  }
  if (target.supersededBy !== null) {
    const successor = scope.find((r) => r.id === target.supersededBy);
    const start = successor ? formatInstant(successor.validFrom) : at;
    return {
      error: `the end of the ${what} at ${at} comes from the price scheduled at ${start}; withdraw that price instead`,
    };
  }
  const later = scope.find((r) => r.validFrom.getTime() >= withdrawal.validUntil.getTime());
  if (later) {
    return {
      error: `the ${what} cannot be reopened at ${at}: a later price starts at ${formatInstant(later.validFrom)}; withdraw it first`,
    };
  }
  return { plan: { deleteId: null, reends: [{ id: target.id, validUntil: null, supersededBy: null }] } };
}
