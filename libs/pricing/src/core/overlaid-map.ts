import type { Steps } from './slices';

/** A table of more changed keys than this is merged into a new base (in steps) rather than held beside it. */
const MERGED_FROM = 4_096;

/**
 * An immutable map that a change makes anew without copying it (the prices held by product key,
 * snapshot/pricing-snapshot.ts: copying 100,000 keys held the event loop 50 ms at each change). The
 * keys a change replaced or removed go in a small map over a base shared by every map made from the
 * same one; when that map grows past MERGED_FROM, `with` merges both into a new base, in steps.
 */
export class OverlaidMap<K, V> {
  private constructor(
    private readonly base: ReadonlyMap<K, V>,
    /** The keys changed since `base`: their values, `undefined` for a key removed. */
    private readonly changed: ReadonlyMap<K, V | undefined>,
  ) {}

  /** A map of `entries` (taken as they are: the caller never changes them after). */
  static of<K, V>(entries: ReadonlyMap<K, V>): OverlaidMap<K, V> {
    return new OverlaidMap<K, V>(entries, new Map<K, V | undefined>());
  }

  get(key: K): V | undefined {
    return this.changed.has(key) ? this.changed.get(key) : this.base.get(key);
  }

  /** Every entry, those of the base first (not changed since), then the changed ones. */
  *entries(): Generator<[K, V]> {
    for (const entry of this.base) if (!this.changed.has(entry[0])) yield entry;
    for (const [key, value] of this.changed) if (value !== undefined) yield [key, value];
  }

  *values(): Generator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  /** This map with the keys of `replaced` set to their values (`undefined`: removed), in steps. */
  *with(replaced: ReadonlyMap<K, V | undefined>): Steps<OverlaidMap<K, V>> {
    const changed = new Map(this.changed);
    for (const [key, value] of replaced) changed.set(key, value);
    if (changed.size <= MERGED_FROM) return new OverlaidMap(this.base, changed);
    const base = new Map<K, V>();
    let n = 0;
    for (const [key, value] of this.base) {
      if (!changed.has(key)) base.set(key, value);
      if ((++n & 1023) === 0) yield;
    }
    for (const [key, value] of changed) if (value !== undefined) base.set(key, value);
    return new OverlaidMap(base, new Map());
  }
}
