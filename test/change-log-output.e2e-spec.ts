import { listPrice } from '@app/pricing/testing';
import { runCli, type CliResult } from './support/cli';
import { applyBook, useTestDatabase } from './support/database';
import { inOneTransaction } from './support/tamper';

// `changes` and `history` print every stored row (docs/price-book-cli.md, "changes"): rows written
// by hand, by a superuser who set the change log's constraints aside, with terminal escape
// sequences, bidirectional and C1 controls in every field, and instants JavaScript cannot
// represent. Each is printed escaped, in its place, and the rows after it too.

const test = useTestDatabase({
  book: { prices: [listPrice('compute.g2.4', 'seconds', 3600, '0.0610', '2026-01-01T00:00:00Z')] },
});

function cli(...args: string[]): Promise<CliResult> {
  return runCli(args, { DATABASE_URL: test.url });
}

/** What a terminal acts on or hides: none of it may reach the output raw (line feeds end lines). */
const RAW = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/u;
/** PostgreSQL's last instant. */
const LAST_INSTANT = '294276-12-31 23:59:59.999999+00';

const effect = (fields: Record<string, unknown>) => `'${JSON.stringify(fields).replaceAll("'", "''")}'::jsonb`;
const record = {
  id: '1',
  product_key: 'compute.g2.4',
  organization_id: null,
  unit_type: 'seconds\u2066',
  unit_count: '3600',
  amount: '0.01\u009b2J',
  valid_from: '9224318015999999999',
  valid_until: '-infinity',
  recorded_at: '0',
  superseded_by: null,
};

beforeAll(async () => {
  // A superuser sets the log's rules on actors and reasons aside (as NOT VALID they come back,
  // without checking these rows) and the trigger that dates and hashes every row, and writes what
  // it likes.
  await inOneTransaction(test.url, [
    `ALTER TABLE price_change DROP CONSTRAINT price_change_actor_shape, DROP CONSTRAINT price_change_reason_shape`,
    `ALTER TABLE price_change DISABLE TRIGGER price_change_seal`,
    `INSERT INTO price_change (id, changed_at, product_key, organization_id, change, price_record_id, actor, reason, effect, hash, on_sale)
     VALUES
       (nextval('price_change_id'), 'infinity', E'compute.g2.4\\x1b[2K\\rcompute.g2.8  list', E'org\\u202e24_gro', 'set', 1, E'ana\\nmallory',
        E'approved \\u0085\\u2028by cfo', ${effect({ record })}, repeat('a', 64), NULL),
       (nextval('price_change_id'), '-infinity', 'compute.g2.4', NULL, 'end', 1, E'\\x1b]0;owned\\x07', NULL, '{}', repeat('b', 64), NULL),
       (nextval('price_change_id'), '${LAST_INSTANT}', E'storage.io1\\u2029', NULL, 'availability', NULL, 'ops', NULL, ${effect({ on_sale: true })},
        repeat('c', 64), true),
       (nextval('price_change_id'), '2026-06-01T00:00:00Z', '', '', 'withdraw_end', NULL, 'ops', NULL, ${effect({ ends: 7 })}, repeat('d', 64), NULL)`,
    `ALTER TABLE price_change
       ADD CONSTRAINT price_change_actor_shape CHECK (actor ~ '^[A-Za-z0-9._@+-]{1,100}$') NOT VALID,
       ADD CONSTRAINT price_change_reason_shape CHECK (char_length(reason) <= 500 AND reason ~ '[^[:space:]]' AND reason !~ '[[:cntrl:]]') NOT VALID`,
    `ALTER TABLE price_change ENABLE ALWAYS TRIGGER price_change_seal`,
    // A record whose end is PostgreSQL's last instant: every rule of price_record allows it.
    `INSERT INTO price_record (product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until)
     VALUES ('compute.g2.4', 'org_9', 'seconds', 3600, 0.0590, now() + interval '1 year', '${LAST_INSTANT}')`,
  ]);
  // Written after them: a page of output must not stop at a row it cannot print.
  await applyBook(test.dataSource, {
    prices: [listPrice('compute.g2.16', 'seconds', 3600, '0.2440', '2026-01-01T00:00:00Z')],
  });
});

async function logSize(): Promise<number> {
  const [{ n }] = await test.dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM price_change`);
  return n;
}

describe('changes on rows written by hand', () => {
  it('prints every row, each field escaped, an instant JavaScript cannot represent as PostgreSQL holds it', async () => {
    const result = await cli('changes');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = result.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(await logSize());
    for (const line of lines) expect(line).not.toMatch(RAW);
    expect(lines).toContain(
      'infinity  set             compute.g2.4\\u001b[2K\\u000dcompute.g2.8\\u0020\\u0020list  org:org\\u202e24_gro  ' +
        '0.01\\u009b2J per 3600 seconds\\u2066 from +294276-12-31T23:59:59.999Z until -infinity  ana\\u000amallory  ' +
        '"approved \\u0085\\u2028by cfo"',
    );
    expect(lines).toContain(
      '-infinity  end             compute.g2.4              list              -  \\u001b]0;owned\\u0007',
    );
    expect(lines).toContain(
      '+294276-12-31T23:59:59.999Z  availability    storage.io1\\u2029         -                 on-sale  ops',
    );
    expect(lines).toContain(
      '2026-06-01T00:00:00.000Z  withdraw_end    ""                        org:""            -  ops',
    );
    // The first four columns stay words: awk's $3 is the key on every line.
    for (const line of lines)
      expect(
        line
          .split(/ {2,}/)
          .slice(0, 4)
          .every((column) => /^\S+$/.test(column)),
      ).toBe(true);
    expect(lines[lines.length - 1]).toMatch(/ {2}set {13}compute\.g2\.16 +list +0\.2440 per 3600 seconds from /);
  });

  it('--json escapes U+2028, U+2029, C1 and bidirectional controls, and reads back as the stored values', async () => {
    const result = await cli('changes', '--json');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout.replaceAll('\n', '')).not.toMatch(RAW);
    expect(result.stdout).toContain('"reason": "approved \\u0085\\u2028by cfo"');
    expect(result.stdout).toContain('"organization_id": "org\\u202e24_gro"');
    const { changes } = JSON.parse(result.stdout) as { changes: Record<string, unknown>[] };
    expect(changes).toHaveLength(await logSize());
    expect(changes).toContainEqual({
      at: 'infinity',
      change: 'set',
      product_key: 'compute.g2.4\u001b[2K\rcompute.g2.8  list',
      organization_id: 'org\u202e24_gro',
      actor: 'ana\nmallory',
      reason: 'approved \u0085\u2028by cfo',
      price: {
        unit_type: 'seconds\u2066',
        unit_count: 3600,
        amount: '0.01\u009b2J',
        valid_from: '+294276-12-31T23:59:59.999Z',
        valid_until: '-infinity',
      },
      on_sale: null,
    });
    expect(changes.map((change) => change.at)).toEqual(
      expect.arrayContaining(['-infinity', '+294276-12-31T23:59:59.999Z', '2026-06-01T00:00:00Z']),
    );
  });
});

describe('history on rows written by hand', () => {
  it('prints every record and change of the key, whatever their instants and fields', async () => {
    const result = await cli('history', 'compute.g2.4');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout.replaceAll('\n', '')).not.toMatch(RAW);
    expect(result.stdout.split('\n')).toContainEqual(
      expect.stringMatching(/^ {2}-infinity +end set +0\.0610 per 3600 seconds from \S+ {2}\\u001b\]0;owned\\u0007$/),
    );
    const json = await cli('history', 'compute.g2.4', '--json');
    expect(json.code).toBe(0);
    expect(json.stdout.replaceAll('\n', '')).not.toMatch(RAW);
    expect((JSON.parse(json.stdout) as { changes: { at: string }[] }).changes.map((c) => c.at)).toContain('-infinity');

    const agreed = await cli('history', 'compute.g2.4', '--organization', 'org_9');
    expect({ code: agreed.code, stderr: agreed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(agreed.stdout.split('\n')[1]).toMatch(
      /^scheduled 0\.0590 per 3600 seconds {2}from \S+Z until \+294276-12-31T23:59:59\.999Z {2}recorded \S+Z$/,
    );
    const agreedJson = JSON.parse(
      (await cli('history', 'compute.g2.4', '--organization', 'org_9', '--json')).stdout,
    ) as {
      records: { valid_until: string | null }[];
    };
    expect(agreedJson.records.map((r) => r.valid_until)).toEqual(['+294276-12-31T23:59:59.999Z']);
  });
});
