import { performance } from 'node:perf_hooks';

/**
 * Work that can pause: a generator that yields between small steps and returns its result.
 * The same work runs to completion at once (`runNow`) or in slices that let the event loop
 * serve requests in between (`runInSlices`).
 */
export type Steps<T> = Generator<void, T, void>;

/** How long one slice may hold the event loop. */
const SLICE_MS = 8;

export function runNow<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs `steps`, giving the event loop a turn whenever a slice has lasted `sliceMs`. */
export async function runInSlices<T>(steps: Steps<T>, sliceMs = SLICE_MS): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}

/** Resolves after the event loop has run its pending I/O callbacks. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
