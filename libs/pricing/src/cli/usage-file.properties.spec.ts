import fc from 'fast-check';
import { expectLinearTime, LARGE_OUTPUT, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { parseUsageCsv, USAGE_COLUMNS } from './usage-file';

// A usage file is text from outside (docs/price-book-cli.md, "focus"): whatever a billing system
// or a person wrote. Its parser never throws, names every problem on a bounded line, reads any
// CSV a writer could make of good rows, and takes time linear in the text.

const HEADER = 'product_key,organization_id,start,end,quantity,size_gib\r\n';
const ROW = 'storage.gp1,org_42,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,,100\r\n';

/** The longest problem: its line, its fixed text and 80 quoted characters, each escaped as up to six (bounded-text.ts). */
const MAX_PROBLEM = 1_000;

/** Every problem of a refusal: at most 51, each on one line of bounded length. */
function expectBoundedProblems(problems: readonly string[]): void {
  expect(problems.length).toBeGreaterThan(0);
  expect(problems.length).toBeLessThanOrEqual(51);
  for (const problem of problems) {
    expect(problem).toMatch(/^(?:line \d+: |the file is empty)/);
    expect(problem.length).toBeLessThanOrEqual(MAX_PROBLEM);
    expect(problem).not.toMatch(/[\r\n]/);
  }
}

/** A field as a CSV writer may write it: bare when it can be, else quoted; or quoted anyway. */
const written = (value: string, quoteAnyway: boolean) =>
  quoteAnyway || /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;

/** A good usage: its values by column, of each kind of family. */
const goodUsage = fc.oneof(
  fc.record({
    product_key: fc.constantFrom('compute.g2.4', 'network.floating_ip'),
    quantity: fc.constant(''),
    size_gib: fc.constant(''),
  }),
  fc.record({
    product_key: fc.constantFrom('storage.gp1', 'storage.snapshot'),
    quantity: fc.constant(''),
    size_gib: fc.constantFrom('100', '0.5', '16384'),
  }),
  fc.record({
    product_key: fc.constantFrom('network.vpc_egress', 'observability.api_request'),
    quantity: fc.constantFrom('12.5', '0', '1000000'),
    size_gib: fc.constant(''),
  }),
);
const goodRow = fc.record({
  usage: goodUsage,
  organization_id: fc.constantFrom('', 'org_42', 'a.b-c'),
  start: fc.constantFrom('2026-03-01T00:00:00Z', '2026-03-01T01:00:00+01:00'),
  end: fc.constantFrom('2026-03-02T00:00:00.500Z', '2026-04-01T00:00:00Z'),
});

describe('parseUsageCsv on any text', () => {
  it('never throws: rows, or bounded problems each naming its line', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          outsideText(['"', ',', '\r\n', '\n', '""', HEADER, ROW, 'storage.gp1,', '"a""b",']),
          outsideText(['"', ',', '\n']).map((tail) => HEADER + tail),
          fc
            .array(fc.constantFrom(ROW, 'x,y\n', '"', ',', '\r', '\n'), { maxLength: 200 })
            .map((parts) => HEADER + parts.join('')),
        ),
        (text) => {
          const parsed = parseUsageCsv(text);
          if ('problems' in parsed) expectBoundedProblems(parsed.problems);
          else for (const row of parsed.rows) expect(row.from.getTime() <= row.to.getTime()).toBe(true);
        },
      ),
    );
  });

  it('reads back what any CSV writer makes of good rows: columns in any order, quoted or not, CRLF or LF', () => {
    fc.assert(
      fc.property(
        fc.array(goodRow, { minLength: 1, maxLength: 20 }),
        fc.shuffledSubarray([...USAGE_COLUMNS], { minLength: USAGE_COLUMNS.length }),
        fc.boolean(),
        fc.constantFrom('\r\n', '\n'),
        fc.boolean(),
        (rows, columns, quoteAnyway, newline, finalNewline) => {
          const valueOf = (row: (typeof rows)[number], column: string): string => {
            const { usage, ...times } = row;
            const values: Record<string, string> = { ...usage, ...times };
            return values[column];
          };
          const lines = [
            columns.map((column) => written(column, quoteAnyway)).join(','),
            ...rows.map((row) => columns.map((column) => written(valueOf(row, column), quoteAnyway)).join(',')),
          ];
          const parsed = parseUsageCsv(lines.join(newline) + (finalNewline ? newline : ''));
          expect(parsed).toHaveProperty('rows');
          if (!('rows' in parsed)) return;
          expect(
            parsed.rows.map((row) => [row.line, row.productKey, row.organizationId, row.quantity, row.sizeGib]),
          ).toEqual(
            rows.map((row, i) => [
              i + 2,
              row.usage.product_key,
              row.organization_id || null,
              row.usage.quantity || null,
              row.usage.size_gib || null,
            ]),
          );
        },
      ),
    );
  });

  it.each([
    ['many good rows', (n: number) => HEADER + repeated(ROW, n)],
    ['one long quoted field of doubled quotes', (n: number) => `${HEADER}"${repeated('""', n)}",,,,,\r\n`],
    ['an unclosed quote after many rows', (n: number) => `${HEADER}${repeated(ROW, n)}"`],
    ['many commas', (n: number) => HEADER + repeated(',', n)],
    ['many bad rows', (n: number) => HEADER + repeated('storage.gp2,,x,y,,\n', n)],
    ['one long line without a separator', (n: number) => repeated('a', n)],
    ['many line breaks inside a quoted field', (n: number) => `${HEADER}"${repeated('\n', n)}`],
  ])('is linear in the text: %s', (what, text) => {
    // Many commas make a field each: work whose output is its input's size (LARGE_OUTPUT).
    expectLinearTime(parseUsageCsv, text, undefined, what === 'many commas' ? LARGE_OUTPUT : undefined);
  });
});
