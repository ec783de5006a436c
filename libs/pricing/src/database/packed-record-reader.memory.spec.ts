import { serialize } from 'node:v8';
import { PackedRecordReader } from './price-book-rows';

// In a file of its own: V8 shares one shape among the records, and a field of it that ever held a
// boxed double (a fraction, as price-book-rows.spec.ts reads in unit counts) boxes every value it
// holds from then on, in any record. Read from the table, ids and unit counts are integers: boxed,
// they took 19 MB at 600,000 records (docs/benchmarks.md, "The list's past").

// v8.serialize tags a small integer 'I' and a boxed double 'N' (after its two header bytes).
const tag = (value: number): string => String.fromCharCode(serialize(value)[2]);

it('reads integers as small integers, not boxed doubles: a record field that held one boxes every value it holds', () => {
  const reader = new PackedRecordReader();
  for (let i = 0; i < 2_000; i++) {
    const { record, endChanges } = reader.read(
      `${i + 1},3600,1,1767225600,,1764547200,,,${i + 2},storage.gp1,,gib_hours,1`,
    );
    expect([tag(record.id), tag(record.unitCount), tag(record.supersededBy!), tag(endChanges)]).toEqual([
      'I',
      'I',
      'I',
      'I',
    ]);
  }
  expect(tag(reader.read(`1,0.5,1,1767225600,,,,,,storage.gp1,,gib_hours,1`).record.unitCount)).toBe('N');
});
