const RUNS = /\d+|\D+/g;

/**
 * Natural order of product keys (section 2.2): runs of digits compare as numbers, other runs
 * by code point, so `compute.g2.2` < `compute.g2.4` < `compute.g2.16`. Keys that differ only
 * in leading zeros fall back to plain code point order, so the order stays total.
 */
export function compareNatural(a: string, b: string): number {
  const runsA = a.match(RUNS) ?? [];
  const runsB = b.match(RUNS) ?? [];
  const common = Math.min(runsA.length, runsB.length);
  for (let i = 0; i < common; i++) {
    const x = runsA[i];
    const y = runsB[i];
    if (x === y) continue;
    const bothDigits = isDigitRun(x) && isDigitRun(y);
    const order = bothDigits ? compareDigitRuns(x, y) : compareCodePoints(x, y);
    if (order !== 0) return order;
  }
  if (runsA.length !== runsB.length) return runsA.length - runsB.length;
  return compareCodePoints(a, b);
}

function isDigitRun(run: string): boolean {
  const c = run.charCodeAt(0);
  return c >= 48 && c <= 57;
}

/** Compares digit runs of any length as numbers, without converting them. */
function compareDigitRuns(x: string, y: string): number {
  const a = x.replace(/^0+(?=\d)/, '');
  const b = y.replace(/^0+(?=\d)/, '');
  if (a.length !== b.length) return a.length - b.length;
  return compareCodePoints(a, b);
}

function compareCodePoints(x: string, y: string): number {
  // Product keys are ASCII, where UTF-16 code unit order is code point order.
  return x < y ? -1 : x > y ? 1 : 0;
}
