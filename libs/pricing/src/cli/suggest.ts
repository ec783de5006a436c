// "Did you mean": the known word closest to a mistyped one (a command, an option), as git and
// kubectl suggest. Optimal string alignment distance (insertions, deletions, substitutions and
// swaps of neighbours), in time bounded by the candidates' lengths: a word much longer than every
// candidate is no typo of one, and is not compared.

/** Suggest a candidate at most this many edits away, and at most a third of the word's length (at least 1). */
const MAX_EDITS = 2;

/**
 * The candidate closest to `word` within MAX_EDITS edits (and a third of its length), the first in
 * `candidates` on a tie; `undefined` when none is close. A word that is a prefix of exactly one
 * candidate (`--dry` for `--dry-run`) is that candidate.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const longest = candidates.reduce((max, candidate) => Math.max(max, candidate.length), 0);
  if (word.length === 0 || word.length > longest + MAX_EDITS) return undefined;
  const prefixed = candidates.filter((candidate) => candidate.startsWith(word));
  if (prefixed.length === 1 && word.length >= 3) return prefixed[0];
  const allowed = Math.min(MAX_EDITS, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = allowed + 1;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance between `a` and `b`, by code unit: O(|a| × |b|). */
export function editDistance(a: string, b: string): number {
  let twoBack: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, twoBack[j - 2] + 1);
      row.push(best);
    }
    twoBack = previous;
    previous = row;
  }
  return previous[b.length];
}
