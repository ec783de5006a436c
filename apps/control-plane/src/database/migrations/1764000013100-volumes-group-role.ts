import type { MigrationInterface, QueryRunner } from 'typeorm';
import { GRANTS_OF_1764000010600, VOLUMES_RUNTIME_GRANTS } from './1764000010600-volumes-runtime-grants';

/** What the migration runner grants after every run for the volumes routes (DatabaseModuleOptions.roleGrants). */
export const VOLUMES_ROLE_GRANTS = Object.freeze({
  function: 'volumes_grant_roles',
  roles: Object.freeze(['volumes_writer']),
});

/**
 * The volumes routes' table is granted to a group role of its own, `volumes_writer` (read volumes,
 * create them), not to the price book's: the service that orders storage is a member of
 * `pricing_reader` and `volumes_writer`, and so cannot write prices (docs/operations.md, "Readers
 * and writers"). As GroupRoles1764000013000 does for the price book, `volumes_grant_roles(writer)`
 * first revokes whatever any other role holds on the table.
 */
export class VolumesGroupRole1764000013100 implements MigrationInterface {
  name = 'VolumesGroupRole1764000013100';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION ${VOLUMES_ROLE_GRANTS.function}(writer name) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        held oid;
      BEGIN
        FOR held IN
          SELECT x.grantee FROM pg_class c, aclexplode(c.relacl) x WHERE c.oid = 'volume'::regclass AND x.grantee <> c.relowner
          UNION
          SELECT x.grantee FROM pg_class c, pg_attribute t, aclexplode(t.attacl) x
           WHERE c.oid = 'volume'::regclass AND t.attrelid = c.oid AND x.grantee <> c.relowner
        LOOP
          EXECUTE format('REVOKE ALL ON volume FROM %s', CASE held WHEN 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(held)) END);
        END LOOP;
        EXECUTE format('GRANT SELECT, INSERT ON volume TO %I', writer);
      END $$`);
    await db.query(`REVOKE ALL ON FUNCTION ${VOLUMES_ROLE_GRANTS.function}(name) FROM PUBLIC`);
    await db.query(`DROP FUNCTION ${VOLUMES_RUNTIME_GRANTS}(name)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`CREATE ${GRANTS_OF_1764000010600}`);
    await db.query(`REVOKE ALL ON FUNCTION ${VOLUMES_RUNTIME_GRANTS}(name) FROM PUBLIC`);
    await db.query(`DROP FUNCTION ${VOLUMES_ROLE_GRANTS.function}(name)`);
  }
}
