import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The number of rows of price_record, kept beside the version by statement triggers: an instance
 * that applies a change checks its records against it (PricingSnapshot), and `count(*)` read the
 * whole table for that, on every reload (docs/benchmarks.md, "A large price book"). The triggers count every write, the library's and one by hand alike,
 * TRUNCATE too, so the check still catches a write outside the price book's rules. Writes of the
 * price book already hold the version's row (they move the version), so the count adds no lock.
 */
export class RecordCount1764000007000 implements MigrationInterface {
  name = 'RecordCount1764000007000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE price_book_version ADD COLUMN record_count bigint`);
    await db.query(`UPDATE price_book_version SET record_count = (SELECT count(*) FROM price_record)`);
    await db.query(`ALTER TABLE price_book_version ALTER COLUMN record_count SET NOT NULL`);
    // One function for the three triggers: PostgreSQL gives a trigger with transition tables one
    // event, and PL/pgSQL plans a statement only when it runs it, so each branch names the
    // transition table of its own trigger.
    await db.query(`
      CREATE FUNCTION price_record_count() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE price_book_version SET record_count = record_count + (SELECT count(*) FROM inserted);
        ELSIF TG_OP = 'DELETE' THEN
          UPDATE price_book_version SET record_count = record_count - (SELECT count(*) FROM deleted);
        ELSE
          UPDATE price_book_version SET record_count = 0;
        END IF;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE TRIGGER price_record_count_inserted AFTER INSERT ON price_record
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION price_record_count()`);
    await db.query(`
      CREATE TRIGGER price_record_count_deleted AFTER DELETE ON price_record
        REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION price_record_count()`);
    await db.query(`
      CREATE TRIGGER price_record_count_truncated AFTER TRUNCATE ON price_record
        FOR EACH STATEMENT EXECUTE FUNCTION price_record_count()`);
  }

  async down(db: QueryRunner): Promise<void> {
    for (const event of ['inserted', 'deleted', 'truncated']) {
      await db.query(`DROP TRIGGER price_record_count_${event} ON price_record`);
    }
    await db.query(`DROP FUNCTION price_record_count()`);
    await db.query(`ALTER TABLE price_book_version DROP COLUMN record_count`);
  }
}
