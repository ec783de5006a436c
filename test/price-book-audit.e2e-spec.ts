import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, lstat, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PriceBookService, PricingErrorCode } from '@app/pricing';
import { parsePriceBook, PriceBookCliModule, type PriceBook, type WriteOptions } from '@app/pricing/cli';
import { Client } from 'pg';
import { CLI, REGISTER, runCommand, type CliResult } from './support/cli';
import { dumpDatabase } from './support/database';
import { price, useCliDatabase, versionOf } from './support/price-book-cli';

// Who changed a price, and why (docs/price-book-cli.md, "Who and why", "Reviewed plans" and
// "changes"), through the CLI against a database of its own: actors and reasons on every
// write, a change log the database keeps append-only, and plans applied exactly as reviewed.

const test = useCliDatabase();
const { cli, bookFile, expectRefused } = test;
let fileCount = 0;

function planPath(): string {
  return join(test.dir, `plan-${++fileCount}.json`);
}

interface ChangeRow {
  change: string;
  product_key: string | null;
  actor: string | null;
  reason: string | null;
}

/** The change-log rows written after `afterId`, oldest first, with the key they concern. */
async function changesAfter(afterId: string): Promise<ChangeRow[]> {
  return test.dataSource.query(
    `SELECT c.change, coalesce(r.product_key, c.product_key) AS product_key, c.actor, c.reason
       FROM price_change c LEFT JOIN price_record r ON r.id = c.price_record_id
      WHERE c.id > $1 ORDER BY c.id`,
    [afterId],
  );
}

async function lastChangeId(): Promise<string> {
  const rows: { id: string | null }[] = await test.dataSource.query(`SELECT max(id)::text AS id FROM price_change`);
  return rows[0].id ?? '0';
}

function expectOk(result: CliResult): void {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
}

describe('actor and reason on every write', () => {
  it('import records --actor and --reason on each of its change-log rows', async () => {
    const since = await lastChangeId();
    const file = await bookFile({
      products: [{ product_key: 'storage.st1', on_sale: true }],
      prices: [price('compute.a1.1', '0.0100'), price('compute.a1.2', '0.0200')],
    });
    expectOk(await cli('import', file, '--actor', 'ana@example.com', '--reason', 'Q3 list: "a1" family'));
    expect(await changesAfter(since)).toEqual([
      { change: 'set', product_key: 'compute.a1.1', actor: 'ana@example.com', reason: 'Q3 list: "a1" family' },
      { change: 'set', product_key: 'compute.a1.2', actor: 'ana@example.com', reason: 'Q3 list: "a1" family' },
      { change: 'availability', product_key: 'storage.st1', actor: 'ana@example.com', reason: 'Q3 list: "a1" family' },
    ]);
  });

  it('takes PRICING_ACTOR without --actor, --actor over it, and the user name without either; no reason is null', async () => {
    const runs: [Record<string, string>, string[], string][] = [
      [{ PRICING_ACTOR: 'deploy-bot' }, [], 'deploy-bot'],
      [{ PRICING_ACTOR: 'deploy-bot' }, ['--actor', 'bea'], 'bea'],
      [{ PRICING_ACTOR: '' }, [], userInfo().username],
      [{}, [], userInfo().username],
    ];
    for (const [index, [env, flags, actor]] of runs.entries()) {
      const since = await lastChangeId();
      const file = await bookFile({ prices: [price('compute.a2.1', `0.0${index + 1}00`)] });
      expectOk(await cli('import', file, ...flags, env));
      expect(await changesAfter(since)).toEqual([
        expect.objectContaining({ change: 'set', actor, reason: null }),
        ...(index === 0 ? [] : [expect.objectContaining({ change: 'end', actor, reason: null })]),
      ]);
    }
  });

  it('withdraw records its actor and reason', async () => {
    const at = new Date(Date.now() + 30 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
    expectOk(await cli('import', await bookFile({ prices: [price('compute.a3.1', '0.5000', { valid_from: at })] })));
    const since = await lastChangeId();
    const result = await cli('withdraw', 'compute.a3.1', '--valid-from', at, '--reason', 'entered by mistake', {
      PRICING_ACTOR: 'carla',
    });
    expectOk(result);
    expect(await changesAfter(since)).toEqual([
      { change: 'withdraw_price', product_key: 'compute.a3.1', actor: 'carla', reason: 'entered by mistake' },
    ]);
  });

  it.each<[string, string[], Record<string, string>, string]>([
    ['an actor with a space', ['--actor', 'Ana Lima'], {}, '--actor "Ana Lima": an actor is 1 to 100'],
    ['an empty --actor', ['--actor', ''], {}, '--actor "": an actor is 1 to 100'],
    ['an actor of 101 characters', ['--actor', 'a'.repeat(101)], {}, `--actor "${'a'.repeat(80)}…`],
    ['a PRICING_ACTOR with a space', [], { PRICING_ACTOR: 'ops team' }, 'PRICING_ACTOR "ops team": an actor is'],
    ['a reason of two lines', ['--reason', 'one\ntwo'], {}, '--reason "one\\ntwo": '],
    ['a reason of 501 characters', ['--reason', 'r'.repeat(501)], {}, '--reason "'],
    ['a blank reason', ['--reason', '   '], {}, '--reason "   ": '],
  ])('refuses %s on import, withdraw and apply: exit 64, nothing written', async (_what, flags, env, message) => {
    const file = await bookFile({ prices: [price('compute.a4.1', '0.9000')] });
    const result = await expectRefused(['import', file, ...flags], message, { code: 64, env });
    expect(result.stderr).toContain("Run 'npm run -s pricing -- import --help' for its options and examples.");
    await expectRefused(['withdraw', 'compute.a4.1', '--valid-from', '2030-01-01T00:00:00Z', ...flags], message, {
      code: 64,
      env,
    });
    // apply too, with a plan it would otherwise apply.
    const plan = planPath();
    expectOk(await cli('import', '--dry-run', '--plan-out', plan, file));
    await expectRefused(['apply', plan, file, ...flags], message, { code: 64, env });
  });

  it('takes a reason of exactly 500 characters, any script', async () => {
    const reason = 'é'.repeat(250) + '价'.repeat(250);
    const since = await lastChangeId();
    expectOk(await cli('import', await bookFile({ prices: [price('compute.a5.1', '0.1')] }), '--reason', reason));
    expect(await changesAfter(since)).toEqual([expect.objectContaining({ reason })]);
  });
});

describe('PriceBookService: who and why, from code', () => {
  // docs/using-pricing.md, "PriceBookService": every write takes { actor?, reason? }.
  let context: INestApplicationContext;
  beforeAll(async () => {
    const module = PriceBookCliModule.on(test.dataSource);
    context = await NestFactory.createApplicationContext(module, { abortOnError: false });
  });
  afterAll(() => context.close());
  const service = (): PriceBookService => context.get(PriceBookService);
  const inAMonth = (): Date => new Date(Math.ceil(Date.now() / 1000) * 1000 + 30 * 86_400_000);
  const checked = (book: unknown): PriceBook => {
    const parsed = parsePriceBook(book);
    if ('errors' in parsed) throw new Error(parsed.errors.join('\n'));
    return parsed.book;
  };

  it('records the actor and reason of apply, applyBook and withdraw; history shows them', async () => {
    const at = inAMonth();
    await service().apply(
      { prices: [price('compute.s1.1', '0.1000')] },
      { actor: 'billing-sync', reason: 'sync "s1"' },
    );
    const scheduled = checked({ prices: [price('compute.s1.1', '0.2000', { valid_from: at.toISOString() })] });
    await service().applyBook(scheduled, { actor: 'billing-sync', reason: 'scheduled rise' });
    await service().withdraw(
      { productKey: 'compute.s1.1', organizationId: null, validFrom: at.getTime() },
      { actor: 'ops@example.com', reason: 'rise dropped' },
    );
    const history = await cli('history', 'compute.s1.1', '--json');
    expectOk(history);
    const authored = (change: string, actor: string, reason: string): unknown =>
      expect.objectContaining({ change, actor, reason });
    expect(JSON.parse(history.stdout).changes).toEqual([
      authored('set', 'billing-sync', 'sync "s1"'),
      authored('set', 'billing-sync', 'scheduled rise'),
      authored('end', 'billing-sync', 'scheduled rise'),
      authored('withdraw_price', 'ops@example.com', 'rise dropped'),
    ]);
    const text = await cli('history', 'compute.s1.1');
    expect(text.stdout.split('\n').filter((line) => / {2}set {2}/.test(line))).toEqual([
      expect.stringMatching(/ {2}billing-sync {2}"sync \\"s1\\""$/),
      expect.stringMatching(/ {2}billing-sync {2}"scheduled rise"$/),
    ]);
  });

  it('records the user name of the process when no actor is given, and no reason', async () => {
    const since = await lastChangeId();
    const at = inAMonth();
    await service().apply({ prices: [price('compute.s2.1', '0.1000', { valid_from: at.toISOString() })] });
    await service().withdraw({ productKey: 'compute.s2.1', organizationId: null, validFrom: at.getTime() });
    expect(await changesAfter(since)).toEqual([
      { change: 'set', product_key: 'compute.s2.1', actor: userInfo().username, reason: null },
      { change: 'withdraw_price', product_key: 'compute.s2.1', actor: userInfo().username, reason: null },
    ]);
  });

  describe('refuses a bad actor or reason with PRICE_BOOK_REFUSED, nothing written', () => {
    const at = inAMonth();
    beforeAll(async () => {
      // Something each write would change, were its author right: a scheduled price to withdraw.
      await service().apply({ prices: [price('compute.s3.1', '0.1000', { valid_from: at.toISOString() })] });
    });
    const book = { prices: [price('compute.s3.2', '0.1000')] };
    const writes: [string, (options: WriteOptions) => Promise<unknown>][] = [
      ['apply', (options) => service().apply(book, options)],
      ['apply --dry-run', (options) => service().apply(book, { ...options, dryRun: true })],
      ['applyBook', (options) => service().applyBook(checked(book), options)],
      // The database has prices: this writes nothing whatever the author, and still refuses a bad one.
      ['applyIfEmpty', (options) => service().applyIfEmpty(book, options)],
      [
        'withdraw',
        (options) =>
          service().withdraw({ productKey: 'compute.s3.1', organizationId: null, validFrom: at.getTime() }, options),
      ],
    ];
    const actor = 'author: an actor is 1 to 100 letters, digits or ". _ @ + -" (a user name or an e-mail address)';
    const authors: [string, WriteOptions, string[]][] = [
      ['an actor with a space', { actor: 'Ana Lima' }, [actor]],
      ['an empty actor', { actor: '' }, [actor]],
      [
        'a reason of 501 characters',
        { actor: 'ana', reason: 'r'.repeat(501) },
        ['author: a reason has at most 500 characters'],
      ],
      ['a blank reason', { reason: '   ' }, ['author: a reason, when given, is not empty']],
      [
        'both',
        { actor: 'Ana Lima', reason: 'a\u202eb' },
        [actor, 'author: a reason is one line of printable characters'],
      ],
    ];
    it.each(
      writes.flatMap(([write, run]) =>
        authors.map(([what, options, problems]) => [write, what, run, options, problems] as const),
      ),
    )('%s: %s', async (_write, _what, run, options, problems) => {
      const before = await dumpDatabase(test.dataSource);
      await expect(run(options)).rejects.toMatchObject({ code: PricingErrorCode.PriceBookRefused, problems });
      expect(await dumpDatabase(test.dataSource)).toBe(before);
    });
  });
});

describe('the change log is append-only', () => {
  // The tests' DataSource is a superuser's; the app's role is an ordinary one with every
  // privilege on the table: the trigger refuses both.
  const role = `pricing_app_${randomBytes(4).toString('hex')}`;
  let app: Client;
  beforeAll(async () => {
    expectOk(await cli('import', await bookFile({ prices: [price('compute.z0.1', '0.1')] })));
    await test.dataSource.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app'`);
    await test.dataSource.query(`GRANT ALL ON price_change TO ${role}`);
    const url = new URL(test.url);
    url.username = role;
    url.password = 'app';
    app = new Client({ connectionString: url.toString() });
    await app.connect();
  });
  afterAll(async () => {
    await app?.end();
    await test.dataSource.query(`DROP OWNED BY ${role}`);
    await test.dataSource.query(`DROP ROLE ${role}`);
  });

  it.each([
    ['UPDATE', `UPDATE price_change SET actor = 'mallory'`, 'UPDATE'],
    [
      'UPDATE of one row',
      `UPDATE price_change SET reason = 'x' WHERE id = (SELECT max(id) FROM price_change)`,
      'UPDATE',
    ],
    ['DELETE', `DELETE FROM price_change`, 'DELETE'],
    ['DELETE of one row', `DELETE FROM price_change WHERE id = (SELECT max(id) FROM price_change)`, 'DELETE'],
    ['TRUNCATE', `TRUNCATE price_change`, 'TRUNCATE'],
    ['TRUNCATE ... CASCADE', `TRUNCATE price_change CASCADE`, 'TRUNCATE'],
  ])('refuses %s by the app role and a superuser alike, and nothing changes', async (_what, sql, verb) => {
    const rows: { n: number }[] = await test.dataSource.query(`SELECT count(*)::int AS n FROM price_change`);
    expect(rows[0].n).toBeGreaterThan(0);
    const before = await dumpDatabase(test.dataSource);
    const refusal = `the change log is append-only: ${verb} of price_change is refused`;
    await expect(app.query(sql)).rejects.toThrow(refusal);
    await expect(test.dataSource.query(sql)).rejects.toThrow(refusal);
    expect(await dumpDatabase(test.dataSource)).toBe(before);
  });

  it('refuses them in replica mode too, which skips ordinary triggers (a superuser may set it)', async () => {
    const before = await dumpDatabase(test.dataSource);
    await test.dataSource.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await expect(tx.query(`DELETE FROM price_change`)).rejects.toThrow(
        'the change log is append-only: DELETE of price_change is refused',
      );
    });
    await test.dataSource.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await expect(tx.query(`TRUNCATE price_change`)).rejects.toThrow(
        'the change log is append-only: TRUNCATE of price_change is refused',
      );
    });
    expect(await dumpDatabase(test.dataSource)).toBe(before);
  });

  it('still takes new rows (the writes above went through)', async () => {
    await app.query(
      `INSERT INTO price_change (changed_at, product_key, change, actor, effect, hash)
       VALUES (now(), 'compute.z1.1', 'set', 'app', '{}', repeat('0', 64))`,
    );
  });
});

describe('reading the log', () => {
  let from: string;
  let to: string;
  beforeAll(async () => {
    // A quarter of changes to compute.g9.4: one before the window, two in it, one after.
    await cli('import', await bookFile({ prices: [price('compute.g9.4', '1.00')] }), '--actor', 'early');
    await new Promise((done) => setTimeout(done, 20));
    from = new Date().toISOString();
    expectOk(
      await cli('import', await bookFile({ prices: [price('compute.g9.4', '1.10')] }), '--reason', 'cost up 10%', {
        PRICING_ACTOR: 'ana@example.com',
      }),
    );
    expectOk(
      await cli(
        'import',
        await bookFile({ prices: [price('compute.g9.4', '0.80', { organization_id: 'org_9' })] }),
        '--actor',
        'bea',
        '--reason',
        'contract 2026-117',
      ),
    );
    await new Promise((done) => setTimeout(done, 20));
    to = new Date().toISOString();
    await new Promise((done) => setTimeout(done, 20));
    expectOk(await cli('import', await bookFile({ prices: [price('compute.g9.8', '2.00')] }), '--actor', 'late'));
  });

  it('history shows who made each change and why', async () => {
    const result = await cli('history', 'compute.g9.4');
    expectOk(result);
    const lines = result.stdout.split('\n');
    const changeLines = lines.slice(lines.indexOf('changes, oldest first:') + 1, -1);
    expect(changeLines.map((line) => line.trim().split(/ {2,}/).slice(1))).toEqual([
      ['set', expect.stringMatching(/^1\.00 per 3600 seconds from \S+Z$/), 'early'],
      ['set', expect.stringMatching(/^1\.10 per 3600 seconds from \S+Z$/), 'ana@example.com', '"cost up 10%"'],
      ['end set', expect.stringMatching(/^1\.00 per 3600 seconds from \S+Z$/), 'ana@example.com', '"cost up 10%"'],
    ]);
  });

  it('history --json has the records and the changes with actor and reason', async () => {
    const result = await cli('history', 'compute.g9.4', '--organization', 'org_9', '--json');
    expectOk(result);
    expect(JSON.parse(result.stdout)).toEqual({
      product_key: 'compute.g9.4',
      organization_id: 'org_9',
      on_sale: true,
      records: [
        {
          status: 'in-force',
          unit_type: 'seconds',
          unit_count: 3600,
          amount: '0.80',
          valid_from: expect.stringMatching(/Z$/),
          valid_until: null,
          recorded_at: expect.stringMatching(/Z$/),
        },
      ],
      changes: [
        {
          at: expect.stringMatching(/Z$/),
          change: 'set',
          actor: 'bea',
          reason: 'contract 2026-117',
          price: expect.objectContaining({ amount: '0.80' }),
          on_sale: null,
        },
      ],
    });
  });

  it('changes --since --until prints the window, oldest first, in columns awk can pick', async () => {
    const result = await cli('changes', '--since', from, '--until', to);
    expectOk(result);
    const lines = result.stdout.split('\n');
    expect(lines.pop()).toBe('');
    const row = (change: string, scope: string, price: RegExp, actor: string, reason: string): unknown[] => [
      expect.stringMatching(/^\S+Z$/),
      change,
      'compute.g9.4',
      scope,
      expect.stringMatching(price),
      actor,
      reason,
    ];
    expect(lines.map((line) => line.split(/ {2,}/))).toEqual([
      row('set', 'list', /^1\.10 per 3600 seconds from \S+Z$/, 'ana@example.com', '"cost up 10%"'),
      row('end', 'list', /^1\.00 per 3600 seconds from \S+Z until \S+Z$/, 'ana@example.com', '"cost up 10%"'),
      row('set', 'org:org_9', /^0\.80 per 3600 seconds from \S+Z$/, 'bea', '"contract 2026-117"'),
    ]);
    for (const line of lines) {
      const at = line.slice(0, 24);
      expect(at >= from && at < to).toBe(true);
    }
    // "Who changed compute.g2.4 last quarter, and why": one command (docs/price-book-cli.md).
    const awk = await runCommand(
      'sh',
      [
        '-c',
        `node --require "$REGISTER" "$CLI" changes --since "$FROM" --until "$TO" | awk '$3 == "compute.g9.4" && $4 == "list"'`,
      ],
      { REGISTER, CLI, FROM: from, TO: to, DATABASE_URL: test.url },
    );
    expect(awk).toEqual({
      code: 0,
      stdout: `${lines[0]}\n${lines[1]}\n`,
      stderr: expect.stringMatching(/^target .*\n$/),
    });
  });

  it('changes --json gives the same changes as JSON, and every change without a window', async () => {
    const json = await cli('changes', '--json', '--since', from, '--until', to);
    expectOk(json);
    const document = JSON.parse(json.stdout);
    expect(document).toEqual({
      since: expect.stringMatching(/Z$/),
      until: expect.stringMatching(/Z$/),
      product_key: null,
      limit: null,
      changes: [
        expect.objectContaining({
          change: 'set',
          product_key: 'compute.g9.4',
          organization_id: null,
          actor: 'ana@example.com',
          reason: 'cost up 10%',
        }),
        expect.objectContaining({
          change: 'end',
          product_key: 'compute.g9.4',
          organization_id: null,
          actor: 'ana@example.com',
        }),
        expect.objectContaining({
          change: 'set',
          product_key: 'compute.g9.4',
          organization_id: 'org_9',
          actor: 'bea',
          reason: 'contract 2026-117',
        }),
      ],
    });
    const all = await cli('changes');
    expectOk(all);
    const rows: { n: number }[] = await test.dataSource.query(`SELECT count(*)::int AS n FROM price_change`);
    expect(all.stdout.split('\n')).toHaveLength(rows[0].n + 1);
    const instants = all.stdout
      .split('\n')
      .slice(0, -1)
      .map((line) => line.slice(0, 24));
    expect([...instants].sort()).toEqual(instants);
  });

  it.each<[string, string[], string]>([
    [
      'a --since that is not a timestamp',
      ['changes', '--since', 'yesterday'],
      '--since "yesterday": not an RFC 3339 timestamp',
    ],
    [
      'a window that ends before it starts',
      ['changes', '--since', '2027-01-01T00:00:00Z', '--until', '2026-01-01T00:00:00Z'],
      '--since must be before --until',
    ],
    ['an argument', ['changes', 'compute.g9.4'], 'changes takes no arguments'],
    [
      '--plan-out without --dry-run',
      ['import', 'book.json', '--plan-out', 'plan.json'],
      '--plan-out is an option of import --dry-run',
    ],
    ['apply with one file', ['apply', 'plan.json'], 'apply takes a plan file and a book file'],
  ])('refuses %s with a usage error', async (_what, args, message) => {
    await expectRefused(args, message, { code: 64 });
  });
});

describe('reviewed plans', () => {
  const book = {
    products: [{ product_key: 'storage.io1', on_sale: true }],
    prices: [price('compute.p1.1', '0.3000'), price('compute.p1.2', '0.4000', { organization_id: 'org_p' })],
  };

  /** The plan of the book in `file`, written by a dry run; the database is as it was. */
  async function plan(file: string): Promise<{ path: string; result: CliResult }> {
    const path = planPath();
    const before = await dumpDatabase(test.dataSource);
    const result = await cli('import', '--dry-run', '--plan-out', path, file);
    expectOk(result);
    expect(await dumpDatabase(test.dataSource)).toBe(before);
    return { path, result };
  }

  it('plan, review, apply: the plan file says what will change, apply does exactly it, history says who and why', async () => {
    const file = await bookFile(book);
    const { path, result: dryRun } = await plan(file);
    expect(dryRun.stdout.split('\n').slice(-2)).toEqual([`plan saved to ${path}`, '']);
    const planFile = JSON.parse(await readFile(path, 'utf8'));
    const bytes = await readFile(file);
    expect(planFile).toEqual({
      format: 'pricing-plan/2',
      book_sha256: createHash('sha256').update(bytes).digest('hex'),
      planned_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      version: await versionOf(test.dataSource),
      changes: [
        { change: 'availability', product_key: 'storage.io1', on_sale: true },
        expect.objectContaining({
          change: 'new',
          product_key: 'compute.p1.1',
          organization_id: null,
          amount: '0.3000',
        }),
        expect.objectContaining({
          change: 'new',
          product_key: 'compute.p1.2',
          organization_id: 'org_p',
          amount: '0.4000',
        }),
      ],
    });

    const applied = await cli('apply', path, file, '--actor', 'dan', '--reason', 'reviewed in CHG-42');
    expectOk(applied);
    // What apply prints is what the dry run printed, but for the summary and the instant of the
    // run, where entries without valid_from start: the dry run says "when applied", as the plan does.
    const instants = (text: string) =>
      text.replaceAll(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|when applied/g, '<instant>');
    expect(dryRun.stdout).toContain('0.3000 per 3600 seconds from when applied\n');
    expect(instants(applied.stdout).split('\n').slice(0, -2)).toEqual(instants(dryRun.stdout).split('\n').slice(0, -3));
    expect(applied.stdout).toMatch(
      /\n\S+ at \S+Z: 2 prices set, 0 ended, 1 availability changes, 0 unchanged \(version \d+\)\n$/,
    );

    const history = await cli('history', 'compute.p1.1', '--json');
    expect(JSON.parse(history.stdout).changes).toEqual([
      expect.objectContaining({ change: 'set', actor: 'dan', reason: 'reviewed in CHG-42' }),
    ]);
    // Applied once: the same plan again is refused, the version having moved.
    await expectRefused(
      ['apply', path, file],
      /the price book moved since the plan: it was at version \d+, it is at version \d+ now/,
    );
  });

  it('apply --json prints what import --json prints', async () => {
    const from = new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const file = await bookFile({ prices: [price('compute.p2.1', '0.1000', { valid_from: from })] });
    const { path } = await plan(file);
    const dryRun = JSON.parse((await cli('import', '--dry-run', '--json', file)).stdout);
    const applied = await cli('apply', '--json', path, file);
    expectOk(applied);
    expect(JSON.parse(applied.stdout).changes).toEqual(dryRun.changes);
    expect(dryRun.changes).toEqual([expect.objectContaining({ change: 'new', valid_from: from })]);
  });

  it("starts an entry without valid_from at the apply instant, not at the plan's", async () => {
    const file = await bookFile({ prices: [price('compute.p5.1', '0.1000')] });
    const { path } = await plan(file);
    const plannedAt = Date.parse(JSON.parse(await readFile(path, 'utf8')).planned_at);
    // The instant is the database's clock when the lock was granted, rounded up to the
    // millisecond (docs/decisions.md, "The write instant"): within the apply call.
    const before = Date.now();
    const applied = await cli('apply', '--json', path, file);
    const after = Date.now();
    expectOk(applied);
    const instant = Date.parse(JSON.parse(applied.stdout).instant);
    expect(instant).toBeGreaterThan(plannedAt);
    expect(instant).toBeGreaterThanOrEqual(before);
    expect(instant).toBeLessThanOrEqual(after + 1);
    const history = JSON.parse((await cli('history', 'compute.p5.1', '--json')).stdout) as {
      records: { valid_from: string }[];
    };
    expect(history.records.map((record) => Date.parse(record.valid_from))).toEqual([instant]);
  });

  it('refuses a book whose bytes differ from the planned one: exit 1, nothing written', async () => {
    const file = await bookFile(book);
    const { path } = await plan(file);
    const edited = await bookFile(JSON.stringify(book, null, 2) + '\n');
    const result = await expectRefused(
      ['apply', path, edited],
      `${edited} is not the book ${path} was planned from: its SHA-256 is `,
    );
    expect(result.stderr).toContain('refused, nothing was written');
  });

  it('refuses a plan when the price book moved since it was made', async () => {
    const file = await bookFile({ prices: [price('compute.p3.1', '0.1000')] });
    const { path } = await plan(file);
    expectOk(await cli('import', await bookFile({ prices: [price('compute.p3.9', '9.0000')] })));
    await expectRefused(['apply', path, file], 'the price book moved since the plan');
  });

  it('refuses a plan whose changes are not what the book would do (an edited plan)', async () => {
    const file = await bookFile({ prices: [price('compute.p4.1', '0.1000')] });
    const { path } = await plan(file);
    const planFile = JSON.parse(await readFile(path, 'utf8'));
    planFile.changes[0].amount = '0.0100';
    await writeFile(path, JSON.stringify(planFile));
    await expectRefused(
      ['apply', path, file],
      /the changes the book would make now differ from the plan's, from change 1 on/,
    );
    planFile.changes = [];
    await writeFile(path, JSON.stringify(planFile));
    await expectRefused(['apply', path, file], /from change 1 on: the plan has 0 \(none\), the book would now make 1/);
  });

  it('writes a plan only to a new or regular file that is not the book: a link or the book itself is refused', async () => {
    const file = await bookFile(book);
    const link = join(test.dir, `link-${++fileCount}.json`);
    await symlink(file, link);
    await expectRefused(['import', '--dry-run', '--plan-out', link, file], `--plan-out "${link}": not a regular file`, {
      code: 64,
    });
    await expectRefused(['import', '--dry-run', '--plan-out', file, file], `--plan-out "${file}": that is the book`, {
      code: 64,
    });
    expect(await readFile(file, 'utf8')).toBe(JSON.stringify(book, null, 2));
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
  });

  it('says which prices start when the plan is applied: "at apply", not the dry run\'s instant', async () => {
    const from = new Date(Math.ceil(Date.now() / 1000) * 1000 + 86_400_000).toISOString().replace('.000Z', 'Z');
    const file = await bookFile({
      prices: [price('compute.p6.1', '0.1000'), price('compute.p6.2', '0.2000', { valid_from: from })],
    });
    const { path } = await plan(file);
    const planFile = JSON.parse(await readFile(path, 'utf8')) as { planned_at: string; changes: unknown[] };
    expect(planFile.changes).toEqual([
      expect.objectContaining({ product_key: 'compute.p6.1', valid_from: 'at apply', valid_until: null }),
      expect.objectContaining({ product_key: 'compute.p6.2', valid_from: from, valid_until: null }),
    ]);
    // The dry run's instant is the plan's planned_at, and nowhere else.
    expect(JSON.stringify(planFile.changes)).not.toContain(planFile.planned_at.slice(0, 19));
    expectOk(await cli('apply', path, file));
  });

  /** `json` with every string in `from` replaced by `to`, at any depth. */
  function replaced(json: unknown, from: readonly string[], to: string): unknown {
    if (typeof json === 'string') return from.includes(json) ? to : json;
    if (Array.isArray(json)) return json.map((item) => replaced(item, from, to));
    if (typeof json !== 'object' || json === null) return json;
    return Object.fromEntries(Object.entries(json).map(([key, value]) => [key, replaced(value, from, to)]));
  }

  /** The records of an organization's price, as history --json gives them. */
  async function records(key: string, organization: string): Promise<unknown[]> {
    const history = await cli('history', key, '--organization', organization, '--json');
    expectOk(history);
    return (JSON.parse(history.stdout) as { records: unknown[] }).records;
  }

  describe('a forged plan: an organization price made to read "from 2027-01-01"', () => {
    const FORGED = '2027-01-01T00:00:00Z';
    let file: string;
    let path: string;
    let honest: { planned_at: string; changes: unknown[] };
    beforeAll(async () => {
      file = await bookFile({ prices: [price('compute.f1.1', '0.2000', { organization_id: 'org_f' })] });
      ({ path } = await plan(file));
      honest = JSON.parse(await readFile(path, 'utf8'));
    });
    afterAll(async () => {
      // None of them was applied: the price was never set.
      expect(await records('compute.f1.1', 'org_f')).toEqual([]);
    });

    it("refuses planned_at and every copy of the dry run's instant moved: exit 1, nothing written", async () => {
      const instants = [honest.planned_at, honest.planned_at.replace(/\.000Z$/, 'Z')];
      await writeFile(path, JSON.stringify(replaced(honest, instants, FORGED), null, 2));
      const { stderr } = await expectRefused(
        ['apply', path, file, '--actor', 'mallory'],
        new RegExp(`the plan says it was made at ${FORGED}, later than this apply's instant \\S+Z`),
      );
      expect(stderr).toContain('plan again (import --dry-run --plan-out)');
    });

    it('refuses it with "at apply" moved too', async () => {
      const instants = [honest.planned_at, 'at apply'];
      await writeFile(path, JSON.stringify(replaced(honest, instants, FORGED), null, 2));
      await expectRefused(['apply', path, file], `the plan says it was made at ${FORGED}, later than`);
    });

    it('refuses it with "at apply" moved and planned_at left as it was', async () => {
      await writeFile(path, JSON.stringify(replaced(honest, ['at apply'], FORGED), null, 2));
      await expectRefused(
        ['apply', path, file],
        `change 1's valid_from is "${FORGED}" in the plan, "at apply" (the apply's instant: the book's entry has ` +
          `no valid_from) by the book; plan again`,
      );
    });
  });

  it('refuses a plan whose planned_at is later than the apply instant, naming both; applies it as it was made', async () => {
    // Every instant of the book is its own: planned_at is the only one edited.
    const from = new Date(Math.ceil(Date.now() / 1000) * 1000 + 86_400_000).toISOString().replace('.000Z', 'Z');
    const file = await bookFile({ prices: [price('compute.p7.1', '0.1000', { valid_from: from })] });
    const { path } = await plan(file);
    const honest = await readFile(path, 'utf8');
    const planFile = JSON.parse(honest);
    const later = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000).toISOString().replace('.000Z', 'Z');
    await writeFile(path, JSON.stringify({ ...planFile, planned_at: later }));
    await expectRefused(
      ['apply', path, file],
      new RegExp(`the plan says it was made at ${later}, later than this apply's instant \\d{4}-\\S+Z: `),
    );
    await writeFile(path, honest);
    expectOk(await cli('apply', path, file));
  });

  it.each<[string, Record<string, unknown>, (change: Record<string, unknown>, plannedAt: string) => void, string]>([
    [
      "the dry run's instant where the book has no valid_from",
      {},
      (change, plannedAt) => (change.valid_from = plannedAt),
      `change 1's valid_from is "<planned_at>" in the plan, "at apply" (the apply's instant`,
    ],
    [
      '"at apply" where the book has one',
      { valid_from: '2031-01-01T00:00:00Z' },
      (change) => (change.valid_from = 'at apply'),
      `change 1's valid_from is "at apply" (the apply's instant: the book's entry has no valid_from) in the plan, ` +
        `"2031-01-01T00:00:00Z" by the book`,
    ],
    [
      "an end a millisecond off the book's",
      { valid_from: '2031-01-01T00:00:00Z', valid_until: '2032-01-01T00:00:00Z' },
      (change) => (change.valid_until = '2032-01-01T00:00:00.001Z'),
      `change 1's valid_until is "2032-01-01T00:00:00.001Z" in the plan, "2032-01-01T00:00:00Z" by the book`,
    ],
    [
      '"at apply" for the end of a price that has none',
      {},
      (change) => (change.valid_until = 'at apply'),
      `change 1's valid_until is "at apply" (the apply's instant: the book's entry has no valid_from) in the plan, null`,
    ],
  ])("refuses an instant of an entry that is not the book's: %s", async (_what, fields, edit, message) => {
    const file = await bookFile({ prices: [price(`compute.p8.${++fileCount}`, '0.1000', fields)] });
    const { path } = await plan(file);
    const planFile = JSON.parse(await readFile(path, 'utf8'));
    edit(planFile.changes[0], planFile.planned_at);
    await writeFile(path, JSON.stringify(planFile, null, 2));
    const { stderr } = await expectRefused(['apply', path, file], message.replace('<planned_at>', planFile.planned_at));
    expect(stderr).toContain("the changes the book would make now differ from the plan's, from change 1 on");
  });

  describe('plan files are readable by their owner only', () => {
    const umask = process.umask();
    afterEach(() => process.umask(umask));
    const modeOf = async (path: string): Promise<string> => ((await stat(path)).mode & 0o777).toString(8);

    it('writes a plan with mode 0600, even with a umask of 0', async () => {
      process.umask(0);
      const file = await bookFile(book);
      const { path } = await plan(file);
      expect(await modeOf(path)).toBe('600');
    });

    it('replaces an existing plan of mode 0644 with one of 0600', async () => {
      process.umask(0);
      const file = await bookFile(book);
      const path = planPath();
      await writeFile(path, 'the old plan', { mode: 0o644 });
      expect(await modeOf(path)).toBe('644');
      expectOk(await cli('import', '--dry-run', '--plan-out', path, file));
      expect(await modeOf(path)).toBe('600');
      expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ format: 'pricing-plan/2' });
    });

    it('refuses to replace a file of a narrower mode (0400), before anything is read: exit 64, the file as it was', async () => {
      const file = await bookFile(book);
      const path = planPath();
      await writeFile(path, 'kept');
      await chmod(path, 0o400);
      await expectRefused(
        ['import', '--dry-run', '--plan-out', path, file],
        `--plan-out "${path}": a file of mode 0400, which a plan (mode 0600) would make more open`,
        { code: 64 },
      );
      expect(await readFile(path, 'utf8')).toBe('kept');
      expect(await modeOf(path)).toBe('400');
    });
  });

  it('refuses a FIFO or a link to nowhere at --plan-out: exit 64, nothing written there or through it', async () => {
    const file = await bookFile(book);
    const fifo = join(test.dir, `fifo-${++fileCount}.json`);
    execFileSync('mkfifo', [fifo]);
    await expectRefused(['import', '--dry-run', '--plan-out', fifo, file], `--plan-out "${fifo}": not a regular file`, {
      code: 64,
    });
    expect((await lstat(fifo)).isFIFO()).toBe(true);
    const nowhere = join(test.dir, `nowhere-${++fileCount}.json`);
    const dangling = join(test.dir, `dangling-${fileCount}.json`);
    await symlink(nowhere, dangling);
    await expectRefused(
      ['import', '--dry-run', '--plan-out', dangling, file],
      `--plan-out "${dangling}": not a regular file`,
      { code: 64 },
    );
    expect(await readlink(dangling)).toBe(nowhere);
    await expect(lstat(nowhere)).rejects.toThrow(/ENOENT/);
  });

  it.each<[string, unknown, RegExp]>([
    ['a file that is not a plan', { prices: [] }, /is not a plan|format/],
    [
      'a plan of another format',
      {
        format: 'pricing-plan/9',
        book_sha256: 'a'.repeat(64),
        planned_at: '2026-01-01T00:00:00.000Z',
        version: '1',
        changes: [],
      },
      /format/,
    ],
  ])('refuses %s', async (_what, content, message) => {
    const path = planPath();
    await writeFile(path, JSON.stringify(content));
    await expectRefused(['apply', path, await bookFile(book)], message);
  });
});

describe('availability changes in the log', () => {
  it('say what they set: on sale or off, in changes and changes --json', async () => {
    const products = (onSale: boolean) => ({ products: [{ product_key: 'storage.io1', on_sale: onSale }] });
    // Off sale first, whatever the tests above left: an import writes only what changes.
    expectOk(await cli('import', await bookFile(products(false))));
    // Just after that write, by the database's clock, which stamps the changes.
    const [{ from }] = await test.dataSource.query<{ from: string }[]>(
      `SELECT to_char((max(changed_at) + interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS from
         FROM price_change`,
    );
    expectOk(await cli('import', await bookFile(products(true)), '--actor', 'ana', '--reason', 'io1 launch'));
    expectOk(await cli('import', await bookFile(products(false)), '--actor', 'bea'));
    const lines = (await cli('changes', '--since', from)).stdout.split('\n').slice(0, -1);
    expect(lines.map((line) => line.split(/ {2,}/).slice(1))).toEqual([
      ['availability', 'storage.io1', '-', 'on-sale', 'ana', '"io1 launch"'],
      ['availability', 'storage.io1', '-', 'off-sale', 'bea'],
    ]);
    const document = JSON.parse((await cli('changes', '--since', from, '--json')).stdout);
    expect(document.changes).toEqual([
      expect.objectContaining({ change: 'availability', product_key: 'storage.io1', price: null, on_sale: true }),
      expect.objectContaining({ change: 'availability', product_key: 'storage.io1', price: null, on_sale: false }),
    ]);
  });

  it('the database refuses an availability row without what it set, and a price row with one', async () => {
    const insert = (change: string, onSale: boolean | null) =>
      test.dataSource.query(
        `INSERT INTO price_change (changed_at, product_key, change, actor, on_sale) VALUES (now(), 'storage.io1', $1, 'ana', $2)`,
        [change, onSale],
      );
    const before = await dumpDatabase(test.dataSource);
    await expect(insert('availability', null)).rejects.toThrow(/price_change_on_sale_recorded/);
    await expect(insert('set', true)).rejects.toThrow(/price_change_on_sale_of_availability/);
    expect(await dumpDatabase(test.dataSource)).toBe(before);
  });
});
