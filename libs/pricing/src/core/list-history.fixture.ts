import { ListHistory } from './list-history';
import type { PriceRecord } from './price-record';
import { runNow } from './slices';

/**
 * The list's history of `records` (each known from when it was recorded, with its end as stored)
 * and the instants of `writes`, as a first load builds it: for unit specs.
 */
export function historyOf(records: Iterable<PriceRecord>, writes: readonly number[] = []): ListHistory {
  return runNow(ListHistory.build({ records, ends: new Map(), writes, lastChangeId: 0 }));
}
