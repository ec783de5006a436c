import { join } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { TestingModule } from '@nestjs/testing';
import { appDatabaseOptions } from '@app/control-plane';
import { DatabaseConnection } from '@app/database';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runCli, spawnCli } from './support/cli';
import { queryAt } from './support/sql';
import { startService, waitUntilReady } from './support/service';
import { useTempDir } from './support/temp-dir';
import { dumpDatabase, openDataSource } from './support/database';
import { settledState, startDatabaseModule } from './support/database-module';
import { newDatabase } from './support/template-database';
import { startTestApp } from './support/test-app';
import { RecordingLogger } from './support/recording-logger';
import { asRole, createTwoRoleDatabase, type TwoRoleDatabase } from './support/two-roles';

// Least privilege (docs/operations.md, "Two roles: least privilege"): with DATABASE_MIGRATION_URL,
// migrations run as that role, which owns the schema; the service and the CLI run as DATABASE_URL's
// role, granted only what they need. Against PostgreSQL, with two real roles.

const TOKEN = 'runtime-role-e2e-token-0123456789';
const dir = useTempDir('runtime-role');

const bookFile = (name: string, book: unknown): Promise<string> => dir.write(name, book);

const gp1 = (amount: string, validFrom?: string): Record<string, unknown> => ({
  product_key: 'storage.gp1',
  unit_type: 'gib_hours',
  unit_count: 730,
  amount,
  ...(validFrom ? { valid_from: validFrom } : {}),
});

/** The privileges of `role` on every relation of the schema: table-level, then column-level. */
async function privilegesOf(url: string, role: string): Promise<Record<string, string>> {
  const rows = await queryAt<{ relation: string; privileges: string }>(
    url,
    `SELECT c.relname AS relation,
            concat_ws('; ',
              (SELECT string_agg(a.privilege_type, ',' ORDER BY a.privilege_type)
                 FROM aclexplode(c.relacl) a WHERE a.grantee = r.oid),
              (SELECT string_agg(x.privilege_type || '(' || x.columns || ')', ',' ORDER BY x.privilege_type)
                 FROM (SELECT p.privilege_type, string_agg(att.attname, ',' ORDER BY att.attname) AS columns
                         FROM pg_attribute att, aclexplode(att.attacl) p
                        WHERE att.attrelid = c.oid AND p.grantee = r.oid
                        GROUP BY p.privilege_type) x)) AS privileges
       FROM pg_class c, pg_roles r
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
        AND r.rolname = '${role}'
      ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((row) => [row.relation, row.privileges]));
}

/** Runs `sql` on a connection of its own as `url`'s role; the error PostgreSQL answered, if any. */
async function attempt(url: string, sql: string): Promise<{ code?: string; message?: string }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
    return {};
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return { code, message };
  } finally {
    await client.end();
  }
}

describe('two roles: the owner migrates, the service and the CLI run as the runtime role', () => {
  let db: TwoRoleDatabase;

  beforeAll(async () => {
    db = await createTwoRoleDatabase();
    const migrated = await runCli(['migrate'], db.env);
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: '' });
    // A price in force, as the runtime role writes it.
    const book = await bookFile('book.json', { prices: [gp1('0.0480', '2026-01-01T00:00:00Z')] });
    const imported = await runCli(['import', book, '--actor', 'ana'], db.env);
    expect({ code: imported.code, stderr: imported.stderr }).toEqual({ code: 0, stderr: '' });
  }, 60_000);

  afterAll(async () => {
    await db?.drop();
  });

  it('migrates as the owner, which owns every relation and function the migrations made; the runtime role owns nothing', async () => {
    const owners = await queryAt<{ owner: string }>(
      db.adminUrl,
      // btree_gist's functions are the bootstrap superuser's, as in every trusted extension.
      `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relnamespace = 'public'::regnamespace
       UNION SELECT DISTINCT pg_get_userbyid(proowner) FROM pg_proc WHERE pronamespace = 'public'::regnamespace
          AND NOT EXISTS (SELECT FROM pg_depend WHERE objid = pg_proc.oid AND deptype = 'e')
       UNION SELECT DISTINCT pg_get_userbyid(extowner) FROM pg_extension WHERE extname = 'btree_gist'`,
    );
    expect(owners).toEqual([{ owner: db.owner }]);
    const [{ tables }] = await queryAt<{ tables: number }>(
      db.adminUrl,
      `SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(tables).toBe(8);
  });

  it('grants the runtime role exactly what the service and the CLI need, on every relation, and nothing to PUBLIC', async () => {
    // A relation a later migration adds shows up here: decide its grants in its library's grant function.
    expect(await privilegesOf(db.adminUrl, db.runtime)).toEqual({
      migrations: 'SELECT',
      migrations_id_seq: '',
      price_book_clock: 'SELECT',
      price_book_version: 'SELECT; UPDATE(version)',
      price_book_write: '',
      price_book_write_id_seq: '',
      price_change: 'INSERT,SELECT',
      price_change_id: '',
      price_record: 'DELETE,INSERT,SELECT; UPDATE(superseded_by,valid_until)',
      price_record_id_seq: '',
      product_availability: 'INSERT,SELECT; UPDATE(on_sale,updated_at)',
      volume: 'INSERT,SELECT',
    });
    const [publicGrants] = await queryAt<{ n: number }>(
      db.adminUrl,
      `SELECT count(*)::int AS n FROM pg_class, aclexplode(relacl) a
        WHERE relnamespace = 'public'::regnamespace AND a.grantee = 0`,
    );
    expect(publicGrants.n).toBe(0);
    const [powers] = await queryAt<Record<string, boolean>>(
      db.adminUrl,
      `SELECT has_database_privilege('${db.runtime}', current_database(), 'CREATE') AS create_schema,
              has_database_privilege('${db.runtime}', current_database(), 'TEMPORARY') AS temporary,
              has_schema_privilege('${db.runtime}', 'public', 'CREATE') AS create_in_public,
              has_function_privilege('${db.runtime}', 'pricing_grant_runtime(name)', 'EXECUTE') AS pricing_grants,
              has_function_privilege('${db.runtime}', 'volumes_grant_runtime(name)', 'EXECUTE') AS volumes_grants,
              has_function_privilege('${db.runtime}', 'pricing_publication_instant(interval, interval)', 'EXECUTE')
                AS dates_its_writes,
              rolsuper, rolcreatedb, rolcreaterole
         FROM pg_roles WHERE rolname = '${db.runtime}'`,
    );
    expect(powers).toEqual({
      create_schema: false,
      temporary: false,
      create_in_public: false,
      pricing_grants: false,
      volumes_grants: false,
      dates_its_writes: true,
      rolsuper: false,
      rolcreatedb: false,
      rolcreaterole: false,
    });
  });

  describe('refuses the runtime role what would rewrite the book or its log, or lift the rules', () => {
    const ownerOf = (): string => db.owner;
    it.each<[string, () => string, string]>([
      [
        'disabling the change log’s trigger',
        () => `ALTER TABLE price_change DISABLE TRIGGER price_change_append_only`,
        '42501',
      ],
      ['disabling the history triggers', () => `ALTER TABLE price_record DISABLE TRIGGER USER`, '42501'],
      [
        'replacing the trigger function with one that does nothing',
        () =>
          `CREATE OR REPLACE FUNCTION price_change_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
        '42501',
      ],
      ['running the record count as itself', () => `ALTER FUNCTION price_record_count() SECURITY INVOKER`, '42501'],
      ['dropping the trigger', () => `DROP TRIGGER price_change_append_only ON price_change`, '42501'],
      ['dropping the history trigger’s function', () => `DROP FUNCTION price_record_keep_history() CASCADE`, '42501'],
      ['TRUNCATE price_record', () => `TRUNCATE price_record`, '42501'],
      ['TRUNCATE price_change', () => `TRUNCATE price_change`, '42501'],
      ['DROP TABLE price_record', () => `DROP TABLE price_record`, '42501'],
      ['DROP TABLE price_change', () => `DROP TABLE price_change`, '42501'],
      ['ALTER TABLE ... ADD COLUMN', () => `ALTER TABLE price_record ADD COLUMN note text`, '42501'],
      ['rewriting amounts', () => `UPDATE price_record SET amount = amount * 2`, '42501'],
      ['moving windows', () => `UPDATE price_record SET valid_from = valid_from - interval '1 day'`, '42501'],
      ['rewriting when a price was recorded', () => `UPDATE price_record SET recorded_at = now()`, '42501'],
      ['rewriting the change log', () => `UPDATE price_change SET actor = 'mallory'`, '42501'],
      ['deleting from the change log', () => `DELETE FROM price_change`, '42501'],
      [
        'a trigger of its own on the change log',
        () =>
          `CREATE TRIGGER mallory BEFORE INSERT ON price_change FOR EACH ROW EXECUTE FUNCTION price_change_append_only()`,
        '42501',
      ],
      ['taking a table over', () => `ALTER TABLE price_change OWNER TO CURRENT_USER`, '42501'],
      ['becoming the owner', () => `GRANT ${ownerOf()} TO CURRENT_USER`, '42501'],
      ['setting the record count', () => `UPDATE price_book_version SET record_count = 0`, '42501'],
      ['deleting availability', () => `DELETE FROM product_availability`, '42501'],
      ['replica mode, which skips ordinary triggers', () => `SET session_replication_role = replica`, '42501'],
      ['CREATE TABLE in public', () => `CREATE TABLE public.mallory (id int)`, '42501'],
      ['a schema of its own', () => `CREATE SCHEMA mallory`, '42501'],
      [
        'a temporary table that would stand in for a table',
        () => `CREATE TEMP TABLE price_book_version (x int)`,
        '42501',
      ],
      ['UPDATE migrations', () => `UPDATE migrations SET name = name`, '42501'],
      ['DELETE FROM migrations', () => `DELETE FROM migrations`, '42501'],
      ['granting itself more', () => `SELECT pricing_grant_runtime(CURRENT_USER)`, '42501'],
      ['moving an identity', () => `SELECT setval(pg_get_serial_sequence('price_change', 'id'), 1)`, '42501'],
    ])('%s', async (_what, sql, code) => {
      const admin = await openDataSource(db.adminUrl, { logging: false });
      try {
        const before = await dumpDatabase(admin);
        expect(await attempt(db.runtimeUrl, sql())).toMatchObject({ code });
        expect(await dumpDatabase(admin)).toBe(before);
      } finally {
        await admin.destroy();
      }
    });

    it('a GRANT by the runtime role to another role gives nothing (PostgreSQL warns 01007)', async () => {
      const client = new Client({ connectionString: db.runtimeUrl });
      const notices: (string | undefined)[] = [];
      client.on('notice', (notice) => notices.push(notice.code));
      await client.connect();
      try {
        await client.query(`GRANT SELECT, INSERT ON price_change, price_record TO PUBLIC`);
      } finally {
        await client.end();
      }
      expect(notices).toEqual(['01007', '01007']);
      const [{ n }] = await queryAt<{ n: number }>(
        db.adminUrl,
        `SELECT count(*)::int AS n FROM pg_class, aclexplode(relacl) a
          WHERE relname IN ('price_change', 'price_record') AND a.grantee = 0`,
      );
      expect(n).toBe(0);
    });

    it('and the write rules still hold for what it may do', async () => {
      // The price in force took effect: no deletion, no end in the past.
      expect(await attempt(db.runtimeUrl, `DELETE FROM price_record WHERE valid_from < now()`)).toMatchObject({
        code: '23000',
      });
      expect(
        await attempt(db.runtimeUrl, `UPDATE price_record SET valid_until = now() - interval '1 day'`),
      ).toMatchObject({ code: '23000' });
    });
  });

  it('runs every command of the CLI as the runtime role: import, --dry-run --plan-out, apply, withdraw, export, history, changes, show', async () => {
    const ok = (result: { code: number | null; stderr: string }): void =>
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    // A scheduled change (it ends the price in force) and availability.
    const next = await bookFile('next.json', {
      prices: [gp1('0.0500', '2099-01-01T00:00:00Z')],
      products: [{ product_key: 'storage.io1', on_sale: true }],
    });
    const plan = join(dir.path, 'plan.json');
    ok(await runCli(['import', '--dry-run', '--plan-out', plan, next], db.env));
    ok(await runCli(['apply', plan, next, '--actor', 'bea', '--reason', 'reviewed'], db.env));
    ok(await runCli(['withdraw', 'storage.gp1', '--valid-from', '2099-01-01T00:00:00Z', '--actor', 'bea'], db.env));
    // The commands that only read need no migration role.
    const runtimeOnly = { DATABASE_URL: db.runtimeUrl };
    const exported = await runCli(['export'], runtimeOnly);
    ok(exported);
    // Withdrawn: the scheduled price is gone and the price in force has no end again.
    expect(exported.stdout).toContain('"amount": "0.0480"');
    expect(exported.stdout).not.toContain('"amount": "0.0500"');
    const history = await runCli(['history', 'storage.gp1'], runtimeOnly);
    ok(history);
    expect(history.stdout).toContain('0.0480');
    const changes = await runCli(['changes'], runtimeOnly);
    ok(changes);
    expect(changes.stdout).toContain('withdraw_price');
    const shown = await runCli(['show'], runtimeOnly);
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({
      code: 0,
      stderr: 'not on sale (ordering them fails with PRODUCT_UNAVAILABLE): storage.st1\n',
    });
    expect(shown.stdout).toContain('"storage_volume"');
    // The record count, kept by a trigger that runs as the owner, followed every write.
    const [{ counted, kept }] = await queryAt<{ counted: number; kept: number }>(
      db.adminUrl,
      `SELECT (SELECT count(*) FROM price_record)::int AS counted, record_count::int AS kept FROM price_book_version`,
    );
    expect(kept).toBe(counted);
    expect(counted).toBe(1);
  }, 60_000);

  it('serves the list and the volumes routes as the runtime role, migrating as the owner at start', async () => {
    const test = await startTestApp({ databaseUrl: db.runtimeUrl, env: { ...db.env, API_TOKENS: TOKEN } });
    try {
      const list = await request(test.server).get('/v1/pricing').expect(200);
      expect(list.text).toContain('"storage.gp1"');
      const created = await request(test.server)
        .post('/v1/volumes')
        .set('Authorization', `Bearer ${TOKEN}`)
        .send({ name: 'data-1', size_gib: 10, storage_class: 'gp1' })
        .expect(201);
      await request(test.server)
        .get(`/v1/volumes/${(created.body as { id: string }).id}`)
        .set('Authorization', `Bearer ${TOKEN}`)
        .expect(200);
      expect(await test.app.get(DataSource).query(`SELECT current_user AS user`)).toEqual([{ user: db.runtime }]);
    } finally {
      await test.close();
    }
  }, 30_000);

  it('grants again, at the next migration run, what was taken from the runtime role or given to it by hand', async () => {
    await queryAt(db.adminUrl, `REVOKE INSERT ON price_change FROM ${db.runtime}`);
    await queryAt(db.adminUrl, `GRANT TRUNCATE, UPDATE ON price_record TO ${db.runtime}`);
    const before = await privilegesOf(db.adminUrl, db.runtime);
    expect(before.price_change).toBe('SELECT');
    const migrated = await runCli(['migrate'], db.env);
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: '' });
    const after = await privilegesOf(db.adminUrl, db.runtime);
    expect({ price_change: after.price_change, price_record: after.price_record }).toEqual({
      price_change: 'INSERT,SELECT',
      price_record: 'DELETE,INSERT,SELECT; UPDATE(superseded_by,valid_until)',
    });
  }, 30_000);

  it('says so, and grants nothing, when DATABASE_MIGRATION_URL names the runtime role itself', async () => {
    // In a process of its own: its log lines go to its stderr (in this one, to the first run's).
    const same = await spawnCli(['migrate'], {
      DATABASE_URL: db.runtimeUrl,
      DATABASE_MIGRATION_URL: db.runtimeUrl,
    });
    expect(same.code).toBe(0);
    expect(same.stderr).toContain(`DATABASE_MIGRATION_URL connects as the runtime role ${db.runtime} itself`);
  }, 30_000);
});

describe('start-up migrations as the migration role keep their retries and limits', () => {
  let db: TwoRoleDatabase;
  let module: TestingModule | undefined;
  const logger = new RecordingLogger();
  /** Not the owner's password until the first test sets it. */
  const LATER_PASSWORD = 'not-yet-its-password';

  beforeAll(async () => {
    db = await createTwoRoleDatabase();
  });
  afterEach(async () => {
    await module?.close();
    module = undefined;
    logger.lines.length = 0;
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function start(
    migrationUrl: string,
    extra: (new () => MigrationInterface)[] = [],
  ): Promise<DatabaseConnection> {
    module = await startDatabaseModule({ ...appDatabaseOptions(db.runtimeUrl, 1, 1), migrationUrl }, extra, logger);
    return module.get(DatabaseConnection);
  }
  const ownerSessions = async (): Promise<number> =>
    (
      await queryAt<{ n: number }>(
        db.adminUrl,
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = '${db.owner}'`,
      )
    )[0].n;

  it('retries while the migration role cannot connect (said once, no password), and is ready once it can', async () => {
    const connection = await start(asRole(db.ownerUrl, db.owner, LATER_PASSWORD));
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // past a retry
    expect(connection.isReady).toBe(false);
    expect(logger.of('warn', 'DatabaseConnection')).toEqual([
      expect.stringMatching(/^database not ready, retrying every 2 s: .*password authentication failed/),
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain(LATER_PASSWORD);
    await queryAt(db.adminUrl, `ALTER ROLE ${db.owner} PASSWORD '${LATER_PASSWORD}'`);
    expect(await settledState(connection)).toBe('ready');
    const [{ owner }] = await queryAt<{ owner: string }>(
      db.adminUrl,
      `SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(owner).toBe(db.owner);
  }, 30_000);

  it('does not try again a migration that overran its limit, and leaves no connection of the migration role', async () => {
    let attempts = 0;
    class Overruns1799999999101 implements MigrationInterface {
      name = 'Overruns1799999999101';
      async up(runner: QueryRunner): Promise<void> {
        attempts++;
        await runner.query(`SELECT pg_sleep(3)`);
      }
      async down(): Promise<void> {}
    }
    // The owner's password is the one the test above gave it.
    const connection = await start(asRole(db.ownerUrl, db.owner, LATER_PASSWORD), [Overruns1799999999101]);
    expect(await settledState(connection)).toBe('failed');
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(attempts).toBe(1);
    expect(logger.of('error', 'DatabaseConnection')).toEqual([
      expect.stringMatching(/^a migration statement did not finish within 1 s .*not retried/),
    ]);
    for (let i = 0; i < 50 && (await ownerSessions()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await ownerSessions()).toBe(0);
  }, 30_000);
});

describe('NODE_ENV=production', () => {
  let single: Awaited<ReturnType<typeof newDatabase>>;
  let two: TwoRoleDatabase;

  beforeAll(async () => {
    single = await newDatabase(true);
    two = await createTwoRoleDatabase();
  });

  afterAll(async () => {
    await single?.drop();
    await two?.drop();
  });

  /** The JSON log lines of a production start that got ready, then stopped. */
  async function productionStart(env: Record<string, string>): Promise<{ level: string; msg: string }[]> {
    const service = await startService({ NODE_ENV: 'production', METRICS_PORT: 'off', DATA_DIR: dir.path, ...env });
    try {
      await waitUntilReady(service);
    } finally {
      expect(await service.stop()).toBe(0);
    }
    return service
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: string; msg: string });
  }

  it('warns once at start while DATABASE_URL’s role migrates and owns the schema, saying how to fix it', async () => {
    const lines = await productionStart({ DATABASE_URL: single.url });
    const warnings = lines.filter((line) => line.msg.includes('DATABASE_MIGRATION_URL'));
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: expect.stringMatching(
          /^DATABASE_MIGRATION_URL is unset: the service's own role \(DATABASE_URL\) migrates and owns the pricing schema, so it could .*rewrite the change log.*set DATABASE_MIGRATION_URL to a role that owns the schema/,
        ),
      }),
    ]);
  }, 60_000);

  it('says nothing of it with DATABASE_MIGRATION_URL, and runs on the runtime role', async () => {
    const lines = await productionStart(two.env);
    expect(lines.filter((line) => line.msg.includes('DATABASE_MIGRATION_URL'))).toEqual([]);
    expect(lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
    const [{ owner }] = await queryAt<{ owner: string }>(
      two.adminUrl,
      `SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(owner).toBe(two.owner);
  }, 60_000);
});
