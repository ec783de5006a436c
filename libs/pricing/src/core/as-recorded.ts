import type { KnownEnd, KnownEnds } from './end-table';
import type { PriceRecord } from './price-record';

// The price book as recorded at an instant (docs/using-pricing.md, "The book as recorded"): what a
// re-priced invoice reads, the same figures after any later write. A record is in it from its
// write's publication instant (`recordedAt`) on, with the end it had then: a later write may set,
// move or lift an end, never change anything else of a record (the book's rules), so that its
// ends (KnownEnd, from `price_record.end_set_at`/`end_before` or the change log) are all there is
// to undo. A scheduled price withdrawn later is gone from the book: it never took effect, so it
// priced no usage up to its withdrawal, and the book as recorded before then lacks it only for
// usage after that instant.

/** The end `record` had at `at`: the last of its `ends` known from `at` or before (its stored end without any). */
export function endKnownAt(record: PriceRecord, ends: readonly KnownEnd[] | undefined, at: number): number | null {
  if (ends === undefined) return record.validUntil;
  let until = record.validUntil;
  for (const end of ends) {
    if (end.from > at) break;
    until = end.validUntil;
  }
  return until;
}

/**
 * `records` (of one key and scope, sorted by `validFrom`) as the book recorded them at `at`: those
 * recorded by then, each with the end it had then; the same array when nothing of them changed after `at`.
 */
export function recordsAsRecordedAt(
  records: readonly PriceRecord[],
  ends: KnownEnds,
  at: number,
): readonly PriceRecord[] {
  let changed = false;
  const recorded: PriceRecord[] = [];
  for (const record of records) {
    if (record.recordedAt !== undefined && record.recordedAt > at) {
      changed = true;
      continue;
    }
    const until = endKnownAt(record, ends.get(record.id), at);
    if (until === record.validUntil) recorded.push(record);
    else {
      changed = true;
      recorded.push({ ...record, validUntil: until });
    }
  }
  return changed ? recorded : records;
}
