import type { MigrationInterface, QueryRunner } from 'typeorm';
import { PRICING_RUNTIME_GRANTS } from './1764000010500-runtime-grants';
import { GRANTS_OF_1764000011000, NEXT_PUBLICATION_INSTANT, PUBLICATION_INSTANT } from './1764000011000-one-clock';

/**
 * What the migration runner grants after every run (DatabaseModuleOptions.roleGrants): the function,
 * and the group roles it takes, in its arguments' order (before DatabaseModuleOptions.rolePrefix).
 */
export const PRICING_ROLE_GRANTS = Object.freeze({
  function: 'pricing_grant_roles',
  roles: Object.freeze(['pricing_reader', 'pricing_writer']),
});

/**
 * Readers and writers (docs/operations.md, "Readers and writers"): the price book is granted to two
 * group roles, never to a login. `pricing_grant_roles(reader, writer)`:
 *
 * - revokes whatever any role but the owner holds on the price book's tables, sequences and
 *   functions (PUBLIC, a login granted by an earlier version or by hand, column privileges too), so
 *   that what is granted is exactly what follows;
 * - grants the **reader** what the service's reads need: SELECT on the prices, the change log,
 *   availability, the version and the clock's settings (PriceSnapshotReads, the LISTEN heartbeat),
 *   and nothing that writes: no INSERT, UPDATE or DELETE anywhere, and no publication instant, so
 *   that it cannot begin a write (PriceBookWrites.begin);
 * - grants the **writer** the reader's SELECTs and what the CLI and PriceBookService write, as the
 *   runtime role had it (RuntimeGrants1764000010500, OneClock1764000011000).
 *
 * The writer is not made a member of the reader: that would need ADMIN on the reader, which the
 * owner lacks when a DBA made the roles. Which logins belong to which group is the DBA's choice;
 * the migration runner makes missing group roles when the owner may (CREATEROLE), and grants the
 * migrations table itself.
 */
export class GroupRoles1764000013000 implements MigrationInterface {
  name = 'GroupRoles1764000013000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE ${GRANTS}`);
    await db.query(`REVOKE ALL ON FUNCTION ${PRICING_ROLE_GRANTS.function}(name, name) FROM PUBLIC`);
    await db.query(`DROP FUNCTION ${PRICING_RUNTIME_GRANTS}(name)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`CREATE ${GRANTS_OF_1764000011000}`);
    await db.query(`REVOKE ALL ON FUNCTION ${PRICING_RUNTIME_GRANTS}(name) FROM PUBLIC`);
    await db.query(`DROP FUNCTION ${PRICING_ROLE_GRANTS.function}(name, name)`);
  }
}

const TABLES = `price_record, price_change, product_availability, price_book_version, price_book_clock, price_book_write`;
const FUNCTIONS = `${PUBLICATION_INSTANT}(interval, interval), ${NEXT_PUBLICATION_INSTANT}(interval, interval)`;

/** The group roles' grants; `%1$I` is the reader, `%2$I` the writer. */
const GRANTS = `
      FUNCTION ${PRICING_ROLE_GRANTS.function}(reader name, writer name) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        held record;
      BEGIN
        FOR held IN
          SELECT DISTINCT CASE c.relkind WHEN 'S' THEN 'SEQUENCE ' ELSE 'TABLE ' END || c.oid::regclass AS object,
                 a.grantee
            FROM pg_class c,
                 LATERAL (SELECT x.grantee FROM aclexplode(c.relacl) x
                          UNION SELECT x.grantee FROM pg_attribute t, aclexplode(t.attacl) x WHERE t.attrelid = c.oid) a
           WHERE a.grantee <> c.relowner
             AND (c.oid = ANY (string_to_array('${TABLES}', ', ')::regclass[])
                  OR c.oid IN (pg_get_serial_sequence('price_record', 'id')::regclass, 'price_change_id'::regclass,
                               pg_get_serial_sequence('price_book_write', 'id')::regclass))
          UNION
          SELECT 'FUNCTION ' || p.oid::regprocedure, x.grantee
            FROM pg_proc p, aclexplode(p.proacl) x
           WHERE x.grantee <> p.proowner
             AND p.oid IN ('${PUBLICATION_INSTANT}(interval, interval)'::regprocedure,
                           '${NEXT_PUBLICATION_INSTANT}(interval, interval)'::regprocedure,
                           'pricing_publication_instant_after(timestamptz, interval, interval)'::regprocedure)
        LOOP
          EXECUTE format('REVOKE ALL ON %s FROM %s', held.object,
                         CASE held.grantee WHEN 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(held.grantee)) END);
        END LOOP;
        EXECUTE format('GRANT SELECT ON price_record, price_change, product_availability, price_book_version,
                                        price_book_clock TO %1$I, %2$I', reader, writer);
        EXECUTE format('GRANT INSERT, DELETE ON price_record TO %I', writer);
        EXECUTE format('GRANT UPDATE (valid_until, superseded_by) ON price_record TO %I', writer);
        EXECUTE format('GRANT INSERT ON price_change TO %I', writer);
        EXECUTE format('GRANT INSERT ON product_availability TO %I', writer);
        EXECUTE format('GRANT UPDATE (on_sale, updated_at) ON product_availability TO %I', writer);
        EXECUTE format('GRANT UPDATE (version) ON price_book_version TO %I', writer);
        EXECUTE format('GRANT EXECUTE ON FUNCTION ${FUNCTIONS} TO %I', writer);
      END $$`;
