import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateVolumes1764000001000 implements MigrationInterface {
  name = 'CreateVolumes1764000001000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE volume (
        id            uuid        PRIMARY KEY,
        name          text        NOT NULL,
        size_gib      integer     NOT NULL,
        storage_class text        NOT NULL,
        created_at    timestamptz NOT NULL,
        CONSTRAINT volume_name_shape CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
        CONSTRAINT volume_size_gib_range CHECK (size_gib BETWEEN 1 AND 16384),
        CONSTRAINT volume_storage_class CHECK (storage_class IN ('gp1', 'st1', 'io1'))
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE volume`);
  }
}
