import type { UnitType } from '../catalogue/catalogue';

/** One stored price: a list price (`organizationId` null) or one organization's agreed price. */
export interface PriceRecord {
  readonly id: string;
  readonly productKey: string;
  readonly organizationId: string | null;
  readonly unitType: UnitType;
  readonly unitCount: number;
  /** Decimal string with the digits it was set with; never a float. */
  readonly amount: string;
  readonly validFrom: Date;
  /** Exclusive end; `null` when no end is scheduled. */
  readonly validUntil: Date | null;
  readonly recordedAt: Date;
  /** The scheduled price that set `validUntil`, when one did. */
  readonly supersededBy: string | null;
}

/** A price applies at `instant` when `validFrom <= instant < validUntil`. */
export function isInForce(record: Pick<PriceRecord, 'validFrom' | 'validUntil'>, instant: Date): boolean {
  const t = instant.getTime();
  return record.validFrom.getTime() <= t && (record.validUntil === null || t < record.validUntil.getTime());
}
