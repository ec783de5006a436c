import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who changed a price, and why, on every row of the change log (price_change), and a change log
 * that cannot be rewritten:
 * - `actor`: 1 to 100 of `A-Z a-z 0-9 . _ @ + -` (an e-mail address fits); required on every row
 *   written from now on (NOT VALID: the rows written before have none);
 * - `reason`: optional, 1 to 500 characters, not blank, none of them a control character (the
 *   app refuses more: price-book/author.ts);
 * - UPDATE, DELETE and TRUNCATE of price_change are refused by triggers that fire in every
 *   session, replica mode included: only a migration (or an owner who disables or drops the
 *   triggers) may change the log.
 */
export class ChangeLogAuthors1764000005000 implements MigrationInterface {
  name = 'ChangeLogAuthors1764000005000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE price_change
        ADD COLUMN actor text NULL,
        ADD COLUMN reason text NULL,
        ADD CONSTRAINT price_change_actor_shape CHECK (actor ~ '^[A-Za-z0-9._@+-]{1,100}$'),
        ADD CONSTRAINT price_change_reason_shape CHECK (char_length(reason) <= 500 AND reason ~ '[^[:space:]]' AND reason !~ '[[:cntrl:]]')`);
    await db.query(
      `ALTER TABLE price_change ADD CONSTRAINT price_change_actor_recorded CHECK (actor IS NOT NULL) NOT VALID`,
    );
    await db.query(`
      CREATE FUNCTION price_change_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the change log is append-only: % of price_change is refused', TG_OP
          USING ERRCODE = 'integrity_constraint_violation';
      END $$`);
    await db.query(`
      CREATE TRIGGER price_change_append_only BEFORE UPDATE OR DELETE ON price_change
      FOR EACH ROW EXECUTE FUNCTION price_change_append_only()`);
    await db.query(`
      CREATE TRIGGER price_change_no_truncate BEFORE TRUNCATE ON price_change
      FOR EACH STATEMENT EXECUTE FUNCTION price_change_append_only()`);
    // ALWAYS: a session in replica mode (session_replication_role, which a superuser may set)
    // skips ordinary triggers, and would rewrite the log.
    await db.query(`ALTER TABLE price_change ENABLE ALWAYS TRIGGER price_change_append_only`);
    await db.query(`ALTER TABLE price_change ENABLE ALWAYS TRIGGER price_change_no_truncate`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER price_change_no_truncate ON price_change`);
    await db.query(`DROP TRIGGER price_change_append_only ON price_change`);
    await db.query(`DROP FUNCTION price_change_append_only()`);
    await db.query(`
      ALTER TABLE price_change
        DROP CONSTRAINT price_change_actor_recorded,
        DROP CONSTRAINT price_change_reason_shape,
        DROP CONSTRAINT price_change_actor_shape,
        DROP COLUMN reason,
        DROP COLUMN actor`);
  }
}
