import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The insert trigger's function, around `findPastOverRecords`: a query that selects into `refused`
 * (id, product_key, organization_id, valid_from) an inserted row with a past valid_from whose key
 * and scope had records before the writing transaction. 1764000006000 replaces the query.
 */
export const keepHistoryOnInsert = (findPastOverRecords: string): string => `
      FUNCTION price_record_keep_history_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        refused record;
      BEGIN
        SELECT i.id, i.recorded_at INTO refused FROM inserted i WHERE i.recorded_at IS DISTINCT FROM now() LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'price record %: recorded_at is set by the database (now()), not to %', refused.id,
            refused.recorded_at USING ERRCODE = 'integrity_constraint_violation';
        END IF;
${findPastOverRecords}
        IF FOUND THEN
          RAISE EXCEPTION 'price record %: valid_from % is in the past and % of % already has records; a change starts now or later',
            refused.id, refused.valid_from, coalesce('organization ' || refused.organization_id, 'the list'),
            refused.product_key USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NULL;
      END $$`;

/** How this migration finds such a row: a join on the key, every scope of it read. */
export const PAST_OVER_RECORDS_BY_KEY = `
        SELECT i.id, i.product_key, i.organization_id, i.valid_from INTO refused
          FROM inserted i
          JOIN price_record p ON p.product_key = i.product_key
                             AND coalesce(p.organization_id, '') = coalesce(i.organization_id, '')
         WHERE i.valid_from < now() AND p.recorded_at <> now()
         LIMIT 1;`;

/**
 * Rules the price book CLI applies, held by PostgreSQL too, so that a row written by hand obeys
 * them as well:
 * - `recorded_at` is the database's clock: the writing transaction's now(), its default, and
 *   no other value is accepted;
 * - a `valid_from` in the past is accepted only where the key and scope had no record before
 *   the writing transaction (a first load or a backfill, which may write several records);
 *   a change to an existing price starts now or later;
 * - `amount` has a bounded precision: below 10^40, at most 38 decimals, so that every amount
 *   the CLI accepts (at most 40 characters) is held exactly. Not `numeric(78, 38)`: a typed
 *   scale would pad every amount to 38 decimals, and amounts keep the digits they were set with.
 */
export class DatabaseSideIntegrity1764000002000 implements MigrationInterface {
  name = 'DatabaseSideIntegrity1764000002000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE price_record ALTER COLUMN recorded_at SET DEFAULT now()`);
    await db.query(`
      ALTER TABLE price_record ADD CONSTRAINT price_record_amount_precision
        CHECK (amount < 1e40 AND scale(amount) <= 38)`);

    // Once per statement, over the rows it inserted: a row trigger would look up the key of
    // every row of a bulk insert. "Before the writing transaction": records of this
    // transaction carry its now() as recorded_at (checked first); others carry an earlier or,
    // from a transaction that started later, a later one.
    await db.query(`CREATE ${keepHistoryOnInsert(PAST_OVER_RECORDS_BY_KEY)}`);
    await db.query(`
      CREATE TRIGGER price_record_keep_history_on_insert AFTER INSERT ON price_record
      REFERENCING NEW TABLE AS inserted
      FOR EACH STATEMENT EXECUTE FUNCTION price_record_keep_history_on_insert()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER price_record_keep_history_on_insert ON price_record`);
    await db.query(`DROP FUNCTION price_record_keep_history_on_insert()`);
    await db.query(`ALTER TABLE price_record DROP CONSTRAINT price_record_amount_precision`);
    await db.query(`ALTER TABLE price_record ALTER COLUMN recorded_at DROP DEFAULT`);
  }
}
