import { join } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { TestingModule } from '@nestjs/testing';
import { appDatabaseOptions } from '@app/control-plane';
import { DatabaseConnection, dataSourceOptions, MIGRATION_LOCK, migrateDatabase } from '@app/database';
import { PriceBookService, PriceBookWriteDeniedError, PricingService } from '@app/pricing';
import { parsePriceBook } from '@app/pricing/cli';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runCli, spawnCli } from './support/cli';
import { queryAt } from './support/sql';
import { startService, waitUntilReady } from './support/service';
import { useTempDir } from './support/temp-dir';
import { dumpDatabase, openDataSource } from './support/database';
import { settledState, startDatabaseModule } from './support/database-module';
import { adminUrl, newDatabase } from './support/template-database';
import { startTestApp, type TestApp } from './support/test-app';
import { waitFor } from './support/http';
import { RecordingLogger } from './support/recording-logger';
import { asRole, createGroups, createTwoRoleDatabase, type TwoRoleDatabase } from './support/two-roles';

// Least privilege (docs/operations.md, "Two roles: least privilege" and "Readers and writers"): the
// owner migrates (a deploy step: `npm run migrate` with DATABASE_MIGRATION_URL) and grants the group
// roles; the CLI writes as a member of pricing_writer, the service reads as a member of
// pricing_reader (and volumes_writer) and needs no owner's URL. Against PostgreSQL, with real roles.

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

/** The relations of the schema, each with no privilege: what a role granted nothing holds. */
const NOTHING = {
  migrations: '',
  migrations_id_seq: '',
  price_book_clock: '',
  price_book_version: '',
  price_book_write: '',
  price_book_write_id_seq: '',
  price_change: '',
  price_change_id: '',
  price_record: '',
  price_record_id_seq: '',
  product_availability: '',
  volume: '',
};

/** The deploy step: `npm run migrate` with only the owner's URL (and the prefix of the group roles). */
const deployStep = (db: TwoRoleDatabase): Record<string, string> => ({
  DATABASE_MIGRATION_URL: db.ownerUrl,
  DATABASE_ROLE_PREFIX: db.prefix,
});

const ok = (result: { code: number | null; stderr: string }): void =>
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });

describe('readers and writers: the owner migrates, the CLI writes as pricing_writer, the service reads as pricing_reader', () => {
  let db: TwoRoleDatabase;

  beforeAll(async () => {
    db = await createTwoRoleDatabase();
    ok(await runCli(['migrate'], deployStep(db)));
    // A price in force, as the writer writes it.
    const book = await bookFile('book.json', { prices: [gp1('0.0480', '2026-01-01T00:00:00Z')] });
    ok(await runCli(['import', book, '--actor', 'ana'], db.env));
  }, 60_000);

  afterAll(async () => {
    await db?.drop();
  });

  it('migrates as the owner, which owns every relation and function the migrations made; the logins own nothing', async () => {
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

  it('grants the group roles exactly what readers, writers and the volumes routes need, on every relation; logins and PUBLIC nothing', async () => {
    // A relation a later migration adds shows up here: decide its grants in its library's grant function.
    expect(await privilegesOf(db.adminUrl, db.groups.reader)).toEqual({
      ...NOTHING,
      migrations: 'SELECT',
      price_book_clock: 'SELECT',
      price_book_version: 'SELECT',
      price_change: 'SELECT',
      price_record: 'SELECT',
      product_availability: 'SELECT',
    });
    expect(await privilegesOf(db.adminUrl, db.groups.writer)).toEqual({
      ...NOTHING,
      migrations: 'SELECT',
      price_book_clock: 'SELECT',
      price_book_version: 'SELECT; UPDATE(version)',
      price_change: 'INSERT,SELECT',
      price_record: 'DELETE,INSERT,SELECT; UPDATE(superseded_by,valid_until)',
      product_availability: 'INSERT,SELECT; UPDATE(on_sale,updated_at)',
    });
    expect(await privilegesOf(db.adminUrl, db.groups.volumes)).toEqual({
      ...NOTHING,
      migrations: 'SELECT',
      volume: 'INSERT,SELECT',
    });
    // The logins hold nothing themselves: only what their group roles hold.
    expect(await privilegesOf(db.adminUrl, db.runtime)).toEqual(NOTHING);
    expect(await privilegesOf(db.adminUrl, db.reader)).toEqual(NOTHING);
    const [publicGrants] = await queryAt<{ n: number }>(
      db.adminUrl,
      `SELECT count(*)::int AS n FROM pg_class, aclexplode(relacl) a
        WHERE relnamespace = 'public'::regnamespace AND a.grantee = 0`,
    );
    expect(publicGrants.n).toBe(0);
    const powersOf = async (role: string) =>
      (
        await queryAt<Record<string, boolean>>(
          db.adminUrl,
          `SELECT has_database_privilege('${role}', current_database(), 'CREATE') AS create_schema,
                  has_database_privilege('${role}', current_database(), 'TEMPORARY') AS temporary,
                  has_schema_privilege('${role}', 'public', 'CREATE') AS create_in_public,
                  has_function_privilege('${role}', 'pricing_grant_roles(name, name)', 'EXECUTE') AS pricing_grants,
                  has_function_privilege('${role}', 'volumes_grant_roles(name)', 'EXECUTE') AS volumes_grants,
                  has_function_privilege('${role}', 'pricing_publication_instant(interval, interval)', 'EXECUTE')
                    AS dates_writes,
                  has_function_privilege('${role}', 'pricing_next_publication_instant(interval, interval)', 'EXECUTE')
                    AS dates_dry_runs,
                  rolsuper, rolcreatedb, rolcreaterole
             FROM pg_roles WHERE rolname = '${role}'`,
        )
      )[0];
    const none = {
      create_schema: false,
      temporary: false,
      create_in_public: false,
      pricing_grants: false,
      volumes_grants: false,
    };
    const ordinary = { rolsuper: false, rolcreatedb: false, rolcreaterole: false };
    expect(await powersOf(db.runtime)).toEqual({ ...none, ...ordinary, dates_writes: true, dates_dry_runs: true });
    expect(await powersOf(db.reader)).toEqual({ ...none, ...ordinary, dates_writes: false, dates_dry_runs: false });
  });

  describe('refuses the writer what would rewrite the book or its log, or lift the rules', () => {
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
      ['granting its group more', () => `SELECT pricing_grant_roles(CURRENT_USER, CURRENT_USER)`, '42501'],
      [
        'creating volumes (not its group’s)',
        () => `INSERT INTO volume VALUES (gen_random_uuid(), 'x', 1, 'gp1', now())`,
        '42501',
      ],
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

    it('a GRANT by the writer to another role gives nothing (PostgreSQL warns 01007)', async () => {
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

  describe('refuses a member of pricing_reader every write of the price book, and lets it read', () => {
    it.each<[string, string]>([
      [
        'inserting a price',
        `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from)
         VALUES ('storage.gp1', 'gib_hours', 730, 0.01, now() + interval '1 day')`,
      ],
      ['ending a price', `UPDATE price_record SET valid_until = now() + interval '1 day'`],
      ['linking a price to the one that ends it', `UPDATE price_record SET superseded_by = NULL`],
      ['deleting (withdrawing) a price', `DELETE FROM price_record`],
      [
        'logging a change',
        `INSERT INTO price_change (changed_at, product_key, change, actor) VALUES (now(), 'storage.gp1', 'end', 'mallory')`,
      ],
      [
        'setting availability',
        `INSERT INTO product_availability (product_key, on_sale, updated_at) VALUES ('storage.gp2', false, now())`,
      ],
      ['changing availability', `UPDATE product_availability SET on_sale = true, updated_at = now()`],
      ['deleting availability', `DELETE FROM product_availability`],
      ['moving the version (a reload of every instance)', `UPDATE price_book_version SET version = version + 1`],
      ['dating a write (its first statement)', `SELECT pricing_publication_instant()`],
      ['dating a dry run', `SELECT pricing_next_publication_instant()`],
      [
        'a write of its own',
        `INSERT INTO price_book_write (xid, published_at, began_at) VALUES (pg_current_xact_id(), now(), now())`,
      ],
      ['the clock’s settings', `UPDATE price_book_clock SET publication_margin = interval '0'`],
      ['TRUNCATE price_record', `TRUNCATE price_record`],
      ['TRUNCATE price_change', `TRUNCATE price_change`],
      ['moving an identity', `SELECT setval('price_change_id', 1)`],
      ['granting its group more', `SELECT pricing_grant_roles(CURRENT_USER, CURRENT_USER)`],
    ])('%s', async (_what, sql) => {
      const admin = await openDataSource(db.adminUrl, { logging: false });
      try {
        const before = await dumpDatabase(admin);
        expect(await attempt(db.readerUrl, sql)).toMatchObject({ code: '42501' });
        expect(await dumpDatabase(admin)).toBe(before);
      } finally {
        await admin.destroy();
      }
    });

    it('reads what the service reads', async () => {
      const [counts] = await queryAt<Record<string, number>>(
        db.readerUrl,
        `SELECT (SELECT count(*) FROM price_record)::int AS records, (SELECT count(*) FROM price_change)::int AS changes,
                (SELECT count(*) FROM product_availability)::int AS availability,
                (SELECT count(*) FROM price_book_version)::int AS versions, (SELECT count(*) FROM price_book_clock)::int AS clocks,
                (SELECT count(*) FROM migrations)::int > 0 AS migrated`,
      );
      // Changes: the first migration's availability (two) and the book's price.
      expect(counts).toEqual({ records: 1, changes: 3, availability: 2, versions: 1, clocks: 1, migrated: true });
    });

    it('and the CLI run as it refuses to write, saying why, with nothing written', async () => {
      const admin = await openDataSource(db.adminUrl, { logging: false });
      try {
        const before = await dumpDatabase(admin);
        const book = await bookFile('reader.json', { prices: [gp1('0.0999', '2099-01-01T00:00:00Z')] });
        const refused = await runCli(['import', book, '--actor', 'mallory'], {
          DATABASE_URL: db.readerUrl,
          DATABASE_ROLE_PREFIX: db.prefix,
        });
        expect(refused.code).toBe(7); // a configuration to correct: DATABASE_URL's role only reads
        expect(refused.stderr).toMatch(
          /nothing was written.*may not write the price book.*pricing_publication_instant.*pricing_writer/s,
        );
        expect(await dumpDatabase(admin)).toBe(before);
      } finally {
        await admin.destroy();
      }
    });
  });

  it('runs every command of the CLI as the writer: import, --dry-run --plan-out, apply, withdraw, export, history, changes, show', async () => {
    // A scheduled change (it ends the price in force) and availability.
    const next = await bookFile('next.json', {
      prices: [gp1('0.0500', '2099-01-01T00:00:00Z')],
      products: [{ product_key: 'storage.io1', on_sale: true }],
    });
    const plan = join(dir.path, 'plan.json');
    ok(await runCli(['import', '--dry-run', '--plan-out', plan, next], db.env));
    ok(await runCli(['apply', plan, next, '--actor', 'bea', '--reason', 'reviewed'], db.env));
    ok(await runCli(['withdraw', 'storage.gp1', '--valid-from', '2099-01-01T00:00:00Z', '--actor', 'bea'], db.env));
    // The commands that only read need no migration role, and run as a reader as well.
    for (const url of [db.runtimeUrl, db.readerUrl]) {
      const only = { DATABASE_URL: url };
      const exported = await runCli(['export'], only);
      ok(exported);
      // Withdrawn: the scheduled price is gone and the price in force has no end again.
      expect(exported.stdout).toContain('"amount": "0.0480"');
      expect(exported.stdout).not.toContain('"amount": "0.0500"');
      const history = await runCli(['history', 'storage.gp1'], only);
      ok(history);
      expect(history.stdout).toContain('0.0480');
      const changes = await runCli(['changes'], only);
      ok(changes);
      expect(changes.stdout).toContain('withdraw_price');
      const shown = await runCli(['show'], only);
      expect({ code: shown.code, stderr: shown.stderr }).toEqual({
        code: 0,
        stderr: 'not on sale (ordering them fails with PRODUCT_UNAVAILABLE): storage.st1\n',
      });
      expect(shown.stdout).toContain('"storage_volume"');
    }
    // The writer without the owner's URL: a write on a current schema migrates nothing, and needs nothing more.
    const again = await bookFile('again.json', { prices: [gp1('0.0480', '2026-01-01T00:00:00Z')] });
    ok(await runCli(['import', again, '--actor', 'bea'], { DATABASE_URL: db.runtimeUrl }));
    // The record count, kept by a trigger that runs as the owner, followed every write.
    const [{ counted, kept }] = await queryAt<{ counted: number; kept: number }>(
      db.adminUrl,
      `SELECT (SELECT count(*) FROM price_record)::int AS counted, record_count::int AS kept FROM price_book_version`,
    );
    expect(kept).toBe(counted);
    expect(counted).toBe(1);
  }, 60_000);

  describe('the service as a member of pricing_reader and volumes_writer, without DATABASE_MIGRATION_URL', () => {
    const logger = new RecordingLogger();
    let test: TestApp;

    beforeAll(async () => {
      test = await startTestApp({
        databaseUrl: db.readerUrl,
        env: { API_TOKENS: TOKEN, DATABASE_ROLE_PREFIX: db.prefix },
        listen: true,
        logger,
      });
    }, 30_000);
    afterAll(async () => {
      await test?.close();
    });

    it('starts on the current schema, migrating nothing, and serves the list, readiness and the volumes routes', async () => {
      expect(await test.app.get(DataSource).query(`SELECT current_user AS user`)).toEqual([{ user: db.reader }]);
      expect(logger.lines.filter((line) => /migrat/i.test(line.message))).toEqual([]);
      const list = await request(test.server).get('/v1/pricing').expect(200);
      expect(list.text).toContain('"storage.gp1"');
      const ready = await request(test.server).get('/health/ready').expect(200);
      expect(ready.body).toMatchObject({ status: 'ready', database: { reachable: true, migrated: true } });
      const created = await request(test.server)
        .post('/v1/volumes')
        .set('Authorization', `Bearer ${TOKEN}`)
        .send({ name: 'data-1', size_gib: 10, storage_class: 'gp1' })
        .expect(201);
      await request(test.server)
        .get(`/v1/volumes/${(created.body as { id: string }).id}`)
        .set('Authorization', `Bearer ${TOKEN}`)
        .expect(200);
    });

    it('serves what the writer writes (LISTEN, the version check)', async () => {
      const book = await bookFile('listened.json', {
        prices: [gp1('0.0480'), { ...gp1('0.0100'), product_key: 'storage.snapshot' }],
      });
      ok(await runCli(['import', book, '--actor', 'ana'], db.env));
      await waitFor(
        'the new price to be served',
        async () => (await request(test.server).get('/v1/pricing')).text,
        (text) => text.includes('"storage.snapshot"'),
        10_000,
        100,
      );
    }, 30_000);

    it('PriceBookService in it fails with PRICE_BOOK_WRITE_DENIED, and nothing is written', async () => {
      const admin = await openDataSource(db.adminUrl, { logging: false });
      try {
        const before = await dumpDatabase(admin);
        const priceBook = test.app.get(PriceBookService);
        const parsed = parsePriceBook({ prices: [gp1('0.0777', '2099-01-01T00:00:00Z')] });
        if ('errors' in parsed) throw new Error(parsed.errors.join('\n'));
        const refused = await priceBook.applyBook(parsed.book, { actor: 'mallory' }).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(PriceBookWriteDeniedError);
        expect(refused).toMatchObject({ code: 'PRICE_BOOK_WRITE_DENIED' });
        expect((refused as Error).message).toMatch(/^refused, nothing was written: .*may not write the price book/);
        const withdrawn = await priceBook
          .withdraw(
            { productKey: 'storage.gp1', organizationId: null, validFrom: Date.parse('2099-01-01T00:00:00Z') },
            { actor: 'mallory' },
          )
          .catch((error: unknown) => error);
        expect(withdrawn).toBeInstanceOf(PriceBookWriteDeniedError);
        expect(await dumpDatabase(admin)).toBe(before);
      } finally {
        await admin.destroy();
      }
    });
  });

  it('serves as the reader with DATABASE_MIGRATION_URL too, migrating as the owner at start', async () => {
    const test = await startTestApp({ databaseUrl: db.readerUrl, env: { ...db.env, API_TOKENS: TOKEN } });
    try {
      const list = await request(test.server).get('/v1/pricing').expect(200);
      expect(list.text).toContain('"storage.gp1"');
      expect(await test.app.get(DataSource).query(`SELECT current_user AS user`)).toEqual([{ user: db.reader }]);
    } finally {
      await test.close();
    }
  }, 30_000);

  it('grants again, at the next migration run, what was taken from a group role, and revokes what was given by hand', async () => {
    await queryAt(db.adminUrl, `REVOKE INSERT ON price_change FROM ${db.groups.writer}`);
    await queryAt(db.adminUrl, `GRANT TRUNCATE, UPDATE ON price_record TO ${db.groups.writer}`);
    await queryAt(db.adminUrl, `GRANT INSERT ON price_change TO ${db.groups.reader}`);
    await queryAt(db.adminUrl, `GRANT INSERT, UPDATE (amount) ON price_record TO ${db.reader}, PUBLIC`);
    await queryAt(db.adminUrl, `GRANT UPDATE ON migrations TO ${db.runtime}`);
    await queryAt(db.adminUrl, `GRANT EXECUTE ON FUNCTION pricing_publication_instant(interval, interval) TO PUBLIC`);
    expect((await privilegesOf(db.adminUrl, db.groups.writer)).price_change).toBe('SELECT');
    expect((await privilegesOf(db.adminUrl, db.reader)).price_record).toBe('INSERT; UPDATE(amount)');
    ok(await runCli(['migrate'], deployStep(db)));
    const [writer, reader] = [
      await privilegesOf(db.adminUrl, db.groups.writer),
      await privilegesOf(db.adminUrl, db.groups.reader),
    ];
    expect({ price_change: writer.price_change, price_record: writer.price_record }).toEqual({
      price_change: 'INSERT,SELECT',
      price_record: 'DELETE,INSERT,SELECT; UPDATE(superseded_by,valid_until)',
    });
    expect(reader.price_change).toBe('SELECT');
    expect(await privilegesOf(db.adminUrl, db.reader)).toEqual(NOTHING);
    expect(await privilegesOf(db.adminUrl, db.runtime)).toEqual(NOTHING);
    const [{ publicGrants, executes }] = await queryAt<{ publicGrants: number; executes: boolean }>(
      db.adminUrl,
      `SELECT (SELECT count(*) FROM pg_class, aclexplode(relacl) a WHERE relnamespace = 'public'::regnamespace
                 AND a.grantee = 0)::int
              + (SELECT count(*) FROM pg_attribute, aclexplode(attacl) a WHERE attrelid = 'price_record'::regclass
                   AND a.grantee = 0)::int AS "publicGrants",
              has_function_privilege('${db.reader}', 'pricing_publication_instant(interval, interval)', 'EXECUTE') AS executes`,
    );
    expect({ publicGrants, executes }).toEqual({ publicGrants: 0, executes: false });
  }, 30_000);

  it('says so when DATABASE_MIGRATION_URL connects as DATABASE_URL’s role itself', async () => {
    // In a process of its own: its log lines go to its stderr (in this one, to the first run's).
    const same = await spawnCli(['migrate'], {
      DATABASE_URL: `${db.ownerUrl}?application_name=the-service`,
      DATABASE_MIGRATION_URL: db.ownerUrl,
      DATABASE_ROLE_PREFIX: db.prefix,
    });
    expect(same.code).toBe(0);
    expect(same.stderr).toContain(`DATABASE_MIGRATION_URL connects as the runtime role ${db.owner} itself`);
  }, 30_000);

  it('refuses a DATABASE_MIGRATION_URL whose role does not own the schema, before anything changes', async () => {
    const admin = await openDataSource(db.adminUrl, { logging: false });
    try {
      const before = await dumpDatabase(admin);
      const refused = await runCli(['migrate'], {
        DATABASE_MIGRATION_URL: db.runtimeUrl,
        DATABASE_ROLE_PREFIX: db.prefix,
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `DATABASE_MIGRATION_URL's role ${db.runtime} does not own the schema (${db.owner})`,
      );
      expect(await dumpDatabase(admin)).toBe(before);
    } finally {
      await admin.destroy();
    }
  }, 30_000);

  it('migrates nothing while DATABASE_URL’s role belongs to no group role (it would be left nothing), naming the GRANT', async () => {
    const loner = `pricing_loner_${db.prefix.slice(1, -1)}`;
    await queryAt(db.adminUrl, `CREATE ROLE ${loner} LOGIN PASSWORD 'loner-secret'`);
    await queryAt(db.adminUrl, `GRANT CONNECT ON DATABASE ${db.name} TO ${loner}`);
    try {
      const refused = await runCli(['migrate'], {
        ...db.env,
        DATABASE_URL: asRole(db.runtimeUrl, loner, 'loner-secret'),
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `the runtime role ${loner} (DATABASE_URL) is a member of none of the group roles ${db.groups.reader}, ` +
          `${db.groups.writer}, ${db.groups.volumes}`,
      );
      expect(refused.stderr).toContain(`GRANT ${db.groups.reader} TO ${loner}`);
    } finally {
      await queryAt(db.adminUrl, `REVOKE ALL ON DATABASE ${db.name} FROM ${loner}`);
      await queryAt(db.adminUrl, `DROP ROLE ${loner}`);
    }
  }, 30_000);
});

describe('group roles that do not exist', () => {
  const dbs: TwoRoleDatabase[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  const tablesOf = async (db: TwoRoleDatabase): Promise<number> =>
    (
      await queryAt<{ n: number }>(db.adminUrl, `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)
    )[0].n;

  it('stop a migration run whose owner may not create them, naming the SQL a DBA runs once; it goes on once they exist', async () => {
    const db = await createTwoRoleDatabase({ withoutGroups: true });
    dbs.push(db);
    const refused = await runCli(['migrate'], deployStep(db));
    expect(refused.code).toBe(7); // the database's roles are not set up: a configuration (docs/price-book-cli.md)
    expect(refused.stderr).toContain(
      `the group roles ${db.groups.reader}, ${db.groups.writer}, ${db.groups.volumes} do not exist, and the migration ` +
        `role ${db.owner} may not create roles (no CREATEROLE): nothing was migrated; as a superuser or a role with ` +
        `CREATEROLE, run once: CREATE ROLE ${db.groups.reader} NOLOGIN; CREATE ROLE ${db.groups.writer} NOLOGIN; ` +
        `CREATE ROLE ${db.groups.volumes} NOLOGIN; then migrate again`,
    );
    expect(await tablesOf(db)).toBe(0);
    await createGroups(adminUrl(), db); // what the docs tell a DBA to run, with the memberships
    ok(await runCli(['migrate'], deployStep(db)));
    const shown = await runCli(['show'], { DATABASE_URL: db.readerUrl });
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({
      code: 0,
      stderr: 'not on sale (ordering them fails with PRODUCT_UNAVAILABLE): storage.io1, storage.st1\n',
    });
  }, 60_000);

  it('are made by a migration run whose owner may create roles (NOLOGIN), and granted', async () => {
    const db = await createTwoRoleDatabase({ withoutGroups: true, ownerCreatesRoles: true });
    dbs.push(db);
    const migrated = await spawnCli(['migrate'], deployStep(db));
    expect(migrated.code).toBe(0);
    for (const group of Object.values(db.groups))
      expect(migrated.stderr).toContain(`made the group role ${group} (NOLOGIN)`);
    const made = await queryAt<{ rolname: string; rolcanlogin: boolean }>(
      db.adminUrl,
      `SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname LIKE '${db.prefix}%' ORDER BY 1`,
    );
    expect(made).toEqual(
      Object.values(db.groups)
        .sort()
        .map((rolname) => ({ rolname, rolcanlogin: false })),
    );
    expect((await privilegesOf(db.adminUrl, db.groups.reader)).price_record).toBe('SELECT');
  }, 60_000);
});

describe('a service whose role may not migrate, on a schema behind its code', () => {
  let db: TwoRoleDatabase;
  let test: TestApp | undefined;
  const logger = new RecordingLogger();
  const LAST = 'VolumesGroupRole1764000013100';

  beforeAll(async () => {
    db = await createTwoRoleDatabase();
    // The schema as the previous version migrated it: every migration but the last.
    const options = { ...appDatabaseOptions(db.runtimeUrl, 5, 60, db.prefix), migrationUrl: db.ownerUrl };
    const previous = {
      ...options,
      migrations: (options.migrations as (new () => MigrationInterface)[]).filter((m) => m.name !== LAST),
      roleGrants: options.roleGrants!.filter((grant) => grant.function !== 'volumes_grant_roles'),
    };
    const dataSource = new DataSource({ ...dataSourceOptions(previous), logging: false });
    await dataSource.initialize();
    try {
      await migrateDatabase(dataSource, previous);
    } finally {
      await dataSource.destroy();
    }
  }, 60_000);
  afterAll(async () => {
    await test?.close();
    await db?.drop();
  });

  it('says so once in its logs and in readiness (503, the pending migrations, the command), and is ready once a deploy step migrated', async () => {
    test = await startTestApp({
      databaseUrl: db.readerUrl,
      env: { DATABASE_ROLE_PREFIX: db.prefix },
      listen: true,
      waitUntilReady: false,
      logger,
    });
    const connection = test.app.get(DatabaseConnection);
    expect(await settledState(connection)).toBe('behind');
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // past the next check
    expect(logger.of('error', 'DatabaseConnection')).toEqual([
      `the database lacks migrations this code needs (${LAST}), and the role ${db.reader} may not run them (the ` +
        `schema's owner is ${db.owner}): run \`npm run migrate\` with DATABASE_MIGRATION_URL, the owner's URL, as a ` +
        'deploy step; not ready until then (checked every 2 s)',
    ]);
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([]);
    const ready = await request(test.server).get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      status: 'unavailable',
      database: {
        migrated: false,
        pending_migrations: [LAST],
        migrate: expect.stringContaining('npm run migrate') as unknown,
      },
    });
    await request(test.server).get('/v1/pricing').expect(503);
    // It tried nothing: the migration it lacks is still not applied.
    const [{ n }] = await queryAt<{ n: number }>(
      db.adminUrl,
      `SELECT count(*)::int AS n FROM migrations WHERE name = '${LAST}'`,
    );
    expect(n).toBe(0);

    // The deploy step, by another process (runCli would take this process's logger over); the
    // instance sees it without a restart.
    expect((await spawnCli(['migrate'], deployStep(db))).code).toBe(0);
    await connection.whenReady(10_000);
    await test.app.get(PricingService).whenReady(10_000);
    const after = await request(test.server).get('/health/ready').expect(200);
    expect((after.body as { database: Record<string, unknown> }).database).toEqual({
      reachable: true,
      migrated: true,
    });
    expect(logger.of('log', 'DatabaseConnection')).toContain('the schema has its migrations now: ready');
    expect(logger.of('error', 'DatabaseConnection')).toHaveLength(1);
  }, 60_000);
});

describe('one role for everything (no DATABASE_MIGRATION_URL), as in development', () => {
  let single: Awaited<ReturnType<typeof newDatabase>> | undefined;
  let module: TestingModule | undefined;
  let holder: Client | undefined;
  afterAll(async () => {
    await module?.close();
    await holder?.end();
    await single?.drop();
  });

  it('on a current schema, migrates nothing: it does not even wait for the migration lock', async () => {
    single = await newDatabase(true);
    // Another instance's migration, holding the lock for longer than this one's limit (1 s).
    holder = new Client({ connectionString: single.url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const logger = new RecordingLogger();
    module = await startDatabaseModule(appDatabaseOptions(single.url, 1, 1), [], logger);
    const connection = module.get(DatabaseConnection);
    await connection.whenReady(3_000);
    expect(logger.lines.filter((line) => line.level !== 'log' && line.level !== 'debug')).toEqual([]);
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
    module = await startDatabaseModule(
      { ...appDatabaseOptions(db.runtimeUrl, 1, 1, db.prefix), migrationUrl },
      extra,
      logger,
    );
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

  it('warns once at start while DATABASE_URL’s role owns the schema (and migrates it), saying how to fix it', async () => {
    const lines = await productionStart({ DATABASE_URL: single.url });
    const warnings = lines.filter((line) => line.msg.includes('owns the pricing schema'));
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: expect.stringMatching(
          /^the service's own role \(DATABASE_URL\) owns the pricing schema and migrates it, so it could .*rewrite the change log.*run the service as a member of pricing_reader.*DATABASE_MIGRATION_URL as a deploy step/,
        ),
      }),
    ]);
  }, 60_000);

  it('says nothing of it as the reader, without DATABASE_MIGRATION_URL (the deploy step migrated)', async () => {
    expect((await runCli(['migrate'], deployStep(two))).code).toBe(0);
    const lines = await productionStart({ DATABASE_URL: two.readerUrl });
    expect(lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
  }, 60_000);

  it('says nothing of it with DATABASE_MIGRATION_URL, and runs on the reader', async () => {
    const lines = await productionStart({ ...two.env, DATABASE_URL: two.readerUrl });
    expect(lines.filter((line) => line.msg.includes('owns the pricing schema'))).toEqual([]);
    expect(lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
    const [{ owner }] = await queryAt<{ owner: string }>(
      two.adminUrl,
      `SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(owner).toBe(two.owner);
  }, 60_000);
});
