import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The function that granted a runtime role what the price book needs, until GroupRoles1764000013000 replaced it. */
export const PRICING_RUNTIME_GRANTS = 'pricing_grant_runtime';

/** The grants function as this migration makes it (a later one that replaces it puts it back in its `down`). */
export const GRANTS_OF_1764000010500 = `
      FUNCTION ${PRICING_RUNTIME_GRANTS}(runtime name) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        EXECUTE format('REVOKE ALL ON price_record, price_change, product_availability, price_book_version FROM %I',
                       runtime);
        EXECUTE format('REVOKE ALL ON SEQUENCE %s, %s FROM %I', pg_get_serial_sequence('price_record', 'id'),
                       pg_get_serial_sequence('price_change', 'id'), runtime);
        EXECUTE format('GRANT SELECT, INSERT, DELETE ON price_record TO %I', runtime);
        EXECUTE format('GRANT UPDATE (valid_until, superseded_by) ON price_record TO %I', runtime);
        EXECUTE format('GRANT SELECT, INSERT ON price_change TO %I', runtime);
        EXECUTE format('GRANT SELECT, INSERT ON product_availability TO %I', runtime);
        EXECUTE format('GRANT UPDATE (on_sale, updated_at) ON product_availability TO %I', runtime);
        EXECUTE format('GRANT SELECT ON price_book_version TO %I', runtime);
        EXECUTE format('GRANT UPDATE (version) ON price_book_version TO %I', runtime);
      END $$`;

/**
 * Least privilege for the role the service and the CLI run as, when another role migrates and owns
 * the schema (DATABASE_MIGRATION_URL; docs/operations.md, "Two roles: least privilege"):
 * `pricing_grant_runtime(role)` revokes whatever that role holds on the price book's tables and
 * grants it exactly what the service and the CLI do with them: it reads every table; it inserts
 * prices, changes and availability; of a price it may change only the end and its link to the
 * price that ended it (the history trigger still decides which ends may move), and delete it (the
 * trigger refuses deleting what took effect: a withdrawal); of availability, whether a product is
 * on sale and when that changed; of the version, the version. The change log takes new rows only.
 * Nothing else: no TRUNCATE, no TRIGGER, no REFERENCES, no sequence, and as it owns nothing it
 * cannot alter, drop or replace a table, a trigger or a function. The migration role calls it after
 * every migration run, so a later migration that adds a table replaces this function with one that
 * grants it too (its table-level grants already cover columns added later).
 *
 * The record count (1764000007000) is kept by a trigger function that updates
 * `price_book_version.record_count`: it now runs as its owner (SECURITY DEFINER, with its search
 * path fixed to the schema and pg_temp last, so that no table of another schema or a temporary one
 * can stand in for the version's), and the runtime role is never granted that column.
 */
export class RuntimeGrants1764000010500 implements MigrationInterface {
  name = 'RuntimeGrants1764000010500';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE ${GRANTS_OF_1764000010500}`);
    await db.query(`REVOKE ALL ON FUNCTION ${PRICING_RUNTIME_GRANTS}(name) FROM PUBLIC`);
    await db.query(`
      DO $$ BEGIN
        EXECUTE format('ALTER FUNCTION price_record_count() SECURITY DEFINER SET search_path = %I, pg_temp',
                       current_schema());
      END $$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER FUNCTION price_record_count() SECURITY INVOKER RESET search_path`);
    await db.query(`DROP FUNCTION ${PRICING_RUNTIME_GRANTS}(name)`);
  }
}
