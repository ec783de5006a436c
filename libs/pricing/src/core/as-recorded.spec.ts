import fc from 'fast-check';
import { endKnownAt, recordsAsRecordedAt } from './as-recorded';
import type { KnownEnd } from './list-history';
import { priceRecord } from './price-record.fixture';

const ms = (iso: string): number => Date.parse(iso);
const JAN = ms('2026-01-01T00:00:00Z');
const FEB = ms('2026-02-01T00:00:00Z');
const MAR = ms('2026-03-01T00:00:00Z');
const APR = ms('2026-04-01T00:00:00Z');

// A price recorded in January, open; in February a change from April was scheduled (its end set);
// in March that change was withdrawn (the end lifted) and one from May put in its place.
const open = priceRecord({ id: 1, validFrom: JAN, validUntil: ms('2026-05-01T00:00:00Z'), recordedAt: JAN });
const next = priceRecord({ id: 2, amount: '0.0500', validFrom: ms('2026-05-01T00:00:00Z'), recordedAt: MAR });
const ends = new Map<number, KnownEnd[]>([
  [
    1,
    [
      { from: JAN, validUntil: null },
      { from: FEB, validUntil: APR },
      { from: MAR, validUntil: ms('2026-05-01T00:00:00Z') },
    ],
  ],
]);

describe('the book as recorded at an instant', () => {
  it('gives each record the end it had then, and leaves out what was recorded later', () => {
    expect(recordsAsRecordedAt([open, next], ends, JAN)).toEqual([{ ...open, validUntil: null }]);
    expect(recordsAsRecordedAt([open, next], ends, FEB)).toEqual([{ ...open, validUntil: APR }]);
    expect(recordsAsRecordedAt([open, next], ends, MAR - 1)).toEqual([{ ...open, validUntil: APR }]);
    expect(recordsAsRecordedAt([open, next], ends, MAR)).toEqual([open, next]);
    expect(recordsAsRecordedAt([open, next], ends, JAN - 1)).toEqual([]);
  });

  it('answers with the same array when nothing of it changed since, and a record’s own end without known ends', () => {
    const records = [open, next];
    expect(recordsAsRecordedAt(records, ends, APR)).toBe(records);
    expect(endKnownAt(next, undefined, APR)).toBe(next.validUntil);
  });

  it('is the book as stored at any instant after every write, and never holds a record recorded after the instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: JAN - 86_400_000, max: APR + 86_400_000 }), (at) => {
        const recorded = recordsAsRecordedAt([open, next], ends, at);
        for (const record of recorded) expect(record.recordedAt).toBeLessThanOrEqual(at);
        if (at >= MAR) expect(recorded).toEqual([open, next]);
      }),
    );
  });
});
