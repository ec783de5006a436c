import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The two exclusion constraints (prices of one key and scope never overlap in time) lead with an
 * integer hash of the key. Same rule, exactly: the key itself still compares with `=`, so a
 * hash collision only shares an index page, it never refuses a price. What changes is the GiST
 * index under them: it splits its pages on the first column, and on text (every key distinct)
 * each insert cost more; on the integer hash a bulk load is faster (docs/benchmarks.md, "Price
 * book import"). The names and the SQLSTATE of a violation (23P01)
 * stay.
 */
export class ExclusionByKeyHash1764000003000 implements MigrationInterface {
  name = 'ExclusionByKeyHash1764000003000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE price_record
        DROP CONSTRAINT price_record_list_prices_do_not_overlap,
        DROP CONSTRAINT price_record_organization_prices_do_not_overlap,
        ADD CONSTRAINT price_record_list_prices_do_not_overlap
          EXCLUDE USING gist (hashtext(product_key) WITH =, product_key WITH =,
                              tstzrange(valid_from, valid_until) WITH &&)
          WHERE (organization_id IS NULL),
        ADD CONSTRAINT price_record_organization_prices_do_not_overlap
          EXCLUDE USING gist (hashtext(product_key) WITH =, product_key WITH =, organization_id WITH =,
                              tstzrange(valid_from, valid_until) WITH &&)
          WHERE (organization_id IS NOT NULL)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE price_record
        DROP CONSTRAINT price_record_list_prices_do_not_overlap,
        DROP CONSTRAINT price_record_organization_prices_do_not_overlap,
        ADD CONSTRAINT price_record_list_prices_do_not_overlap
          EXCLUDE USING gist (product_key WITH =, tstzrange(valid_from, valid_until) WITH &&)
          WHERE (organization_id IS NULL),
        ADD CONSTRAINT price_record_organization_prices_do_not_overlap
          EXCLUDE USING gist (product_key WITH =, organization_id WITH =, tstzrange(valid_from, valid_until) WITH &&)
          WHERE (organization_id IS NOT NULL)`);
  }
}
