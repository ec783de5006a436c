import { withPriceBook } from '@app/pricing/cli';
import { dumpDatabase } from '../support/database';
import { expectApplied, inDays, planLines, price, recordsOf, useCliDatabase } from '../support/price-book-cli';
import { useTempDir } from '../support/temp-dir';

// Ends as first-class changes (docs/price-book-cli.md, "Ends"): a price in force is given a future
// valid_until by a book entry that restates it with one, and a plan says so in one line, `end … at
// T`: no new record, no new valid_from. The public list shows the end from the write's publication
// instant on, and drops the price at T; the end can be withdrawn as a scheduled end.

interface Listed {
  readonly product_key: string;
  readonly valid_from: string;
  readonly valid_until: string | null;
}

describe('an end of its own: "retire compute.t3.8 on T"', () => {
  const f = useCliDatabase({ prices: [price('compute.t3.8', '0.0610', { valid_from: '2026-01-01T00:00:00Z' })] });
  const temp = useTempDir('ends');
  const retireAt = inDays(30);
  const retire = {
    prices: [price('compute.t3.8', '0.0610', { valid_from: '2026-01-01T00:00:00Z', valid_until: retireAt })],
  };

  /** compute.t3.8 in the public list at `instant`, as GET /v1/pricing serves it then (or /at of it). */
  async function listedAt(instant: number): Promise<Listed | undefined> {
    const body = await withPriceBook(f.dataSource, (priceBook) => priceBook.priceListAt(new Date(instant)));
    const list = JSON.parse(body.toString('utf8')) as { families: { prices: Listed[] }[] };
    return list.families.flatMap((family) => family.prices).find((p) => p.product_key === 'compute.t3.8');
  }

  it('plans one line, "end … at T": no price set, one ended, nothing written', async () => {
    const file = await f.bookFile(retire);
    const dump = await dumpDatabase(f.dataSource);
    const planned = await f.cli('import', '--dry-run', file);
    expect(planned.code).toBe(0);
    expect(planLines(planned.stdout)).toEqual([
      `end       compute.t3.8  list  0.0610 per 3600 seconds from 2026-01-01T00:00:00Z ends at ${retireAt}`,
    ]);
    expect(planned.stdout).toMatch(
      /: 0 prices set, 1 ended, 0 availability changes, 0 unchanged; nothing was written\n$/,
    );
    expect(await dumpDatabase(f.dataSource)).toBe(dump);
  });

  it('sets the end on the record in force: no new record, its valid_from kept; the list shows it from the write on and drops the price at T', async () => {
    const [before] = await recordsOf(f.dataSource, 'compute.t3.8');
    const plan = `${temp.path}/retire.json`;
    const file = await f.bookFile(retire);
    expect((await f.cli('import', '--dry-run', '--plan-out', plan, file)).code).toBe(0);
    const applied = await f.cli('apply', plan, file, '--actor', 'ana', '--reason', 'retired with t3');
    expectApplied(applied);
    expect(planLines(applied.stdout)).toEqual([
      `end       compute.t3.8  list  0.0610 per 3600 seconds from 2026-01-01T00:00:00Z ends at ${retireAt}`,
    ]);
    const instant = Date.parse(/^applied at (\S+Z):/m.exec(applied.stdout)![1]);

    const after = await recordsOf(f.dataSource, 'compute.t3.8');
    expect(after).toEqual([
      { ...before, valid_until: new Date(retireAt), superseded_by: null }, // the same record, the same valid_from
    ]);
    const [{ end_set_at }] = await f.dataSource.query<{ end_set_at: Date }[]>(
      `SELECT end_set_at FROM price_record WHERE id = $1`,
      [before.id],
    );
    expect(end_set_at.getTime()).toBe(instant); // set at the write's publication instant

    // The public list: open until the write takes effect, with its end from then on, gone at T.
    expect(await listedAt(instant - 1)).toMatchObject({ valid_from: '2026-01-01T00:00:00Z', valid_until: null });
    expect(await listedAt(instant)).toMatchObject({ valid_from: '2026-01-01T00:00:00Z', valid_until: retireAt });
    expect(await listedAt(Date.parse(retireAt) - 1)).toMatchObject({ valid_until: retireAt });
    expect(await listedAt(Date.parse(retireAt))).toBeUndefined();
    const shown = JSON.parse((await f.cli('show')).stdout) as { families: { prices: Listed[] }[] };
    expect(shown.families.flatMap((family) => family.prices)).toContainEqual(
      expect.objectContaining({ product_key: 'compute.t3.8', valid_until: retireAt }),
    );

    // The log says so: an `end`, by whom and why; history too; and it still proves the book.
    const changes = await f.cli('changes', '--product', 'compute.t3.8', '--limit', '1');
    expect(changes.stdout.split(/ {2,}/).slice(1)).toEqual([
      'end',
      'compute.t3.8',
      'list',
      `0.0610 per 3600 seconds from 2026-01-01T00:00:00Z until ${retireAt}`,
      'ana',
      '"retired with t3"\n',
    ]);
    expect((await f.cli('history', 'compute.t3.8')).stdout).toMatch(
      /^in-force {2}0\.0610 per 3600 seconds {2}from 2026-01-01T00:00:00Z until \S+Z {2}recorded /m,
    );
    expect((await f.cli('verify')).code).toBe(0);
    // Applying the book again changes nothing: it restates the end.
    expect((await f.import(retire)).stdout).toMatch(/^nothing to change: /);
  });

  it('withdraws the end as a scheduled end: the price is open again, from that write on', async () => {
    const withdrawn = await f.cli('withdraw', 'compute.t3.8', '--valid-until', retireAt, '--json');
    expect(withdrawn.code).toBe(0);
    const { withdrawn_at } = JSON.parse(withdrawn.stdout) as { withdrawn_at: string };
    const [record] = await recordsOf(f.dataSource, 'compute.t3.8');
    expect({ valid_until: record.valid_until, superseded_by: record.superseded_by }).toEqual({
      valid_until: null,
      superseded_by: null,
    });
    expect(await listedAt(Date.parse(withdrawn_at) - 1)).toMatchObject({ valid_until: retireAt });
    expect(await listedAt(Date.parse(withdrawn_at))).toMatchObject({ valid_until: null });
    expect(await listedAt(Date.parse(retireAt))).toMatchObject({ valid_until: null });
    expect((await f.cli('verify')).code).toBe(0);
  });

  it('refuses an end before the write takes effect, and says how to move an end: exit 3, nothing written', async () => {
    const past = await f.bookFile({
      prices: [
        price('compute.t3.8', '0.0610', { valid_from: '2026-01-01T00:00:00Z', valid_until: '2026-02-01T00:00:00Z' }),
      ],
    });
    await f.expectRefused(
      ['import', past],
      'prices[0].valid_until: 2026-02-01T00:00:00Z is before this write takes effect',
    );
    expectApplied(await f.import(retire));
    const later = await f.bookFile({
      prices: [price('compute.t3.8', '0.0610', { valid_from: '2026-01-01T00:00:00Z', valid_until: inDays(60) })],
    });
    await f.expectRefused(
      ['import', later],
      `ends at ${retireAt} already; an end is moved by withdrawing it first (withdraw --valid-until ${retireAt})`,
    );
  });
});
