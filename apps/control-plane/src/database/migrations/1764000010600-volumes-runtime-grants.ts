import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The function that grants a runtime role what the volumes routes need (DatabaseModuleOptions.runtimeGrants). */
export const VOLUMES_RUNTIME_GRANTS = 'volumes_grant_runtime';

/**
 * With a migration role (DATABASE_MIGRATION_URL), `volumes_grant_runtime(role)` gives the runtime
 * role what the volumes routes do with their table: read volumes and create them; nothing else
 * (RuntimeGrants1764000010500 does the same for the price book).
 */
export class VolumesRuntimeGrants1764000010600 implements MigrationInterface {
  name = 'VolumesRuntimeGrants1764000010600';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION ${VOLUMES_RUNTIME_GRANTS}(runtime name) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        EXECUTE format('REVOKE ALL ON volume FROM %I', runtime);
        EXECUTE format('GRANT SELECT, INSERT ON volume TO %I', runtime);
      END $$`);
    await db.query(`REVOKE ALL ON FUNCTION ${VOLUMES_RUNTIME_GRANTS}(name) FROM PUBLIC`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP FUNCTION ${VOLUMES_RUNTIME_GRANTS}(name)`);
  }
}
