import { performance } from 'node:perf_hooks';

/**
 * Work that can pause: a generator that yields between small steps and returns its result. Large
 * books are indexed and large lists serialized this way, so that the event loop serves requests
 * in between (docs/decisions.md, "Prices in memory"). A step is at most about a millisecond's work
 * even before its code is optimized: a slice ends only between steps, and at an instance's start
 * steps of 1,024 entries of the list took 10–29 ms (docs/benchmarks.md, "The list's past").
 */
export type Steps<T> = Generator<void, T, void>;

/**
 * How long one slice may hold the event loop. A young-generation collection may land in any slice
 * (15–25 ms while a large book is read: what it copies survives), and a request waits for the
 * slice and the collection: at 100,000 list prices the first load's worst /health/live waits were
 * 34–50 ms with 8 ms slices, 28–41 with 4 (docs/benchmarks.md, "The list's past").
 */
const SLICE_MS = 4;

/** Runs `steps` at once. */
export function runNow<T>(steps: Steps<T>): T {
  for (let step = steps.next(); ; step = steps.next()) if (step.done) return step.value;
}

/**
 * Runs `steps`, giving the event loop a turn whenever a slice has lasted `sliceMs`: shorter for
 * work in the background (a request waits a slice at each turn it takes).
 */
export async function inSlices<T>(steps: Steps<T>, sliceMs = SLICE_MS): Promise<T> {
  let sliceStart = performance.now();
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

/** Items sorted or merged between two pauses. */
const STEP = 1_024;

/**
 * `items` sorted by `compare`, in steps: runs of STEP sorted natively, then merged pairwise (a
 * bottom-up merge sort), pausing after each STEP items placed. Stable.
 */
export function* sortInSteps<T>(items: readonly T[], compare: (a: T, b: T) => number): Steps<T[]> {
  let runs: T[][] = [];
  for (let start = 0; start < items.length; start += STEP) {
    runs.push(items.slice(start, start + STEP).sort(compare));
    yield;
  }
  while (runs.length > 1) {
    const merged: T[][] = [];
    for (let i = 0; i < runs.length; i += 2) {
      merged.push(i + 1 < runs.length ? yield* mergeInSteps(runs[i], runs[i + 1], compare) : runs[i]);
    }
    runs = merged;
  }
  return runs[0] ?? [];
}

/** The sorted `a` and `b` merged into one sorted array (`a`'s items first among equals), in steps. */
export function* mergeInSteps<T>(a: readonly T[], b: readonly T[], compare: (a: T, b: T) => number): Steps<T[]> {
  if (b.length === 0) return [...a];
  const merged: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    merged.push(j >= b.length || (i < a.length && compare(a[i], b[j]) <= 0) ? a[i++] : b[j++]);
    if ((merged.length & (STEP - 1)) === 0) yield;
  }
  return merged;
}
