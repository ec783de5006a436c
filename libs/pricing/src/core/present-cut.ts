// The list's present, read first at start-up (docs/decisions.md, "One clock"): with five years of
// history, an instance serves the list in seconds, and reads the past after.

/**
 * Where a first read of list prices alone may stop (PricingData.present): at the third latest write
 * of list prices published by `readAt`, a millisecond before it (instants are read as float ms).
 * The list from the second latest on (`heldFrom`) then depends only on the prices whose listing
 * may reach the cut or later: its entries, its `last_changed` and the version before it (the
 * instants at which the list changed since the cut are writes, and starts and ends of prices
 * listed since). `undefined` when fewer writes were published: the past is short, read whole.
 */
export function presentCut(
  listWrites: readonly number[],
  readAt: number,
): { readonly cut: number; readonly heldFrom: number } | undefined {
  const published = listWrites.filter((at) => at <= readAt).sort((a, b) => b - a);
  if (published.length < 3) return undefined;
  return { cut: published[2] - 1, heldFrom: published[1] };
}
