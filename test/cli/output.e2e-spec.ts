import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnCli } from '../support/cli';
import { passableTempDir } from '../support/temp-dir';
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
    // A data directory the CLI makes, in a directory it did not (which it leaves as it is).
    const parent = await passableTempDir('price-book-cli-embedded');
    try {
      // The first command initialises PostgreSQL and migrates (export alone would refuse an
      // unmigrated database): its warnings, none of them on stdout.
      const migrated = await spawnCli(['migrate'], { DATA_DIR: join(parent, 'pg') });
      expect([migrated.code, migrated.stdout]).toEqual([
        0,
        expect.stringMatching(/^database migrated: PricingSchema1764000000000, /),
      ]);
      expect((await stat(parent)).mode & 0o7777).toBe(0o711);
      // Where it wrote, first: the embedded PostgreSQL under DATA_DIR (as its writer), and said so.
      expect(migrated.target).toMatch(
        new RegExp(
          `^target host=127\\.0\\.0\\.1 port=\\d+ database=control_plane role=pricing_cli postgresql=\\S+ price_book_version=none via=embedded data_dir=${join(parent, 'pg')}$`,
        ),
      );
      expect(migrated.stderr).toContain(
        `DATABASE_URL is unset: migrate writes to the embedded PostgreSQL under ${join(parent, 'pg')}`,
      );
      const result = await spawnCli(['export'], { DATA_DIR: join(parent, 'pg') });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(EMPTY_BOOK);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }, 60_000);
});
