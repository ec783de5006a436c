import { performance } from 'node:perf_hooks';

/**
 * Input lengths compared: the 16 KB one is eight times the 2 KB one (characters of a text, or
 * whatever else `inputOfLength` counts: the entries of a price book).
 */
const SHORT = 2 * 1024;
const LONG = 16 * 1024;

/** The two input lengths a measurement compares (the second eight times the first). */
export interface Lengths {
  readonly short: number;
  readonly long: number;
}

/**
 * For work whose output is a few times its input (escaping, copying a text out): from a few
 * kilobytes of output on, each string is allocated apart from the rest of the heap, in pages the
 * system hands out anew, and the time per character steps up there (escapeWord, measured on this
 * machine: 52 ns a character up to 4 KB of input, 128 at 8 KB, 191 at 16 KB, 213 at 32 KB, 228 at
 * 64 KB), which made a linear function measure 27–57× between 2 and 16 KB. Both lengths above the
 * step: linear work measures about 9.5×, quadratic work still about 64×.
 */
export const LARGE_OUTPUT: Lengths = { short: 16 * 1024, long: 128 * 1024 };
/**
 * A linear parser takes about 8 times as long on the longer input (less, with fixed costs), a
 * quadratic one about 64 times: 20 tells them apart with room on both sides for a busy machine
 * (4 KB against 16 KB did not: fixed costs brought a quadratic parser close to a linear one).
 */
const MAX_RATIO = 20;
/** What a linear parser gives: measuring stops once the longer input is within it. */
const LINEAR_RATIO = 8;
/**
 * Growth allowed (`max`) and what a parser of that kind gives (`expected`). A parser that reads
 * at most a bounded start of its input (a length check first) gives about 1 on both lengths, a
 * linear one 8: 3 tells them apart.
 */
interface Growth {
  readonly name: string;
  readonly max: number;
  readonly expected: number;
}
const LINEAR: Growth = { name: 'linear', max: MAX_RATIO, expected: LINEAR_RATIO };
const CONSTANT: Growth = { name: 'constant', max: 3, expected: 1 };
/**
 * Beyond twice the allowed ratio after CERTAIN_AFTER rounds, measuring stops: the best of that
 * many batches of each size is not a disturbance but the parser's own growth (a quadratic one
 * measures 60× here).
 */
const CERTAIN_AFTER = 3;
/** Each measurement is the best of this many batches: the least disturbed by GC and other processes. */
const BATCHES = 7;
/** Rounds of measurements, at most: a busy machine gets more chances, a quadratic parser none. */
const ROUNDS = 10;
/** No round starts after this long (ms): a quadratic parser is slow to measure, and fails anyway. */
const BUDGET_MS = 4_000;
/** A batch repeats the call until it lasts at least this long, so that the timer's resolution does not matter. */
const MIN_BATCH_MS = 2;

/**
 * The best time of one call of `work` on `input`, in milliseconds, over BATCHES batches; it stops
 * early once a batch is at most `enoughMs` (the best can only be lower).
 */
function bestTimePerCall<T>(work: (input: T) => unknown, input: T, calls: number, enoughMs = 0): number {
  let best = Infinity;
  for (let batch = 0; batch < BATCHES && best > enoughMs; batch++) {
    const started = performance.now();
    for (let i = 0; i < calls; i++) work(input);
    best = Math.min(best, (performance.now() - started) / calls);
  }
  return best;
}

/** How many calls on `input` make a batch of at least MIN_BATCH_MS. */
function callsPerBatch<T>(work: (input: T) => unknown, input: T): number {
  let calls = 1;
  for (;;) {
    const started = performance.now();
    for (let i = 0; i < calls; i++) work(input);
    if (performance.now() - started >= MIN_BATCH_MS || calls >= 1 << 20) return calls;
    calls *= 2;
  }
}

export interface LinearTimeReport {
  readonly shortMs: number;
  readonly longMs: number;
  readonly ratio: number;
}

/**
 * Measures `work` on inputs of 2 KB and 16 KB made by `inputOfLength` (which should build the
 * worst case the parser can meet: repeated separators, unterminated quotes, long runs of one
 * character class) and returns the times and their ratio; measuring stops once it is within
 * `growth.max`.
 */
export function measureGrowth<T = string>(
  work: (input: T) => unknown,
  inputOfLength: (length: number) => T,
  growth: Growth = LINEAR,
  lengths: Lengths = { short: SHORT, long: LONG },
): LinearTimeReport {
  const short = inputOfLength(lengths.short);
  const long = inputOfLength(lengths.long);
  const calls = callsPerBatch(work, short);
  bestTimePerCall(work, long, 1); // warm up the code path of the longer input too
  // Other work on the machine only ever makes a batch slower: the best times of several rounds
  // are the truest, and measuring stops once they are within the bound.
  let shortMs = Infinity;
  let longMs = Infinity;
  const started = performance.now();
  const again = (round: number) =>
    round < ROUNDS &&
    longMs > shortMs * growth.max &&
    !(round >= CERTAIN_AFTER && longMs > shortMs * 2 * growth.max) &&
    performance.now() - started < BUDGET_MS;
  for (let round = 0; round === 0 || again(round); round++) {
    shortMs = Math.min(shortMs, bestTimePerCall(work, short, calls));
    longMs = Math.min(
      longMs,
      bestTimePerCall(work, long, Math.max(1, Math.floor(calls / growth.expected)), shortMs * growth.expected),
    );
  }
  return { shortMs, longMs, ratio: longMs / shortMs };
}

/**
 * Fails when `work` is not linear in its input's length: its time on a 16 KB input is more than
 * 20 times its time on a 2 KB one (a linear parser gives about 8, a quadratic one about 64). Times, not counts of steps,
 * so it holds for regular expressions and library code too. For work in O(n log n) (a sort), which
 * gives about 8 × 14 / 11 ≈ 10 (more on a busy machine), pass a `maxRatio` of 30: a quadratic one still
 * fails it.
 */
export function expectLinearTime<T = string>(
  work: (input: T) => unknown,
  inputOfLength: (length: number) => T,
  maxRatio = MAX_RATIO,
  lengths: Lengths = { short: SHORT, long: LONG },
): LinearTimeReport {
  return expectGrowth(work, inputOfLength, { ...LINEAR, max: maxRatio }, lengths);
}

/**
 * Fails when `work` costs more on a 16 KB input than on a 2 KB one: more than 3 times (a parser
 * that reads a bounded start of its input gives about 1, a linear one about 8).
 */
export function expectConstantTime<T = string>(
  work: (input: T) => unknown,
  inputOfLength: (length: number) => T,
): LinearTimeReport {
  return expectGrowth(work, inputOfLength, CONSTANT);
}

function expectGrowth<T>(
  work: (input: T) => unknown,
  inputOfLength: (length: number) => T,
  growth: Growth,
  lengths: Lengths = { short: SHORT, long: LONG },
): LinearTimeReport {
  const report = measureGrowth(work, inputOfLength, growth, lengths);
  if (report.ratio > growth.max) {
    throw new Error(
      `not ${growth.name}: ${report.longMs.toFixed(4)} ms at length ${lengths.long} against ${report.shortMs.toFixed(4)} ms at ${lengths.short} ` +
        `(${report.ratio.toFixed(1)}×, at most ${growth.max}× allowed)`,
    );
  }
  return report;
}

/** `unit` repeated to `length` characters (cut at the end). */
export function repeated(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}
