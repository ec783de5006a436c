import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The function that granted a runtime role what the volumes routes need, until VolumesGroupRole1764000013100 replaced it. */
export const VOLUMES_RUNTIME_GRANTS = 'volumes_grant_runtime';

/** The grants function as this migration makes it (VolumesGroupRole1764000013100 puts it back in its `down`). */
export const GRANTS_OF_1764000010600 = `
      FUNCTION ${VOLUMES_RUNTIME_GRANTS}(runtime name) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        EXECUTE format('REVOKE ALL ON volume FROM %I', runtime);
        EXECUTE format('GRANT SELECT, INSERT ON volume TO %I', runtime);
      END $$`;

/**
 * With a migration role (DATABASE_MIGRATION_URL), `volumes_grant_runtime(role)` gives the runtime
 * role what the volumes routes do with their table: read volumes and create them; nothing else
 * (RuntimeGrants1764000010500 does the same for the price book).
 */
export class VolumesRuntimeGrants1764000010600 implements MigrationInterface {
  name = 'VolumesRuntimeGrants1764000010600';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE ${GRANTS_OF_1764000010600}`);
    await db.query(`REVOKE ALL ON FUNCTION ${VOLUMES_RUNTIME_GRANTS}(name) FROM PUBLIC`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP FUNCTION ${VOLUMES_RUNTIME_GRANTS}(name)`);
  }
}
