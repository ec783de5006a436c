import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An index of price records by product key and scope: an import reads the records of the keys and
 * scopes its book names (and a withdrawal, a history, a reload after a change, those of one key),
 * never the whole table, so that changing one price of a book of a million records costs about
 * what it costs on an empty one (docs/benchmarks.md, "A large price book").
 */
export class PriceRecordScopeIndex1764000004000 implements MigrationInterface {
  name = 'PriceRecordScopeIndex1764000004000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX price_record_scope ON price_record (product_key, organization_id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX price_record_scope`);
  }
}
