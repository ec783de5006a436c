import { type DataSource, QueryFailedError } from 'typeorm';
import { useTestDatabase } from './support/database';

// The pricing schema refuses, on its own, rows that break the rules of docs/decisions.md, "Rules the database holds": rows
// are written with raw SQL here, past the price book CLI and its checks.

const CHECK = '23514';
const EXCLUSION = '23P01';
const INTEGRITY = '23000'; // raised by the history trigger

// The app's settings, without logging every refused query.
const t = useTestDatabase({ logging: false });
let dataSource: DataSource;
beforeAll(() => (dataSource = t.dataSource));

interface Row {
  product_key?: string;
  organization_id?: string | null;
  unit_type?: string;
  unit_count?: number;
  amount?: string;
  valid_from?: string;
  valid_until?: string | null;
}

/**
 * Inserts one price record (a valid compute list price unless told otherwise), in a transaction
 * of its own unless `db` is one; returns its id.
 */
async function insert(row: Row = {}, db: Pick<DataSource, 'query'> = dataSource): Promise<string> {
  const r = {
    product_key: 'compute.g2.4',
    organization_id: null,
    unit_type: 'seconds',
    unit_count: 3600,
    amount: '0.0610',
    valid_from: '2020-01-01T00:00:00Z',
    valid_until: null,
    ...row,
  };
  const rows: { id: string }[] = await db.query(
    `INSERT INTO price_record (product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until)
     VALUES ($1, $2, $3, $4, $5::numeric, $6::timestamptz, $7::timestamptz)
     RETURNING id::text`,
    [r.product_key, r.organization_id, r.unit_type, r.unit_count, r.amount, r.valid_from, r.valid_until],
  );
  return rows[0].id;
}

/** Expects the promise to fail with the SQLSTATE and, for constraints, the constraint's name. */
async function expectRefused(
  promise: Promise<unknown>,
  code: string,
  constraintOrMessage: { constraint: string } | { message: RegExp },
): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(QueryFailedError);
  const failure = error as QueryFailedError & { code?: string; constraint?: string };
  expect(failure.code).toBe(code);
  if ('constraint' in constraintOrMessage) expect(failure.constraint).toBe(constraintOrMessage.constraint);
  else expect(failure.message).toMatch(constraintOrMessage.message);
}

async function count(): Promise<number> {
  const rows: { n: number }[] = await dataSource.query(`SELECT count(*)::int AS n FROM price_record`);
  return rows[0].n;
}

describe('the migration', () => {
  it('marks storage.io1 and storage.st1 as not on sale, and nothing else', async () => {
    const rows: { product_key: string; on_sale: boolean }[] = await dataSource.query(
      `SELECT product_key, on_sale FROM product_availability ORDER BY product_key`,
    );
    expect(rows).toEqual([
      { product_key: 'storage.io1', on_sale: false },
      { product_key: 'storage.st1', on_sale: false },
    ]);
  });

  it('starts with no prices, version 1, and a change log that says io1 and st1 are off sale', async () => {
    expect(await count()).toBe(0);
    // InitialAvailabilityLogged1764000012100: the first migration's availability, as changes of the log.
    const changes: unknown[] = await dataSource.query(
      `SELECT change, product_key, organization_id, price_record_id, on_sale, effect, actor FROM price_change ORDER BY id`,
    );
    expect(changes).toEqual(
      ['storage.io1', 'storage.st1'].map((product_key) => ({
        change: 'availability',
        product_key,
        organization_id: null,
        price_record_id: null,
        on_sale: false,
        effect: { on_sale: false },
        actor: 'pricing-schema',
      })),
    );
    const version: { version: string }[] = await dataSource.query(`SELECT version::text FROM price_book_version`);
    expect(version).toEqual([{ version: '1' }]);
  });
});

describe('price_record constraints', () => {
  // Each test starts from an empty table. TRUNCATE does not fire the row triggers.
  beforeEach(async () => {
    await dataSource.query(`TRUNCATE price_record`);
  });

  describe('no overlapping prices (exclusion constraints)', () => {
    it('refuses overlapping list prices of one key', async () => {
      await insert({ valid_from: '2020-01-01T00:00:00Z', valid_until: null });
      await expectRefused(
        insert({ valid_from: '2021-01-01T00:00:00Z', valid_until: '2022-01-01T00:00:00Z' }),
        EXCLUSION,
        {
          constraint: 'price_record_list_prices_do_not_overlap',
        },
      );
      await expectRefused(
        insert({ valid_from: '2019-01-01T00:00:00Z', valid_until: '2020-01-02T00:00:00Z' }),
        EXCLUSION,
        {
          constraint: 'price_record_list_prices_do_not_overlap',
        },
      );
      // The same start twice.
      await expectRefused(insert({ valid_from: '2020-01-01T00:00:00Z', amount: '1' }), EXCLUSION, {
        constraint: 'price_record_list_prices_do_not_overlap',
      });
      expect(await count()).toBe(1);
    });

    it('refuses overlapping prices of one organization and key', async () => {
      await insert({
        organization_id: 'org_42',
        valid_from: '2020-01-01T00:00:00Z',
        valid_until: '2030-01-01T00:00:00Z',
      });
      await expectRefused(
        insert({ organization_id: 'org_42', valid_from: '2029-01-01T00:00:00Z', valid_until: null }),
        EXCLUSION,
        { constraint: 'price_record_organization_prices_do_not_overlap' },
      );
      expect(await count()).toBe(1);
    });

    it('accepts list and organization prices of one key over the same time, and two organizations', async () => {
      await insert({ valid_from: '2020-01-01T00:00:00Z' });
      await insert({ organization_id: 'org_42', valid_from: '2020-01-01T00:00:00Z' });
      await insert({ organization_id: 'org_43', valid_from: '2020-01-01T00:00:00Z' });
      // Other keys are other products.
      await insert({ product_key: 'compute.g2.8', valid_from: '2020-01-01T00:00:00Z' });
      expect(await count()).toBe(4);
    });

    it('tells apart two keys whose hashes collide: the index leads with the hash, the rule is the key', async () => {
      const [a, b] = ['compute.c5277.1', 'compute.c244659.1'];
      const [{ same }]: { same: boolean }[] = await dataSource.query(`SELECT hashtext($1) = hashtext($2) AS same`, [
        a,
        b,
      ]);
      expect(same).toBe(true);
      await insert({ product_key: a, valid_from: '2020-01-01T00:00:00Z' });
      await insert({ product_key: b, valid_from: '2020-01-01T00:00:00Z' });
      await insert({ product_key: b, organization_id: 'org_42', valid_from: '2020-01-01T00:00:00Z' });
      await insert({ product_key: a, organization_id: 'org_42', valid_from: '2020-01-01T00:00:00Z' });
      await expectRefused(insert({ product_key: b, valid_from: '2021-01-01T00:00:00Z' }), EXCLUSION, {
        constraint: 'price_record_list_prices_do_not_overlap',
      });
      expect(await count()).toBe(4);
    });

    it('accepts adjacent windows [a, b) and [b, c), of the list and of an organization', async () => {
      // Past windows of one key: a backfill, in one transaction.
      await dataSource.transaction(async (db) => {
        await insert({ valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' }, db);
        await insert({ valid_from: '2021-01-01T00:00:00Z', valid_until: '2022-01-01T00:00:00Z' }, db);
        await insert({ valid_from: '2022-01-01T00:00:00Z', valid_until: null }, db);
        await insert(
          { organization_id: 'org_42', valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' },
          db,
        );
        await insert({ organization_id: 'org_42', valid_from: '2021-01-01T00:00:00Z', valid_until: null }, db);
      });
      expect(await count()).toBe(5);
    });
  });

  describe('shapes of section 2.4 (check constraints)', () => {
    it.each([
      'compute.G2.4',
      'compute.g2',
      'compute.',
      'compute.2g.4',
      'compute.g2.4.',
      'compute.g2..4',
      'Compute.g2.4',
      'storage.xx1',
      'storage.gp2',
      'storage.GP1',
      'storage.gp1.x',
      'foo.bar',
      'network.floating_ips',
      'observability.custom_metrics',
      '',
      `compute.${'a'.repeat(50)}.${'1'.repeat(10)}`,
    ])('refuses the product key %j', async (productKey) => {
      await expectRefused(insert({ product_key: productKey }), CHECK, { constraint: 'price_record_product_key_shape' });
    });

    it.each([
      ['compute.g2.4', 'seconds'],
      ['compute.m1.small.2', 'seconds'],
      ['network.floating_ip', 'seconds'],
      ['network.nat_gateway', 'seconds'],
      ['network.vpc_egress', 'gb'],
      ['network.vpc_ingress', 'gb'],
      ['network.vpc_internal', 'gb'],
      ['storage.gp1', 'gib_hours'],
      ['storage.st1', 'gib_hours'],
      ['storage.io1', 'gib_hours'],
      ['storage.snapshot', 'gib_hours'],
      ['observability.custom_metric', 'metric_months'],
      ['observability.api_request', 'requests'],
      ['observability.ingested_sample', 'samples'],
    ])('accepts %s billed in %s', async (productKey, unitType) => {
      await insert({ product_key: productKey, unit_type: unitType });
      expect(await count()).toBe(1);
    });

    it.each([
      ['compute.g2.4', 'gib_hours'],
      ['network.floating_ip', 'gb'],
      ['network.vpc_egress', 'seconds'],
      ['storage.gp1', 'seconds'],
      ['storage.snapshot', 'gb'],
      ['observability.custom_metric', 'requests'],
      ['observability.api_request', 'samples'],
      ['observability.ingested_sample', 'metric_months'],
      ['compute.g2.4', 'hours'],
    ])('refuses %s billed in %s', async (productKey, unitType) => {
      await expectRefused(insert({ product_key: productKey, unit_type: unitType }), CHECK, {
        constraint: 'price_record_unit_type_of_family',
      });
    });

    it.each(['org 42', '', '-org', 'a'.repeat(65), 'org/42'])('refuses the organization id %j', async (id) => {
      await expectRefused(insert({ organization_id: id }), CHECK, { constraint: 'price_record_organization_id_shape' });
    });

    it('refuses availability of a malformed product key', async () => {
      await expectRefused(
        dataSource.query(
          `INSERT INTO product_availability (product_key, on_sale, updated_at) VALUES ($1, false, now())`,
          ['storage.gp2'],
        ),
        CHECK,
        { constraint: 'product_availability_product_key_shape' },
      );
    });
  });

  describe('units and amounts (check constraints)', () => {
    it.each([0, -1, -3600])('refuses unit_count %d', async (unitCount) => {
      await expectRefused(insert({ unit_count: unitCount }), CHECK, { constraint: 'price_record_unit_count_positive' });
    });

    it.each(['-0.0001', '-1', 'NaN', 'Infinity'])('refuses the amount %s', async (amount) => {
      await expectRefused(insert({ amount }), CHECK, { constraint: 'price_record_amount_non_negative' });
    });

    it('accepts a zero amount and keeps the digits an amount was set with', async () => {
      await insert({ amount: '0' });
      await insert({ product_key: 'compute.g2.8', amount: '0.000000012' });
      await insert({ product_key: 'compute.g2.16', amount: '0.0480' });
      const rows: { amount: string }[] = await dataSource.query(`SELECT amount::text FROM price_record ORDER BY id`);
      expect(rows.map((r) => r.amount)).toEqual(['0', '0.000000012', '0.0480']);
    });

    // The price book takes amounts of at most 40 characters: every one of them fits exactly.
    const LONGEST_INTEGER = '9'.repeat(40);
    const LONGEST_FRACTION = `0.${'0'.repeat(37)}1`;
    const MOST_DIGITS = `${'9'.repeat(20)}.${'9'.repeat(19)}`;

    it('holds the longest amounts the price book accepts, digit for digit', async () => {
      for (const [i, amount] of [LONGEST_INTEGER, LONGEST_FRACTION, MOST_DIGITS].entries()) {
        await insert({ product_key: `compute.g2.${i + 1}`, amount });
      }
      const rows: { amount: string }[] = await dataSource.query(`SELECT amount::text FROM price_record ORDER BY id`);
      expect(rows.map((r) => r.amount)).toEqual([LONGEST_INTEGER, LONGEST_FRACTION, MOST_DIGITS]);
    });

    it.each([
      ['10^40', `1${'0'.repeat(40)}`],
      ['39 decimals', `0.${'0'.repeat(38)}1`],
      ['39 decimals, trailing zeros too', `1.${'0'.repeat(39)}`],
    ])('refuses an amount beyond the bounded precision: %s', async (_what, amount) => {
      await expectRefused(insert({ amount }), CHECK, { constraint: 'price_record_amount_precision' });
    });
  });

  describe('validity windows (check constraints)', () => {
    it('refuses valid_until equal to valid_from', async () => {
      await expectRefused(insert({ valid_from: '2030-01-01T00:00:00Z', valid_until: '2030-01-01T00:00:00Z' }), CHECK, {
        constraint: 'price_record_valid_until_after_valid_from',
      });
    });

    it('refuses valid_until before valid_from', async () => {
      await expectRefused(
        insert({ valid_from: '2030-01-01T00:00:00Z', valid_until: '2029-12-31T23:59:59.999Z' }),
        CHECK,
        { constraint: 'price_record_valid_until_after_valid_from' },
      );
    });

    it('refuses an infinite valid_from', async () => {
      await expectRefused(insert({ valid_from: '-infinity' }), CHECK, { constraint: 'price_record_valid_from_finite' });
      await expectRefused(insert({ valid_from: 'infinity' }), CHECK, { constraint: 'price_record_valid_from_finite' });
    });

    it('refuses an infinite valid_until (null is the open end)', async () => {
      await expectRefused(insert({ valid_until: 'infinity' }), CHECK, {
        constraint: 'price_record_valid_until_after_valid_from',
      });
    });

    it('refuses a missing valid_from, amount or unit', async () => {
      await expectRefused(
        dataSource.query(
          `INSERT INTO price_record (product_key, unit_type, unit_count, amount, recorded_at)
           VALUES ('compute.g2.4', 'seconds', 3600, 1, now())`,
        ),
        '23502',
        { message: /valid_from/ },
      );
    });
  });
});

describe('history is never rewritten (trigger)', () => {
  beforeEach(async () => {
    await dataSource.query(`TRUNCATE price_record`);
  });

  const update = (id: string, set: string, ...params: unknown[]) =>
    dataSource.query(`UPDATE price_record SET ${set} WHERE id = $1`, [id, ...params]);

  it.each([
    ['amount', `amount = 0.0700`],
    ['valid_from', `valid_from = '2020-06-01T00:00:00Z'`],
    ['unit_count', `unit_count = 60`],
    ['unit_type and product_key', `product_key = 'network.floating_ip'`],
    ['organization_id', `organization_id = 'org_42'`],
    ['recorded_at', `recorded_at = now() - interval '1 day'`],
  ])('refuses changing the %s of a record that took effect', async (_what, set) => {
    const id = await insert({ valid_from: '2020-01-01T00:00:00Z' });
    await expectRefused(update(id, set), INTEGRITY, { message: /only valid_until may change/ });
    const rows: { amount: string; valid_from: Date }[] = await dataSource.query(
      `SELECT amount::text, valid_from FROM price_record WHERE id = $1`,
      [id],
    );
    expect(rows).toEqual([{ amount: '0.0610', valid_from: new Date('2020-01-01T00:00:00Z') }]);
  });

  it('refuses changing the amount of a scheduled record too', async () => {
    const id = await insert({ valid_from: '2099-01-01T00:00:00Z' });
    await expectRefused(update(id, `amount = 1`), INTEGRITY, { message: /only valid_until may change/ });
  });

  it('refuses deleting a record that took effect, and allows deleting a scheduled one', async () => {
    const past = await insert({ valid_from: '2020-01-01T00:00:00Z', valid_until: '2099-01-01T00:00:00Z' });
    const scheduled = await insert({ valid_from: '2099-01-01T00:00:00Z' });
    await expectRefused(dataSource.query(`DELETE FROM price_record WHERE id = $1`, [past]), INTEGRITY, {
      message: /took effect at .* and cannot be deleted/,
    });
    await dataSource.query(`DELETE FROM price_record WHERE id = $1`, [scheduled]);
    const rows: { id: string }[] = await dataSource.query(`SELECT id::text FROM price_record`);
    expect(rows).toEqual([{ id: past }]);
  });

  it('refuses moving or removing an end that passed', async () => {
    const id = await insert({ valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' });
    await expectRefused(update(id, `valid_until = '2099-01-01T00:00:00Z'`), INTEGRITY, {
      message: /ended at .* and its end cannot move/,
    });
    await expectRefused(update(id, `valid_until = NULL`), INTEGRITY, {
      message: /ended at .* and its end cannot move/,
    });
    await expectRefused(update(id, `valid_until = '2020-06-01T00:00:00Z'`), INTEGRITY, {
      message: /ended at .* and its end cannot move/,
    });
  });

  it('refuses setting an end in the past, or before the write takes effect', async () => {
    const id = await insert({ valid_from: '2020-01-01T00:00:00Z' });
    await expectRefused(update(id, `valid_until = '2021-01-01T00:00:00Z'`), INTEGRITY, {
      message: /an end may be set to now or later/,
    });
    await expectRefused(update(id, `valid_until = now() - interval '1 second'`), INTEGRITY, {
      message: /an end may be set to now or later/,
    });
    // Now is before the write's publication instant: the list could not show that end in time.
    await expectRefused(update(id, `valid_until = clock_timestamp()`), INTEGRITY, {
      message: /an end may be set to now or later/,
    });
    const rows: { valid_until: Date | null }[] = await dataSource.query(
      `SELECT valid_until FROM price_record WHERE id = $1`,
      [id],
    );
    expect(rows).toEqual([{ valid_until: null }]);
  });

  it('allows setting an open end to the write’s instant or later, moving a future end, and reopening it; keeps each change’s instant', async () => {
    const id = await insert({ valid_from: '2020-01-01T00:00:00Z' });
    await update(id, `valid_until = '2099-01-01T00:00:00Z'`);
    await update(id, `valid_until = '2098-01-01T00:00:00Z'`);
    await update(id, `valid_until = NULL`);
    const other = await insert({ product_key: 'compute.g2.8', valid_from: '2020-01-01T00:00:00Z' });
    await update(other, `valid_until = pricing_publication_instant()`);
    const rows: { id: string; ended_at_its_write: boolean | null; end_changes: number; end_before: Date | null }[] =
      await dataSource.query(
        `SELECT id::text, valid_until = end_set_at AS ended_at_its_write, end_changes, end_before
           FROM price_record ORDER BY id`,
      );
    expect(rows).toEqual([
      { id, ended_at_its_write: null, end_changes: 3, end_before: new Date('2098-01-01T00:00:00Z') },
      { id: other, ended_at_its_write: true, end_changes: 1, end_before: null },
    ]);
  });

  it('allows linking superseded_by (the only other column that may change)', async () => {
    const first = await insert({ valid_from: '2020-01-01T00:00:00Z', valid_until: '2099-01-01T00:00:00Z' });
    const second = await insert({ valid_from: '2099-01-01T00:00:00Z' });
    await update(first, `superseded_by = $2::bigint`, second);
    const rows: { superseded_by: string }[] = await dataSource.query(
      `SELECT superseded_by::text FROM price_record WHERE id = $1`,
      [first],
    );
    expect(rows).toEqual([{ superseded_by: second }]);
  });
});

describe('what an insert may record (trigger)', () => {
  beforeEach(async () => {
    await dataSource.query(`TRUNCATE price_record`);
  });

  it('records recorded_at at the write’s publication instant, after the transaction’s clock, and no other value', async () => {
    const [{ matches, after }] = await dataSource.transaction(async (db) => {
      const id = await insert({}, db);
      return db.query<{ matches: boolean; after: boolean }[]>(
        `SELECT recorded_at = (SELECT published_at FROM price_book_write WHERE xid = pg_current_xact_id()) AS matches,
                recorded_at > clock_timestamp() AS after
           FROM price_record WHERE id = $1`,
        [id],
      );
    });
    expect({ matches, after }).toEqual({ matches: true, after: true });
    for (const column of ['recorded_at', 'end_set_at', 'end_before']) {
      await expectRefused(
        dataSource.query(
          `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from, ${column})
           VALUES ('compute.g2.8', 'seconds', 3600, 1, '2020-01-01T00:00:00Z', now() - interval '1 day')`,
        ),
        INTEGRITY,
        { message: /(recorded_at is the write's publication instant|are kept by the database)/ },
      );
    }
    await expectRefused(
      dataSource.query(
        `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from, end_changes)
         VALUES ('compute.g2.8', 'seconds', 3600, 1, '2020-01-01T00:00:00Z', 7)`,
      ),
      INTEGRITY,
      { message: /are kept by the database/ },
    );
    expect(await count()).toBe(1);
  });

  it('refuses a valid_from in the past where the key and scope already have records', async () => {
    await insert({ valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' });
    await expectRefused(insert({ valid_from: '2022-01-01T00:00:00Z' }), INTEGRITY, {
      message:
        /valid_from .* is before the write's publication instant and the list of compute\.g2\.4 already has records/,
    });
    await expectRefused(
      insert({ valid_from: '2019-01-01T00:00:00Z', valid_until: '2020-01-01T00:00:00Z' }),
      INTEGRITY,
      {
        message: /already has records/,
      },
    );
    // A scheduled record (not yet in effect) is a record too.
    await insert({ product_key: 'compute.g2.8', valid_from: '2099-01-01T00:00:00Z' });
    await expectRefused(
      insert({ product_key: 'compute.g2.8', valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' }),
      INTEGRITY,
      {
        message: /already has records/,
      },
    );
    // The same for an organization's prices.
    await insert({
      organization_id: 'org_42',
      valid_from: '2020-01-01T00:00:00Z',
      valid_until: '2021-01-01T00:00:00Z',
    });
    await expectRefused(insert({ organization_id: 'org_42', valid_from: '2022-01-01T00:00:00Z' }), INTEGRITY, {
      message: /organization org_42 of compute\.g2\.4 already has records/,
    });
    expect(await count()).toBe(3);
  });

  it('accepts a change that starts now or later, and a first load or backfill of a key or scope without records', async () => {
    await insert({ valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' });
    await insert({ valid_from: '2099-01-01T00:00:00Z' });
    await dataSource.query(
      `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from, valid_until)
       VALUES ('compute.g2.4', 'seconds', 3600, 1, pricing_publication_instant(), '2099-01-01T00:00:00Z')`,
    );
    // Another scope of the same key has no records yet: it may start in the past.
    await insert({ organization_id: 'org_42', valid_from: '2020-01-01T00:00:00Z' });
    // A backfill of several records, in one statement or in several of one transaction.
    await dataSource.query(
      `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from, valid_until)
       VALUES ('compute.g2.8', 'seconds', 3600, 1, '2020-01-01T00:00:00Z', '2021-01-01T00:00:00Z'),
              ('compute.g2.8', 'seconds', 3600, 2, '2021-01-01T00:00:00Z', NULL)`,
    );
    await dataSource.transaction(async (db) => {
      await insert(
        { product_key: 'compute.g2.16', valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' },
        db,
      );
      await insert({ product_key: 'compute.g2.16', valid_from: '2021-01-01T00:00:00Z' }, db);
    });
    expect(await count()).toBe(8);
  });
});

describe('other tables', () => {
  it('refuses an unknown kind of price change', async () => {
    await expectRefused(
      dataSource.query(
        `INSERT INTO price_change (changed_at, product_key, change, actor) VALUES (now(), 'compute.g2.4', 'rewrite', 'ana')`,
      ),
      CHECK,
      { constraint: 'price_change_kind' },
    );
  });

  it.each<[string, string, string | null, string]>([
    ['no actor', 'NULL', null, 'price_change_actor_recorded'],
    ['an actor with a space', `'Ana Lima'`, null, 'price_change_actor_shape'],
    ['an actor of 101 characters', `repeat('a', 101)`, null, 'price_change_actor_shape'],
    ['an empty actor', `''`, null, 'price_change_actor_shape'],
    ['a reason of 501 characters', `'ana'`, `repeat('r', 501)`, 'price_change_reason_shape'],
    ['a blank reason', `'ana'`, `'  '`, 'price_change_reason_shape'],
    ['a reason of two lines', `'ana'`, `E'one\\ntwo'`, 'price_change_reason_shape'],
  ])('refuses a change with %s', async (_what, actor, reason, constraint) => {
    await expectRefused(
      dataSource.query(
        `INSERT INTO price_change (changed_at, product_key, change, actor, reason)
         VALUES (now(), 'compute.g2.4', 'set', ${actor}, ${reason ?? 'NULL'})`,
      ),
      CHECK,
      { constraint },
    );
  });

  it('takes an e-mail address as actor and a reason of 500 characters', async () => {
    await dataSource.query(
      `INSERT INTO price_change (changed_at, product_key, change, actor, reason, effect, hash)
       VALUES (now(), 'compute.g2.4', 'set', 'ana.lima+ops@example.com', repeat('é', 500), '{}', repeat('0', 64))`,
    );
  });

  it('keeps a single version row', async () => {
    await expectRefused(
      dataSource.query(`INSERT INTO price_book_version (singleton, version, record_count) VALUES (false, 2, 0)`),
      CHECK,
      {
        constraint: 'price_book_version_singleton_check',
      },
    );
    await expectRefused(
      dataSource.query(`INSERT INTO price_book_version (version, record_count) VALUES (2, 0)`),
      '23505',
      {
        constraint: 'price_book_version_pkey',
      },
    );
  });
});

describe('the record count (triggers)', () => {
  async function stored(): Promise<number> {
    const rows: { n: number }[] = await dataSource.query(`SELECT record_count::int AS n FROM price_book_version`);
    return rows[0].n;
  }

  it('follows every insert and delete, of one row or many, and a TRUNCATE', async () => {
    // After every write of the tests above, the refused ones included (rolled back, uncounted).
    expect(await count()).toBeGreaterThan(0);
    expect(await stored()).toBe(await count());
    await dataSource.query(
      `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from)
       SELECT 'compute.count' || g || '.4', 'seconds', 3600, 0.1, '2100-01-01' FROM generate_series(1, 3) g`,
    );
    expect(await stored()).toBe(await count());
    await insert({ product_key: 'compute.count9.4', valid_from: '2100-01-01T00:00:00Z' });
    expect(await stored()).toBe(await count());
    await dataSource.query(`DELETE FROM price_record WHERE product_key LIKE 'compute.count%' AND valid_from > now()`);
    expect(await stored()).toBe(await count());
    await dataSource.query(`TRUNCATE price_record`);
    expect(await count()).toBe(0);
    expect(await stored()).toBe(0);
  });
});
