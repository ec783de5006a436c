import type { PriceRecord } from '../core/price-record';
import { loggedInstant, type LoggedRecord } from './change-log-chain';

/** A price record as a change-log entry holds it (every column as text), for unit specs. */
export function loggedRecord(record: PriceRecord & { recordedAt: number }): LoggedRecord {
  return {
    id: String(record.id),
    product_key: record.productKey,
    organization_id: record.organizationId,
    unit_type: record.unitType,
    unit_count: String(record.unitCount),
    amount: record.amount,
    valid_from: loggedInstant(record.validFrom),
    valid_until: record.validUntil === null ? null : loggedInstant(record.validUntil),
    recorded_at: loggedInstant(record.recordedAt),
    superseded_by: record.supersededBy === null ? null : String(record.supersededBy),
  };
}
