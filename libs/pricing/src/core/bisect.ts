/**
 * The first index of `sorted` at which `isAfter` holds, for a predicate that is false, then true
 * along it (`sorted.length` when it never holds): a binary search, the one every sorted lookup of
 * the library uses (prices by start, changes of the feed, writes of the list).
 */
export function firstIndexWhere<T>(sorted: readonly T[], isAfter: (item: T) => boolean): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (isAfter(sorted[middle])) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * The first index below `length` at which `isAfter` holds, for a predicate on indices that is
 * false, then true (`length` when it never holds): for sorted data held in parallel arrays.
 */
export function firstIndexOf(length: number, isAfter: (index: number) => boolean): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (isAfter(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}
