import { priceRecord } from '../core/price-record.fixture';
import {
  formatImportChanges,
  formatImportSummary,
  importChangeLines,
  importReportJson,
  importReportJsonParts,
} from './format-import';
import { describeImportPlan, type ImportChange, type ImportReport } from '../price-book/describe-import';
import { planImport, type ImportPlan } from '../price-book/plan-import';
import { parsePriceBook } from '../price-book/price-book';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const seconds = { unit_type: 'seconds', unit_count: 3600 };

function plan(json: object, stored = [priceRecord({ id: 7, amount: '0.0480' })]): ImportPlan {
  const parsed = parsePriceBook(json);
  if ('errors' in parsed) throw new Error(parsed.errors.join('\n'));
  const planned = planImport(parsed.book, stored, new Map([['storage.io1', false]]), NOW);
  if ('errors' in planned) throw new Error(planned.errors.join('\n'));
  return planned.plan;
}

// One of each change, in an order the output does not follow.
const BOOK = {
  products: [
    { product_key: 'storage.st1', on_sale: false },
    { product_key: 'storage.io1', on_sale: true },
  ],
  prices: [
    { product_key: 'storage.gp1', organization_id: 'org_42', unit_type: 'gib_hours', unit_count: 730, amount: '0.04' },
    { product_key: 'compute.g2.16', ...seconds, amount: '0.2440', valid_from: '2027-01-01T00:00:00Z' },
    {
      product_key: 'storage.gp1',
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0500',
      valid_from: '2027-01-01T00:00:00Z',
    },
    {
      product_key: 'compute.g2.4',
      ...seconds,
      amount: '0.0610',
      valid_from: '2027-01-01T00:00:00Z',
      valid_until: '2028-01-01T00:00:00Z',
    },
    {
      product_key: 'storage.gp1',
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0480',
      valid_from: '2026-01-01T00:00:00Z',
    },
  ],
};

function report(dryRun: boolean, planned = plan(BOOK)): ImportReport {
  return {
    dryRun,
    instant: new Date('2026-06-01T12:00:00.250Z'),
    version: '8',
    inserted: planned.inserts.length,
    ended: planned.ends.length,
    availabilityChanged: planned.availability.length,
    unchanged: planned.unchanged,
    changes: describeImportPlan(planned),
  };
}

describe('the plan of an import, line by line', () => {
  it('prints availability, then prices by scope (list first), natural key order and valid_from', () => {
    expect(formatImportChanges(describeImportPlan(plan(BOOK)))).toBe(
      [
        'on-sale   storage.io1    -',
        'off-sale  storage.st1    -',
        'new       compute.g2.4   list        0.0610 per 3600 seconds from 2027-01-01T00:00:00Z until 2028-01-01T00:00:00Z',
        'new       compute.g2.16  list        0.2440 per 3600 seconds from 2027-01-01T00:00:00Z',
        'end       storage.gp1    list        0.0480 per 730 gib_hours from 2026-01-01T00:00:00Z ends at 2027-01-01T00:00:00Z',
        'change    storage.gp1    list        0.0500 per 730 gib_hours from 2027-01-01T00:00:00Z, ending 0.0480 from 2026-01-01T00:00:00Z',
        'new       storage.gp1    org:org_42  0.04 per 730 gib_hours from 2026-06-01T12:00:00Z',
        '',
      ].join('\n'),
    );
  });

  it('prints nothing for a plan without changes', () => {
    expect(formatImportChanges(describeImportPlan(plan({ prices: [BOOK.prices[4]] })))).toBe('');
  });

  it('sums up an import, a dry run, and a book that changes nothing', () => {
    expect(formatImportSummary(report(false), 'book.json')).toBe(
      'applied at 2026-06-01T12:00:00.250Z: 4 prices set, 1 ended, 2 availability changes, 1 unchanged (version 8)\n',
    );
    expect(formatImportSummary(report(true), 'book.json')).toBe(
      'dry run at 2026-06-01T12:00:00.250Z: 4 prices set, 1 ended, 2 availability changes, 1 unchanged; nothing was written\n',
    );
    const nothing = plan({ prices: [BOOK.prices[4]], products: [{ product_key: 'storage.io1', on_sale: false }] });
    expect(formatImportSummary(report(false, nothing), 'book.json')).toBe(
      'nothing to change: everything in book.json is already recorded\n',
    );
    expect(formatImportSummary(report(true, nothing), 'book.json')).toBe(
      'nothing to change: everything in book.json is already recorded (dry run)\n',
    );
  });

  it("gives the same plan as JSON, with the price book file's field names", () => {
    const json = JSON.parse(importReportJson(report(true))) as Record<string, unknown>;
    expect(json).toMatchObject({
      dry_run: true,
      instant: '2026-06-01T12:00:00.250Z',
      version: '8',
      summary: { prices_set: 4, ended: 1, availability_changes: 2, unchanged: 1 },
    });
    const changes = json.changes as Record<string, unknown>[];
    expect(changes.map((c) => c.change)).toEqual([
      'availability',
      'availability',
      'new',
      'new',
      'end',
      'change',
      'new',
    ]);
    expect(changes[0]).toEqual({ change: 'availability', product_key: 'storage.io1', on_sale: true });
    expect(changes[4]).toEqual({
      change: 'end',
      product_key: 'storage.gp1',
      organization_id: null,
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0480',
      valid_from: '2026-01-01T00:00:00Z',
      valid_until: '2027-01-01T00:00:00Z',
    });
    expect(changes[5]).toMatchObject({
      change: 'change',
      amount: '0.0500',
      valid_from: '2027-01-01T00:00:00Z',
      valid_until: null,
      ends: { amount: '0.0480', valid_from: '2026-01-01T00:00:00Z', valid_until: null },
    });
    // A dry run's entry without valid_from starts when applied: "at apply", as a plan file says it.
    expect(changes[6]).toMatchObject({ change: 'new', organization_id: 'org_42', valid_from: 'at apply' });
    const imported = JSON.parse(importReportJson(report(false))) as { changes: Record<string, unknown>[] };
    expect(imported.changes[6]).toMatchObject({ valid_from: '2026-06-01T12:00:00Z' });
  });
});

describe("the instants that are the write's own", () => {
  it('are named on the changes: the start of an entry without valid_from, and the end it sets', () => {
    const changes = describeImportPlan(
      plan({
        prices: [
          { product_key: 'storage.gp1', unit_type: 'gib_hours', unit_count: 730, amount: '0.0500' },
          { product_key: 'compute.g2.4', ...seconds, amount: '1', valid_from: '2025-01-01T00:00:00Z' },
          { product_key: 'compute.g2.4', ...seconds, amount: '2' },
          { product_key: 'compute.g2.8', ...seconds, amount: '3', valid_from: '2027-01-01T00:00:00Z' },
        ],
      }),
    );
    const atApply = changes.map((change) => [
      change.kind,
      'startsAtApply' in change ? change.startsAtApply : undefined,
      'endsAtApply' in change ? change.endsAtApply : undefined,
    ]);
    expect(atApply).toEqual([
      ['new', undefined, true],
      ['new', true, undefined],
      ['new', undefined, undefined],
      ['end', undefined, true],
      ['change', true, undefined],
    ]);
  });
});

describe('the plan of a large import', () => {
  // Past what a spread into a call takes here (about 130,000 values): the widths of the columns
  // were Math.max(...) of every key, which threw once the import had committed.
  const MANY = 250_000;
  const changes: ImportChange[] = Array.from({ length: MANY }, (_, i) => ({
    kind: 'new',
    price: priceRecord({ productKey: `compute.g2.${i}`, organizationId: `org_${i % 1000}` }),
  }));

  it('prints every line, in parts, without failing on its size', () => {
    let lines = 0;
    let parts = 0;
    let last = '';
    for (const part of importChangeLines(changes)) {
      parts++;
      lines += part.split('\n').length - 1;
      last = part;
    }
    expect({ lines, parts }).toEqual({ lines: MANY, parts: MANY / 1_000 });
    expect(last.trimEnd().split('\n').at(-1)).toMatch(/^new {7}compute\.g2\.249999 +org:org_999 +0\.0480 per 730/);
  });

  it('writes its JSON in parts of the same bytes, without failing on its size', () => {
    const big: ImportReport = { ...report(false), inserted: MANY, changes };
    let parts = 0;
    let length = 0;
    for (const part of importReportJsonParts(big)) {
      parts++;
      length += part.length;
    }
    expect(parts).toBe(MANY / 1_000 + 1);
    expect(length).toBeGreaterThan(MANY * 200);
    const small: ImportReport = { ...big, changes: changes.slice(0, 3) };
    expect([...importReportJsonParts(small)].join('')).toBe(importReportJson(small));
  });
});
