import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The history trigger's function as this migration makes it (a later one that replaces it puts it back in its `down`). */
export const KEEP_HISTORY_OF_1764000000000 = `FUNCTION price_record_keep_history() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          IF OLD.valid_from <= now() THEN
            RAISE EXCEPTION 'price record % took effect at % and cannot be deleted', OLD.id, OLD.valid_from
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          RETURN OLD;
        END IF;
        IF (NEW.product_key, NEW.organization_id, NEW.unit_type, NEW.unit_count, NEW.amount,
            NEW.valid_from, NEW.recorded_at)
           IS DISTINCT FROM
           (OLD.product_key, OLD.organization_id, OLD.unit_type, OLD.unit_count, OLD.amount,
            OLD.valid_from, OLD.recorded_at) THEN
          RAISE EXCEPTION 'price record %: only valid_until may change', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF NEW.valid_until IS DISTINCT FROM OLD.valid_until AND OLD.valid_until IS NOT NULL
           AND OLD.valid_until <= now() THEN
          RAISE EXCEPTION 'price record % ended at % and its end cannot move', OLD.id, OLD.valid_until
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF NEW.valid_until IS DISTINCT FROM OLD.valid_until AND NEW.valid_until < now() THEN
          RAISE EXCEPTION 'price record %: an end may be set to now or later, not to %', OLD.id, NEW.valid_until
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
      END $$`;

/**
 * Price records, product availability and the change log of list-price writes.
 * Every rule of section 2.4 that a single row can break is a constraint here, so a row
 * written by hand is held to the same rules as one written by the price book CLI.
 */
export class PricingSchema1764000000000 implements MigrationInterface {
  name = 'PricingSchema1764000000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE EXTENSION IF NOT EXISTS btree_gist`);

    // The unit type of a product key's family (section 2.4), NULL when the key fits no family.
    await db.query(`
      CREATE FUNCTION pricing_unit_type_of(product_key text) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT CASE
          WHEN length(product_key) > 64 THEN NULL
          WHEN product_key ~ '^compute\\.[a-z][a-z0-9]*(\\.[a-z0-9]+)+$' THEN 'seconds'
          WHEN product_key IN ('network.floating_ip', 'network.nat_gateway') THEN 'seconds'
          WHEN product_key IN ('network.vpc_egress', 'network.vpc_ingress', 'network.vpc_internal') THEN 'gb'
          WHEN product_key IN ('storage.gp1', 'storage.st1', 'storage.io1', 'storage.snapshot') THEN 'gib_hours'
          WHEN product_key = 'observability.custom_metric' THEN 'metric_months'
          WHEN product_key = 'observability.api_request' THEN 'requests'
          WHEN product_key = 'observability.ingested_sample' THEN 'samples'
        END
      $$`);

    await db.query(`
      CREATE TABLE price_record (
        id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        product_key     text        NOT NULL,
        organization_id text        NULL,
        unit_type       text        NOT NULL,
        unit_count      integer     NOT NULL,
        amount          numeric     NOT NULL,
        valid_from      timestamptz NOT NULL,
        valid_until     timestamptz NULL,
        recorded_at     timestamptz NOT NULL,
        superseded_by   bigint      NULL REFERENCES price_record (id),
        CONSTRAINT price_record_product_key_shape CHECK (pricing_unit_type_of(product_key) IS NOT NULL),
        CONSTRAINT price_record_unit_type_of_family CHECK (unit_type = pricing_unit_type_of(product_key)),
        CONSTRAINT price_record_organization_id_shape CHECK (organization_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
        CONSTRAINT price_record_unit_count_positive CHECK (unit_count > 0),
        CONSTRAINT price_record_amount_non_negative
          CHECK (amount >= 0 AND amount <> 'NaN'::numeric AND amount <> 'Infinity'::numeric),
        CONSTRAINT price_record_valid_from_finite CHECK (isfinite(valid_from)),
        CONSTRAINT price_record_valid_until_after_valid_from
          CHECK (valid_until IS NULL OR (isfinite(valid_until) AND valid_until > valid_from)),
        CONSTRAINT price_record_list_prices_do_not_overlap
          EXCLUDE USING gist (product_key WITH =, tstzrange(valid_from, valid_until) WITH &&)
          WHERE (organization_id IS NULL),
        CONSTRAINT price_record_organization_prices_do_not_overlap
          EXCLUDE USING gist (product_key WITH =, organization_id WITH =, tstzrange(valid_from, valid_until) WITH &&)
          WHERE (organization_id IS NOT NULL)
      )`);
    await db.query(`CREATE INDEX price_record_superseded_by ON price_record (superseded_by)`);

    // History is never rewritten: only the end of a price may move, to now or later, and a past
    // end never. `now()` is the writing transaction's instant, which the CLI also plans with.
    // Only what has not taken effect may be deleted (a withdrawn scheduled price).
    await db.query(`
      CREATE ${KEEP_HISTORY_OF_1764000000000}`);
    await db.query(`
      CREATE TRIGGER price_record_keep_history BEFORE UPDATE OR DELETE ON price_record
      FOR EACH ROW EXECUTE FUNCTION price_record_keep_history()`);

    // Availability is data: a product not listed here is on sale once it has a list price.
    await db.query(`
      CREATE TABLE product_availability (
        product_key text PRIMARY KEY,
        on_sale     boolean     NOT NULL,
        updated_at  timestamptz NOT NULL,
        CONSTRAINT product_availability_product_key_shape CHECK (pricing_unit_type_of(product_key) IS NOT NULL)
      )`);
    await db.query(`
      INSERT INTO product_availability (product_key, on_sale, updated_at)
      VALUES ('storage.io1', false, now()), ('storage.st1', false, now())`);

    // Every write of the price book, so that last_changed stays exact when a scheduled price is
    // withdrawn (its record is gone) or an end is set.
    await db.query(`
      CREATE TABLE price_change (
        id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        changed_at      timestamptz NOT NULL,
        product_key     text        NOT NULL,
        organization_id text        NULL,
        change          text        NOT NULL,
        price_record_id bigint      NULL,
        CONSTRAINT price_change_kind CHECK (change IN ('set', 'end', 'withdraw_price', 'withdraw_end', 'availability'))
      )`);
    await db.query(
      `CREATE INDEX price_change_list_changed_at ON price_change (changed_at) WHERE organization_id IS NULL`,
    );

    // One counter that every write of the price book moves: instances compare it to notice
    // changes whose notification they missed.
    await db.query(`
      CREATE TABLE price_book_version (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        version   bigint  NOT NULL
      )`);
    await db.query(`INSERT INTO price_book_version (version) VALUES (1)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE price_book_version`);
    await db.query(`DROP TABLE price_change`);
    await db.query(`DROP TABLE product_availability`);
    await db.query(`DROP TABLE price_record`);
    await db.query(`DROP FUNCTION price_record_keep_history()`);
    await db.query(`DROP FUNCTION pricing_unit_type_of(text)`);
    // btree_gist stays: up creates it only if missing, and other schemas of the database may use it.
  }
}
