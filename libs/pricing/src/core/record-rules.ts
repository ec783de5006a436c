import { parseProductKey } from '../catalogue/catalogue';
import type { PriceRecord } from './price-record';
import { PLAIN_DECIMAL } from './quote';

/**
 * What is wrong with a stored price, by the book's rules (the constraints of price_record, which a
 * row written around them may break: `NaN`, `-infinity`, a negative count); `undefined` when
 * nothing is. Prices in memory are never made of such a row (snapshot/price-book-loader.ts).
 */
export function recordProblem(record: PriceRecord): string | undefined {
  const family = parseProductKey(record.productKey)?.family;
  if (!family) return 'its product key fits no family';
  if (record.unitType !== family.unitType) return `its unit type is not ${family.unitType}, its family's`;
  if (!Number.isSafeInteger(record.unitCount) || record.unitCount <= 0)
    return 'its unit count is not a positive integer';
  if (!PLAIN_DECIMAL.test(record.amount)) return 'its amount is not a non-negative decimal';
  if (!Number.isFinite(record.validFrom)) return 'its valid_from is not an instant';
  if (record.validUntil !== null && !(Number.isFinite(record.validUntil) && record.validUntil > record.validFrom)) {
    return 'its valid_until is not an instant after its valid_from';
  }
  if (record.recordedAt !== undefined && !Number.isFinite(record.recordedAt))
    return 'its recorded_at is not an instant';
  return undefined;
}
