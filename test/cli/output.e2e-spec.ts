import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCli } from '../support/cli';
import { EMPTY_BOOK, expectApplied, price, useCliDatabase } from '../support/price-book-cli';

// What reaches stdout, through a pipe: large outputs whole, and nothing but the output.

describe('large outputs', () => {
  const f = useCliDatabase();
  beforeAll(async () => {
    const prices = Array.from({ length: 2_000 }, (_, i) =>
      price(`compute.big${i % 7}.${i}`, '0.0610', { valid_from: '2026-01-01T00:00:00Z' }),
    );
    expectApplied(await f.import({ prices }));
  });

  // Writes to a pipe are asynchronous: exiting right after writing would cut the output short.
  it('export and show write everything to a pipe before exiting', async () => {
    const exported = await f.spawned('export');
    expect(exported.code).toBe(0);
    expect(exported.stdout.length).toBeGreaterThan(300_000);
    expect((JSON.parse(exported.stdout) as { prices: unknown[] }).prices).toHaveLength(2_000);
    const shown = await f.spawned('show');
    expect(shown.code).toBe(0);
    expect((JSON.parse(shown.stdout) as { families: { prices: unknown[] }[] }).families[0].prices).toHaveLength(2_000);
  });
});

describe('stdout carries the output alone', () => {
  it('with the embedded PostgreSQL, its warnings go to stderr and export to stdout stays the book', async () => {
    // A data directory inside a 0700 one: as root, the CLI makes the parent searchable and warns.
    const parent = await mkdtemp(join(tmpdir(), 'price-book-cli-embedded-'));
    try {
      // The first command initialises PostgreSQL and migrates (export alone would refuse an
      // unmigrated database): its warnings, none of them on stdout.
      const migrated = await spawnCli(['migrate'], { DATA_DIR: join(parent, 'pg') });
      expect([migrated.code, migrated.stdout]).toEqual([
        0,
        expect.stringMatching(/^database migrated: PricingSchema1764000000000, /),
      ]);
      // Where it wrote, first: the embedded PostgreSQL under DATA_DIR, and said so.
      expect(migrated.target).toMatch(
        new RegExp(
          `^target host=127\\.0\\.0\\.1 port=\\d+ database=control_plane role=control_plane postgresql=\\S+ price_book_version=none via=embedded data_dir=${join(parent, 'pg')}$`,
        ),
      );
      expect(migrated.stderr).toContain(
        `DATABASE_URL is unset: migrate writes to the embedded PostgreSQL under ${join(parent, 'pg')}`,
      );
      if (process.getuid?.() === 0) expect(migrated.stderr).toContain('searchable (o+x)');
      const result = await spawnCli(['export'], { DATA_DIR: join(parent, 'pg') });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(EMPTY_BOOK);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }, 60_000);
});
