import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { priceRecord } from '../core/price-record.fixture';
import type { ImportReport } from '../price-book/describe-import';
import { AT_APPLY, planChangeOf } from '../price-book/reviewed-plan';
import { PLAN_FORMAT, parsePlanFile, readPlanFile, writePlanFile } from './plan-file';
import { parseJsonText, PriceBookFileError } from './price-book-file';

// A plan file is text an operator was handed back after a review: any bytes, any JSON.

const SHA = 'a'.repeat(64);
const GOOD = {
  format: PLAN_FORMAT,
  book_sha256: SHA,
  planned_at: '2026-06-01T12:00:00.250Z',
  version: '7',
  changes: [],
};
/** A change as a plan gives it: an organization's price from the apply on. */
const CHANGE = {
  change: 'new',
  product_key: 'storage.gp1',
  organization_id: 'org_42',
  unit_type: 'gib_hours',
  unit_count: 730,
  amount: '0.0400',
  valid_from: AT_APPLY,
  valid_until: null,
};

function outcome(text: string): unknown {
  try {
    return parsePlanFile(parseJsonText(text, 'plan.json'), 'plan.json');
  } catch (error) {
    return error;
  }
}

/** Refused with one bounded line naming the file, or read: nothing else. */
function expectReadOrRefused(result: unknown): void {
  if (result instanceof Error) {
    expect(result).toBeInstanceOf(PriceBookFileError);
    expect(result.message.startsWith('plan.json ')).toBe(true);
    expect(result.message).not.toContain('\n');
    // A quoted value is at most 80 characters, each at most 6 once escaped (bounded-text.ts).
    expect(result.message.length).toBeLessThan(800);
  } else {
    expect(result).toMatchObject({ bookSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  }
}

describe('reading a plan file', () => {
  it('reads any text to a plan or one bounded refusal', () => {
    fc.assert(fc.property(outsideText(['{', '"format":', '"', '[']), (text) => expectReadOrRefused(outcome(text))));
  });

  it('reads any JSON, and plan-like JSON with any field replaced, to a plan or one bounded refusal', () => {
    const field = fc.constantFrom('format', 'book_sha256', 'planned_at', 'version', 'changes');
    fc.assert(
      fc.property(
        fc.jsonValue(),
        field,
        fc.oneof(fc.jsonValue(), fc.string({ minLength: 1_000, maxLength: 5_000 })),
        (json, key, value) => {
          expectReadOrRefused(outcome(JSON.stringify(json)));
          expectReadOrRefused(outcome(JSON.stringify({ ...GOOD, [key]: value })));
        },
      ),
    );
  });

  it('reads any changes, and a plan-like change with any field replaced, to a plan or one bounded refusal', () => {
    const field = fc.constantFrom(...Object.keys(CHANGE));
    const value = fc.oneof(fc.jsonValue(), fc.constant(AT_APPLY), fc.string({ minLength: 1_000, maxLength: 5_000 }));
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 5 }), field, value, (changes, key, replaced) => {
        expectReadOrRefused(outcome(JSON.stringify({ ...GOOD, changes })));
        expectReadOrRefused(outcome(JSON.stringify({ ...GOOD, changes: [CHANGE, { ...CHANGE, [key]: replaced }] })));
      }),
    );
  });

  it('reads a plan in time linear in its size, however its text is made', () => {
    const change = JSON.stringify(CHANGE);
    const plan = (changes: string): string => `${JSON.stringify(GOOD).slice(0, -3)}[${changes}]}`;
    const many = (length: number, last: string): string =>
      plan([...Array.from({ length: Math.floor(length / change.length) }, () => change), last].join(','));
    const read = (text: string): unknown => outcome(text);
    const cases: [string, (length: number) => string][] = [
      ['many changes', (length) => many(length, change)],
      ['many changes, the last refused', (length) => many(length, JSON.stringify({ ...CHANGE, unit_count: '1' }))],
      ['a long amount', (length) => plan(JSON.stringify({ ...CHANGE, amount: repeated('1', length) }))],
      [
        'a long instant',
        (length) => plan(JSON.stringify({ ...CHANGE, valid_from: repeated('2027-01-01T00', length) })),
      ],
    ];
    for (const [what, input] of cases) {
      const result = read(input(2_048));
      // Each reaches the changes: read, or refused for one of them.
      if (result instanceof Error) expect({ what, message: result.message }).toMatchObject({ message: /"changes"\[/ });
      expectLinearTime(read, input);
    }
  });

  it('says which field is wrong', () => {
    expect(outcome(JSON.stringify({ ...GOOD, version: 7 }))).toEqual(
      new PriceBookFileError(
        'plan.json is not a plan file (pricing-plan/2): "version" is not a version of the price book; nothing was written',
      ),
    );
    expect((outcome(JSON.stringify({ ...GOOD, format: 'pricing-plan/1' })) as Error).message).toBe(
      'plan.json is not a plan file (pricing-plan/2): "format" is "pricing-plan/1", which gave the apply\'s instant ' +
        "as the dry run's; plan again (import --dry-run --plan-out); nothing was written",
    );
    expect(
      (outcome(JSON.stringify({ ...GOOD, changes: [CHANGE, { ...CHANGE, valid_from: null }] })) as Error).message,
    ).toBe(
      'plan.json is not a plan file (pricing-plan/2): "changes"[1].valid_from: null is not an RFC 3339 timestamp ' +
        'with an offset, nor "at apply"; nothing was written',
    );
    expect((outcome(JSON.stringify({ ...GOOD, format: 'x'.repeat(10_000) })) as Error).message).toContain(
      '"format" is "xxxxxxxx',
    );
    expect((outcome(JSON.stringify({ ...GOOD, changes: [{}, 3] })) as Error).message).toContain(
      '"changes"[1] is not an object',
    );
    expect(outcome(JSON.stringify(GOOD))).toEqual({
      bookSha256: SHA,
      plannedAt: new Date('2026-06-01T12:00:00.250Z'),
      version: '7',
      changes: [],
    });
  });
});

describe('a plan file with a field apply does not read', () => {
  // A reviewer reads every field of the plan; apply would ignore one it does not know.
  it.each([
    [
      'a top-level field',
      { ...GOOD, note: 'approved by finance' },
      'it has the field "note", which a plan file has not',
    ],
    ['a top-level field named like a change', { ...GOOD, change: 'new' }, 'it has the field "change"'],
    ['__proto__ at the top', JSON.parse(`{"__proto__": {"x": 1}, ${JSON.stringify(GOOD).slice(1)}`), '"__proto__"'],
    [
      'a field of a change',
      { ...GOOD, changes: [{ ...CHANGE, approved: true }] },
      '"changes"[0] has the field "approved"',
    ],
    [
      'a field of the price a change ends',
      { ...GOOD, changes: [{ ...CHANGE, change: 'change', ends: { ...CHANGE, change: undefined, reason: 'x' } }] },
      '"changes"[0].ends has the field "reason"',
    ],
  ])('is refused, naming the field: %s', (_what, plan, message) => {
    const refused = outcome(JSON.stringify(plan));
    expect(refused).toBeInstanceOf(PriceBookFileError);
    expect((refused as Error).message).toContain(message);
    expect((refused as Error).message).toMatch(/nothing was written$/);
  });

  it('names a long unknown field cut, in one bounded line', () => {
    const refused = outcome(JSON.stringify({ ...GOOD, ['\u202e'.repeat(10_000)]: 1 })) as Error;
    expectReadOrRefused(refused);
    expect(refused.message).toContain('it has the field "\\u202e');
  });

  it('reads any plan with any extra field to one bounded refusal', () => {
    fc.assert(
      fc.property(outsideText(['a', '"']), fc.jsonValue(), (key, value) => {
        fc.pre(!['format', 'book_sha256', 'planned_at', 'version', 'changes'].includes(key));
        const refused = outcome(JSON.stringify({ ...GOOD, [key]: value }));
        expect(refused).toBeInstanceOf(PriceBookFileError);
        expectReadOrRefused(refused);
      }),
    );
  });
});

describe('writing a plan file', () => {
  let dir: string;
  beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'plan-file-'))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const report: ImportReport = {
    dryRun: true,
    instant: new Date('2026-06-01T12:00:00.250Z'),
    version: '12',
    inserted: 1,
    ended: 0,
    availabilityChanged: 1,
    unchanged: 0,
    changes: [
      { kind: 'availability', productKey: 'storage.st1', onSale: true },
      { kind: 'new', price: priceRecord({ productKey: 'storage.gp1', amount: '0.0400' }) },
    ],
  };

  it('writes what apply reads back: the head, and the changes as --json gives them', async () => {
    const path = join(dir, 'plan.json');
    await writePlanFile(path, report, SHA);
    const read = await readPlanFile(path, { maxBytes: 1_000_000 });
    expect(read).toEqual({
      bookSha256: SHA,
      plannedAt: report.instant,
      version: '12',
      changes: report.changes.map(planChangeOf),
    });
    expect((await readFile(path, 'utf8')).startsWith('{\n  "format": "pricing-plan/2",\n')).toBe(true);
  });

  it('writes the instants that are the apply\'s own as "at apply", never as the dry run\'s', async () => {
    const path = join(dir, 'at-apply.json');
    const price = priceRecord({ productKey: 'storage.gp1', validFrom: report.instant });
    await writePlanFile(path, { ...report, changes: [{ kind: 'new', price, startsAtApply: true }] }, SHA);
    const text = await readFile(path, 'utf8');
    expect(JSON.parse(text).changes).toEqual([expect.objectContaining({ valid_from: 'at apply', valid_until: null })]);
    expect(text.split('2026-06-01T12:00:00.250Z')).toHaveLength(2); // planned_at alone
  });

  describe('readable by its owner only', () => {
    const umask = process.umask();
    afterEach(() => process.umask(umask));

    it('creates the plan with mode 0600, whatever the umask', async () => {
      for (const mask of [0o000, 0o022, 0o077]) {
        process.umask(mask);
        const path = join(dir, `mode-${mask}.json`);
        await writePlanFile(path, report, SHA);
        expect(((await stat(path)).mode & 0o777).toString(8)).toBe('600');
      }
    });

    it('replaces a file its owner may read and write with a 0600 one, never a more open one', async () => {
      process.umask(0);
      for (const mode of [0o644, 0o666, 0o600, 0o700]) {
        const path = join(dir, `replaced-${mode.toString(8)}.json`);
        await writeFile(path, 'the old plan', { mode });
        await chmod(path, mode);
        await writePlanFile(path, report, SHA);
        expect(((await stat(path)).mode & 0o777).toString(8)).toBe('600');
        expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: '12' });
      }
    });

    it('refuses to replace a file of a narrower mode (0400): it stays as it was', async () => {
      const path = join(dir, 'read-only.json');
      await writeFile(path, 'kept');
      await chmod(path, 0o400);
      await expect(writePlanFile(path, report, SHA)).rejects.toThrow(
        `cannot write the plan to ${path}: a file of mode 0400, which a plan (mode 0600) would make more open`,
      );
      expect(await readFile(path, 'utf8')).toBe('kept');
      expect((await stat(path)).mode & 0o777).toBe(0o400);
      expect((await readdir(dir)).filter((name) => name.endsWith('.partial'))).toEqual([]);
    });
  });

  it('never writes through a link or into a FIFO at the path: refused, both as they were', async () => {
    const target = join(dir, 'elsewhere.json');
    await writeFile(target, 'not a plan');
    const link = join(dir, 'link.json');
    await symlink(target, link);
    const dangling = join(dir, 'dangling.json');
    await symlink(join(dir, 'nowhere.json'), dangling);
    const fifo = join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    for (const path of [link, dangling, fifo]) {
      await expect(writePlanFile(path, report, SHA)).rejects.toThrow(
        `cannot write the plan to ${path}: not a regular file`,
      );
    }
    expect(await readFile(target, 'utf8')).toBe('not a plan');
    expect(await readlink(link)).toBe(target);
    expect(await readlink(dangling)).toBe(join(dir, 'nowhere.json'));
    await expect(lstat(join(dir, 'nowhere.json'))).rejects.toThrow(/ENOENT/);
    expect((await lstat(fifo)).isFIFO()).toBe(true);
    expect((await readdir(dir)).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('replaces an existing plan whole, and leaves no partial file', async () => {
    const path = join(dir, 'replaced.json');
    await writeFile(path, 'the old plan');
    await writePlanFile(path, report, SHA);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: '12' });
    expect((await readdir(dir)).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('refuses a plan file larger than the bound, unread', async () => {
    const path = join(dir, 'big.json');
    await writePlanFile(path, report, SHA);
    await expect(readPlanFile(path, { maxBytes: 100 })).rejects.toThrow(
      /is \d+ bytes, more than PRICE_BOOK_MAX_BYTES \(100 bytes\)/,
    );
  });
});
