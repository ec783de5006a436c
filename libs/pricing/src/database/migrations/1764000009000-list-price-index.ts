import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An index of the list prices' records by id: an instance's first read at start-up takes the list
 * prices alone, in pages by id (PriceSnapshotReads.loadPricingData with `listOnly`), so that it
 * serves the public list before it has read every organization's prices. Without it, those pages
 * walk every record of the book, a million at the supported size (docs/benchmarks.md, "A large
 * price book"); with it, only the list's, a hundredth of them there.
 */
export class ListPriceIndex1764000009000 implements MigrationInterface {
  name = 'ListPriceIndex1764000009000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX price_record_list ON price_record (id) WHERE organization_id IS NULL`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX price_record_list`);
  }
}
