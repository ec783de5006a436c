import { withPriceBook } from '@app/pricing/cli';
import { applyBook, TEST_ACTOR } from '../support/database';
import { inDays, inParallel, price, recordsOf, useCliDatabase } from '../support/price-book-cli';

// `history`: the records of a list price or an organization's price, and their changes.

describe('history', () => {
  const f = useCliDatabase();
  const scheduled = inDays(30);
  const withdrawnAt = inDays(45);
  beforeAll(async () => {
    await applyBook(f.dataSource, {
      prices: [
        price('compute.h1.1', '1.00', { valid_from: '2025-01-01T00:00:00Z', valid_until: '2026-01-01T00:00:00Z' }),
        price('compute.h1.1', '1.10', { valid_from: '2026-01-01T00:00:00Z' }),
        price('compute.h1.1', '0.90', { organization_id: 'org_3', valid_from: '2025-06-01T00:00:00Z' }),
      ],
    });
    await applyBook(f.dataSource, { prices: [price('compute.h1.1', '1.20', { valid_from: scheduled })] });
    await applyBook(f.dataSource, { prices: [price('compute.h1.1', '1.30', { valid_from: withdrawnAt })] });
    await withPriceBook(f.dataSource, (priceBook) =>
      priceBook.withdraw(
        { productKey: 'compute.h1.1', organizationId: null, validFrom: Date.parse(withdrawnAt) },
        { actor: TEST_ACTOR },
      ),
    );
  });

  it('prints every record of the list price oldest first, with its status and when it was recorded, then the change log', async () => {
    const records = await recordsOf(f.dataSource, 'compute.h1.1');
    const recorded = records.map((r) => r.recorded_at.toISOString().replace('.000Z', 'Z'));
    const result = await f.cli('history', 'compute.h1.1');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^history of compute\.h1\.1 \(list price\) at \S+Z: 3 records, 1 withdrawn, oldest first$/,
    );
    expect(lines.slice(1, 4)).toEqual([
      `ended     1.00 per 3600 seconds  from 2025-01-01T00:00:00Z until 2026-01-01T00:00:00Z  recorded ${recorded[0]}`,
      `in-force  1.10 per 3600 seconds  from 2026-01-01T00:00:00Z until ${scheduled}  recorded ${recorded[1]}`,
      `scheduled 1.20 per 3600 seconds  from ${scheduled}${' '.repeat(' until '.length + scheduled.length)}  recorded ${recorded[2]}`,
    ]);
    expect(lines[4]).toBe('changes, oldest first:');
    expect(lines.slice(5).map((line) => line.trim().split(/ {2,}/).slice(1))).toEqual([
      ['set', '1.00 per 3600 seconds from 2025-01-01T00:00:00Z', TEST_ACTOR],
      ['set', '1.10 per 3600 seconds from 2026-01-01T00:00:00Z', TEST_ACTOR],
      ['set', `1.20 per 3600 seconds from ${scheduled}`, TEST_ACTOR],
      ['end set', '1.10 per 3600 seconds from 2026-01-01T00:00:00Z', TEST_ACTOR],
      ['set', 'a scheduled price, withdrawn since', TEST_ACTOR],
      ['end set', `1.20 per 3600 seconds from ${scheduled}`, TEST_ACTOR],
      ['withdrawn', expect.stringMatching(/^the scheduled price recorded \S+Z$/), TEST_ACTOR],
      [],
    ]);
  });

  it("prints an organization's own records with --organization, before or after the key", async () => {
    const [after, before] = await inParallel([
      () => f.cli('history', 'compute.h1.1', '--organization', 'org_3'),
      () => f.cli('--organization', 'org_3', 'history', 'compute.h1.1'),
    ]);
    expect(after.code).toBe(0);
    expect(after.stdout.split('\n').slice(0, 2)).toEqual([
      expect.stringMatching(/^history of compute\.h1\.1 \(organization org_3\) at \S+: 1 record, oldest first$/),
      expect.stringMatching(/^in-force {2}0\.90 per 3600 seconds {2}from 2025-06-01T00:00:00Z {2}recorded /),
    ]);
    expect(before.stdout.split('\n').slice(1)).toEqual(after.stdout.split('\n').slice(1));
  });

  it('says so, exit 0, for a key and scope without records', async () => {
    const [none, otherOrg] = await inParallel([
      () => f.cli('history', 'compute.h9.1'),
      () => f.cli('history', 'compute.h1.1', '--organization', 'org_4'),
    ]);
    expect(none).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^history of compute\.h9\.1 \(list price\) at \S+Z: no records\n$/),
      stderr: '',
    });
    expect(otherOrg.stdout).toMatch(/\(organization org_4\) at \S+Z: no records\n$/);
  });
});
