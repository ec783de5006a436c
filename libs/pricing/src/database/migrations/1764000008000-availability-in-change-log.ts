import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What an availability change set, on its row of the change log: `on_sale`, true when the product
 * went on sale, false when it was taken off, and null on every other kind of change. Required on
 * the availability rows written from now on (NOT VALID: the rows written before have none, and the
 * log cannot be rewritten to guess them).
 */
export class AvailabilityInChangeLog1764000008000 implements MigrationInterface {
  name = 'AvailabilityInChangeLog1764000008000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE price_change
        ADD COLUMN on_sale boolean NULL,
        ADD CONSTRAINT price_change_on_sale_of_availability CHECK (on_sale IS NULL OR change = 'availability')`);
    await db.query(`
      ALTER TABLE price_change ADD CONSTRAINT price_change_on_sale_recorded
        CHECK (change <> 'availability' OR on_sale IS NOT NULL) NOT VALID`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE price_change
        DROP CONSTRAINT price_change_on_sale_recorded,
        DROP CONSTRAINT price_change_on_sale_of_availability,
        DROP COLUMN on_sale`);
  }
}
