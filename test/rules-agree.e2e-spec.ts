import { CreateVolumeDto } from '@app/control-plane';
import { parseProductKey, PRODUCT_FAMILIES, STORAGE_CLASSES } from '@app/pricing';
import { parsePriceBook } from '@app/pricing/cli';
import { seededRandom } from '@app/pricing/testing';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { QueryRunner } from 'typeorm';
import { useTestDatabase } from './support/database';

// The rules that exist twice, in TypeScript (the CLI and the API refuse with a message) and in
// SQL (the database refuses whatever writes it): product keys, organization ids, volume names,
// sizes and storage classes. Generated valid and invalid values; each side must accept exactly
// the same ones.

function randomStrings(alphabet: string, count: number, maxLength: number, seed: number): string[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const length = 1 + Math.floor(next() * maxLength);
    return Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
  });
}

/** Values around valid ones: each mutated by case, an extra or missing character, spaces, length. */
function mutations(valid: readonly string[]): string[] {
  return valid.flatMap((v) => [
    v,
    v.toUpperCase(),
    `${v}.`,
    `.${v}`,
    `${v} `,
    ` ${v}`,
    v.slice(1),
    v.slice(0, -1),
    `${v}x`,
    v.replace('.', '..'),
    v.replace('.', '_'),
    v.replace(/\d/, 'é'),
    `${v}\n`,
    v.padEnd(64, '9'),
    v.padEnd(65, '9'),
  ]);
}

// The app's settings, without logging every refused query.
const t = useTestDatabase({ logging: false });

describe('TypeScript and the database accept exactly the same values', () => {
  let runner: QueryRunner;

  beforeAll(async () => {
    runner = t.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction(); // nothing is kept
  });

  // Before the database is dropped: this describe's hooks run before the file's.
  afterAll(async () => {
    await runner?.rollbackTransaction();
    await runner?.release();
  });

  /** Whether the database takes a row: tried under a savepoint, undone either way. */
  async function databaseAccepts(sql: string, parameters: unknown[]): Promise<boolean> {
    await runner.query('SAVEPOINT try');
    try {
      await runner.query(sql, parameters);
      return true;
    } catch {
      return false;
    } finally {
      await runner.query('ROLLBACK TO SAVEPOINT try');
    }
  }

  it('product keys: parseProductKey and pricing_unit_type_of, and the unit type of each family', async () => {
    const valid = [
      ...PRODUCT_FAMILIES.flatMap((f) => f.fixedKeys ?? []),
      ...STORAGE_CLASSES.map((c) => `storage.${c}`),
      'compute.g2.4',
      'compute.m3.small.16',
      'compute.a1.0',
    ];
    const values = [
      ...mutations(valid),
      ...randomStrings('abcdegimnoprstuvwxy0123456789._-', 400, 24, 1).map((s) => `compute.${s}`),
      ...randomStrings('gpstioanhw1.', 300, 12, 2).map((s) => `storage.${s}`),
      ...randomStrings('abcdefghijklmnopqrstuvwxyz._', 300, 30, 3),
      'compute.',
      'compute.g2',
      'compute.2g.4',
      'storage.',
      '',
    ];
    const disagreements: string[] = [];
    for (const key of new Set(values)) {
      const rows: { unit: string | null }[] = await runner.query('SELECT pricing_unit_type_of($1) AS unit', [key]);
      const unit = rows[0].unit;
      const ours = parseProductKey(key)?.family.unitType ?? null;
      if (unit !== ours) disagreements.push(`${JSON.stringify(key)}: TypeScript ${ours}, SQL ${unit}`);
    }
    expect(disagreements).toEqual([]);
    expect(values.filter((key) => parseProductKey(key)).length).toBeGreaterThan(20); // both sides were tried
  });

  it('organization ids: the price book parser and the CHECK of price_record', async () => {
    const values = [
      ...mutations(['org_42', 'a', 'A.b-c_d', '0rg']),
      ...randomStrings('aZ09_.-@ ', 400, 70, 4),
      'x'.repeat(64),
      'x'.repeat(65),
      '_org',
      '-org',
    ];
    const disagreements: string[] = [];
    for (const organizationId of new Set(values)) {
      const book = {
        prices: [
          {
            product_key: 'storage.gp1',
            organization_id: organizationId,
            unit_type: 'gib_hours',
            unit_count: 730,
            amount: '1',
            valid_from: '2026-01-01T00:00:00Z',
          },
        ],
      };
      const ours = !('errors' in parsePriceBook(book));
      const theirs = await databaseAccepts(
        `INSERT INTO price_record (product_key, organization_id, unit_type, unit_count, amount, valid_from)
         VALUES ('storage.gp1', $1, 'gib_hours', 730, 1, '2026-01-01T00:00:00Z')`,
        [organizationId],
      );
      if (ours !== theirs) disagreements.push(`${JSON.stringify(organizationId)}: TypeScript ${ours}, SQL ${theirs}`);
    }
    expect(disagreements).toEqual([]);
  });

  it('volumes: CreateVolumeDto and the CHECKs of volume (name, size, storage class)', async () => {
    const names = [
      ...mutations(['v', 'db-1', 'a1b2']),
      ...randomStrings('ab9-A_.', 200, 70, 5),
      'a'.repeat(63),
      'a'.repeat(64),
      '-v',
      'v-',
    ];
    const sizes = [-1, 0, 1, 2, 100, 16_383, 16_384, 16_385, 2 ** 31 - 1];
    const classes = [...STORAGE_CLASSES, 'gp2', 'GP1', 'st1 ', '', 'io'];
    const cases = [
      ...names.map((name) => ({ name, size_gib: 10, storage_class: 'gp1' })),
      ...sizes.map((size_gib) => ({ name: 'v', size_gib, storage_class: 'gp1' })),
      ...classes.map((storage_class) => ({ name: 'v', size_gib: 10, storage_class })),
    ];
    const disagreements: string[] = [];
    for (const body of cases) {
      const ours = validateSync(plainToInstance(CreateVolumeDto, body)).length === 0;
      const theirs = await databaseAccepts(
        `INSERT INTO volume (id, name, size_gib, storage_class, created_at) VALUES (gen_random_uuid(), $1, $2, $3, now())`,
        [body.name, body.size_gib, body.storage_class],
      );
      if (ours !== theirs) disagreements.push(`${JSON.stringify(body)}: TypeScript ${ours}, SQL ${theirs}`);
    }
    expect(disagreements).toEqual([]);
  });
});
