import type { MigrationInterface, QueryRunner } from 'typeorm';
import { INITIAL_AVAILABILITY } from '../../price-book/change-log-chain';
import { PUBLICATION_INSTANT } from './1764000011000-one-clock';

/** Who the change log says wrote the rows of this migration. */
export const SCHEMA_ACTOR = 'pricing-schema';

/**
 * The availability the first migration gave (storage.io1 and storage.st1 off sale:
 * PricingSchema1764000000000, INITIAL_AVAILABILITY) is a change of the log like any other
 * (docs/decisions.md, "Availability in the log"): one `availability` row for each of those products
 * that has none in the log yet, saying what that migration set (off sale), by `pricing-schema`.
 * Appended, as the log is append-only: the seal trigger (OneClock1764000011000) gives each row its
 * id, its instant (this migration's publication instant) and its hash. A product whose availability
 * an import already changed has its row, and gets none. `verify` replays the log from
 * INITIAL_AVAILABILITY (price-book/change-log-replay.ts), which these rows restate: it passes on a
 * fresh database and on one migrated before alike, and on one whose availability was changed
 * behind the log, it fails as before (the rows say what the first migration did, not what is stored
 * now). Instances ignore availability rows in the list's history (PriceSnapshotReads): the version
 * does not move.
 */
export class InitialAvailabilityLogged1764000012100 implements MigrationInterface {
  name = 'InitialAvailabilityLogged1764000012100';

  async up(db: QueryRunner): Promise<void> {
    const keys = [...INITIAL_AVAILABILITY.keys()].sort();
    const missing = (
      (await db.query(
        `SELECT k AS product_key FROM unnest($1::text[]) AS k
        WHERE NOT EXISTS (SELECT 1 FROM price_change c WHERE c.change = 'availability' AND c.product_key = k)
        ORDER BY k`,
        [keys],
      )) as { product_key: string }[]
    ).map((row) => row.product_key);
    if (missing.length === 0) return;
    // The rows are dated with this transaction's publication instant, as a write of two rows is
    // (the database's default delay, and what two rows take): no later, so that the writes right
    // after a migration take effect as soon as ever.
    await db.query(`SELECT ${PUBLICATION_INSTANT}(NULL, interval '2 milliseconds')`);
    await db.query(
      `INSERT INTO price_change (actor, reason, product_key, organization_id, change, price_record_id, on_sale, effect)
       SELECT $1, 'off sale since the schema was made (migration 1764000000000), logged by migration 1764000012100',
              k, NULL, 'availability', NULL, $3::boolean, jsonb_build_object('on_sale', $3::boolean)
         FROM unnest($2::text[]) WITH ORDINALITY AS t(k, ord)
        ORDER BY ord`,
      [SCHEMA_ACTOR, missing, false],
    );
  }

  /** Nothing: the log is append-only, and its rows say what the first migration did, true without this one too. */
  async down(): Promise<void> {}
}
