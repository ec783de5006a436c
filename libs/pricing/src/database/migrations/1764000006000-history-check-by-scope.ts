import type { MigrationInterface, QueryRunner } from 'typeorm';
import { keepHistoryOnInsert, PAST_OVER_RECORDS_BY_KEY } from './1764000002000-database-side-integrity';

/**
 * The insert trigger's check of past prices (1764000002000), one index probe per inserted row for
 * its own key and scope (price_record_scope): the join on the key alone read every organization's
 * records of a list key, most of a 1,000,000-record first load (docs/benchmarks.md, "A large
 * price book"). Same rule, same refusals. The CASE keeps each
 * EXISTS a probe per row: PostgreSQL does not turn a sub-select inside CASE into a join of the
 * whole table.
 */
export class HistoryCheckByScope1764000006000 implements MigrationInterface {
  name = 'HistoryCheckByScope1764000006000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE OR REPLACE ${keepHistoryOnInsert(PAST_OVER_RECORDS_BY_SCOPE)}`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`CREATE OR REPLACE ${keepHistoryOnInsert(PAST_OVER_RECORDS_BY_KEY)}`);
  }
}

export const PAST_OVER_RECORDS_BY_SCOPE = `
        SELECT i.id, i.product_key, i.organization_id, i.valid_from INTO refused
          FROM inserted i
         WHERE i.valid_from < now()
           AND CASE WHEN i.organization_id IS NULL
                    THEN EXISTS (SELECT 1 FROM price_record p
                                  WHERE hashtext(p.product_key) = hashtext(i.product_key)
                                    AND p.product_key = i.product_key AND p.organization_id IS NULL
                                    AND p.recorded_at <> now())
                    ELSE EXISTS (SELECT 1 FROM price_record p
                                  WHERE hashtext(p.product_key) = hashtext(i.product_key)
                                    AND p.product_key = i.product_key AND p.organization_id = i.organization_id
                                    AND p.recorded_at <> now())
               END
         LIMIT 1;`;
