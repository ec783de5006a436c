import type { MigrationInterface, QueryRunner } from 'typeorm';
import { KEEP_HISTORY_OF_1764000000000 } from './1764000000000-pricing-schema';
import { keepHistoryOnInsert } from './1764000002000-database-side-integrity';
import { PAST_OVER_RECORDS_BY_SCOPE } from './1764000006000-history-check-by-scope';
import { GRANTS_OF_1764000010500, PRICING_RUNTIME_GRANTS } from './1764000010500-runtime-grants';

/** The function that gives a write its publication instant (PriceBookWrites.begin). */
export const PUBLICATION_INSTANT = 'pricing_publication_instant';
/** What the publication instant of a write would be now, without making it one (a dry run). */
export const NEXT_PUBLICATION_INSTANT = 'pricing_next_publication_instant';
/** SQLSTATE of a write that could not commit before its publication instant. */
export const PUBLICATION_MISSED = 'PB001';

/**
 * One clock (docs/decisions.md, "One clock"): the database dates every write, and a write takes
 * effect after it commits.
 *
 * - `price_book_write`: one row per writing transaction, with its **publication instant**: the
 *   database's clock when the write began, plus a delay (the writer's, or the default delay plus
 *   what the writer expects the write to take; within `price_book_clock`'s bounds), never before an
 *   earlier write's. `pricing_publication_instant(delay)` makes it, under the
 *   price book's lock, once per transaction; only it writes the table (SECURITY DEFINER). A deferred
 *   constraint trigger refuses the COMMIT (SQLSTATE PB001, nothing kept) unless it comes at least
 *   `publication_margin` before that instant: instances have that long to have their answers ready.
 * - Every record a write inserts is recorded at that instant (`recorded_at`, its default; any other
 *   value is refused), ends are set at it (not before it), only what has not taken effect by it may
 *   be deleted, and a past `valid_from` is accepted only where the key and scope had no record
 *   before it. An end's change is kept on the record: when (`end_set_at`), from what (`end_before`),
 *   and how many times (`end_changes`), so that an instance reads the list's past from the records
 *   and reads the change log only for the few records whose end moved more than once
 *   (PriceSnapshotReads). The migration fills them for the records written before, from the log.
 * - Every change-log row gets its id, its instant and its hash from a trigger (SECURITY DEFINER,
 *   firing in every session): a writer's own id, instant or hash is overruled. The hash is chain
 *   rule 2: SHA-256 of the previous row's hash, a line feed and the row as PostgreSQL's `jsonb`
 *   prints it (`pricing_change_entry`), its id included (price-book/change-log-chain.ts). Rows
 *   written before keep rule 1 (`chain_rule`). The id is no longer an identity column (whose
 *   OVERRIDING SYSTEM VALUE any writer may use) but the trigger's sequence, set past every id
 *   written before.
 */
export class OneClock1764000011000 implements MigrationInterface {
  name = 'OneClock1764000011000';

  async up(db: QueryRunner): Promise<void> {
    const [{ schema }] = (await db.query(`SELECT quote_ident(current_schema()) AS schema`)) as { schema: string }[];
    // Run as its owner (SECURITY DEFINER), its search path fixed to the schema and pg_temp last, so
    // that no table of another schema or a temporary one stands in for ours.
    const definer = (signature: string, body: string): Promise<unknown> =>
      db.query(
        `CREATE FUNCTION ${signature} SECURITY DEFINER SET search_path = ${schema}, pg_temp AS $fn$ ${body} $fn$`,
      );

    await db.query(`
      CREATE TABLE price_book_clock (
        singleton          boolean  PRIMARY KEY DEFAULT true CHECK (singleton),
        publication_margin interval NOT NULL DEFAULT '750 milliseconds',
        default_delay      interval NOT NULL DEFAULT '1 second',
        max_delay          interval NOT NULL DEFAULT '1 hour',
        CONSTRAINT price_book_clock_bounds CHECK (publication_margin >= interval '0'
          AND default_delay >= publication_margin AND max_delay >= default_delay AND max_delay <= interval '1 day')
      )`);
    await db.query(`INSERT INTO price_book_clock DEFAULT VALUES`);
    await db.query(`
      CREATE TABLE price_book_write (
        id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        xid          xid8        NOT NULL UNIQUE,
        published_at timestamptz NOT NULL,
        began_at     timestamptz NOT NULL
      )`);

    // The instant a write beginning at `began` gets: `delay` after it, or the default delay plus
    // what the writer expects the write to take (`takes`); whole milliseconds (instants in memory are
    // epoch ms), after every earlier write's.
    await definer(
      `pricing_publication_instant_after(began timestamptz, delay interval, takes interval) RETURNS timestamptz
       LANGUAGE plpgsql`,
      `DECLARE
        clock price_book_clock;
        wanted interval;
        instant timestamptz;
      BEGIN
        SELECT * INTO clock FROM price_book_clock;
        wanted := greatest(coalesce(delay, clock.default_delay + greatest(coalesce(takes, interval '0'), interval '0')),
                           clock.publication_margin);
        IF wanted > clock.max_delay THEN
          RAISE EXCEPTION 'a publication delay of % is longer than the longest allowed, %', wanted, clock.max_delay
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
        instant := greatest(began + wanted,
                            (SELECT published_at + interval '1 millisecond' FROM price_book_write ORDER BY id DESC LIMIT 1));
        RETURN date_trunc('milliseconds', instant)
               + CASE WHEN instant > date_trunc('milliseconds', instant) THEN interval '1 millisecond' ELSE interval '0' END;
      END`,
    );
    await definer(
      `${PUBLICATION_INSTANT}(delay interval DEFAULT NULL, takes interval DEFAULT NULL) RETURNS timestamptz
       LANGUAGE plpgsql`,
      `DECLARE
        instant timestamptz;
        began timestamptz;
      BEGIN
        SELECT published_at INTO instant FROM price_book_write WHERE xid = pg_current_xact_id();
        IF FOUND THEN RETURN instant; END IF;
        PERFORM pg_advisory_xact_lock(${PRICE_BOOK_LOCK_KEY});
        began := clock_timestamp();
        instant := pricing_publication_instant_after(began, delay, takes);
        INSERT INTO price_book_write (xid, published_at, began_at) VALUES (pg_current_xact_id(), instant, began);
        RETURN instant;
      END`,
    );
    await definer(
      `${NEXT_PUBLICATION_INSTANT}(delay interval DEFAULT NULL, takes interval DEFAULT NULL) RETURNS timestamptz
       LANGUAGE plpgsql`,
      `DECLARE
        instant timestamptz;
      BEGIN
        SELECT published_at INTO instant FROM price_book_write WHERE xid = pg_current_xact_id();
        IF FOUND THEN RETURN instant; END IF;
        RETURN pricing_publication_instant_after(clock_timestamp(), delay, takes);
      END`,
    );
    await definer(
      `price_book_write_in_time() RETURNS trigger LANGUAGE plpgsql`,
      `DECLARE
        margin interval;
        ready timestamptz := clock_timestamp();
      BEGIN
        SELECT publication_margin INTO margin FROM price_book_clock;
        IF ready + margin > NEW.published_at THEN
          RAISE EXCEPTION 'the write did not commit % before its publication instant %: nothing was written',
            margin, NEW.published_at
            USING ERRCODE = '${PUBLICATION_MISSED}',
                  DETAIL = format('it began at %s and was ready to commit at %s', NEW.began_at, ready),
                  HINT = 'name a later publication instant (a longer delay) for a write this long';
        END IF;
        RETURN NULL;
      END`,
    );
    await db.query(`
      CREATE CONSTRAINT TRIGGER price_book_write_in_time AFTER INSERT ON price_book_write
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION price_book_write_in_time()`);
    await db.query(`ALTER TABLE price_book_write ENABLE ALWAYS TRIGGER price_book_write_in_time`);

    // Records: written at the write's publication instant; an end's change kept on the record.
    await db.query(`
      ALTER TABLE price_record
        ADD COLUMN end_set_at  timestamptz NULL,
        ADD COLUMN end_before  timestamptz NULL,
        ADD COLUMN end_changes integer     NOT NULL DEFAULT 0`);
    await this.fillEndChanges(db);
    await db.query(`ALTER TABLE price_record ALTER COLUMN recorded_at SET DEFAULT ${PUBLICATION_INSTANT}()`);
    await db.query(`CREATE OR REPLACE ${KEEP_HISTORY_ON_INSERT}`);
    await db.query(`CREATE OR REPLACE ${keepHistory(`${PUBLICATION_INSTANT}()`, TRACK_END_CHANGES)}`);

    // The change log: id, instant and hash from the database.
    await db.query(`ALTER TABLE price_change ALTER COLUMN id DROP IDENTITY`);
    await db.query(`CREATE SEQUENCE price_change_id OWNED BY price_change.id`);
    await db.query(
      `SELECT setval('price_change_id', coalesce((SELECT max(id) FROM price_change), 1), (SELECT count(*) > 0 FROM price_change))`,
    );
    // A constant default: no row is rewritten (the log's append-only triggers stay untouched).
    await db.query(`ALTER TABLE price_change ADD COLUMN chain_rule smallint NOT NULL DEFAULT 1`);
    await db.query(`ALTER TABLE price_change ALTER COLUMN chain_rule SET DEFAULT 2`);
    await db.query(`
      CREATE FUNCTION pricing_change_entry(c price_change) RETURNS text LANGUAGE sql STABLE AS $$
        SELECT jsonb_build_object(
          'actor', c.actor, 'change', c.change,
          'changed_at', trunc((extract(epoch FROM c.changed_at - timestamptz '2000-01-01 00:00:00+00') + 946684800) * 1000000)::text,
          'effect', c.effect, 'id', c.id::text, 'on_sale', c.on_sale, 'organization_id', c.organization_id,
          'price_record_id', c.price_record_id::text, 'product_key', c.product_key, 'reason', c.reason)::text
      $$`);
    await definer(
      `price_change_seal() RETURNS trigger LANGUAGE plpgsql`,
      `DECLARE
        previous text;
      BEGIN
        -- The instant first: it takes the price book's lock, so that ids and the chain follow one order.
        NEW.changed_at := ${PUBLICATION_INSTANT}();
        NEW.id := nextval('price_change_id');
        NEW.chain_rule := 2;
        SELECT hash INTO previous FROM price_change ORDER BY id DESC LIMIT 1;
        NEW.hash := encode(sha256(convert_to(coalesce(previous, repeat('0', 64)) || E'\\n' || pricing_change_entry(NEW),
                                             'UTF8')), 'hex');
        RETURN NEW;
      END`,
    );
    await db.query(`
      CREATE TRIGGER price_change_seal BEFORE INSERT ON price_change
      FOR EACH ROW EXECUTE FUNCTION price_change_seal()`);
    await db.query(`ALTER TABLE price_change ENABLE ALWAYS TRIGGER price_change_seal`);
    // Only roles granted it may write (RuntimeGrants: pricing_grant_runtime).
    for (const fn of [
      `${PUBLICATION_INSTANT}(interval, interval)`,
      `${NEXT_PUBLICATION_INSTANT}(interval, interval)`,
      'pricing_publication_instant_after(timestamptz, interval, interval)',
    ]) {
      await db.query(`REVOKE ALL ON FUNCTION ${fn} FROM PUBLIC`);
    }
    await db.query(`CREATE OR REPLACE ${GRANTS_OF_1764000011000}`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`CREATE OR REPLACE ${GRANTS_OF_1764000010500}`);
    await db.query(`DROP TRIGGER price_change_seal ON price_change`);
    await db.query(`DROP FUNCTION price_change_seal()`);
    await db.query(`DROP FUNCTION pricing_change_entry(price_change)`);
    await db.query(`ALTER TABLE price_change DROP COLUMN chain_rule`);
    await db.query(`ALTER TABLE price_change ALTER COLUMN id DROP DEFAULT`);
    await db.query(`DROP SEQUENCE price_change_id`);
    await db.query(`ALTER TABLE price_change ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY`);
    await db.query(
      `SELECT setval(pg_get_serial_sequence('price_change', 'id'), coalesce((SELECT max(id) FROM price_change), 1),
                     (SELECT count(*) > 0 FROM price_change))`,
    );
    await db.query(`CREATE OR REPLACE ${KEEP_HISTORY_OF_1764000000000}`);
    await db.query(`CREATE OR REPLACE ${keepHistoryOnInsert(PAST_OVER_RECORDS_BY_SCOPE)}`);
    await db.query(`ALTER TABLE price_record ALTER COLUMN recorded_at SET DEFAULT now()`);
    await db.query(`ALTER TABLE price_record DROP COLUMN end_changes, DROP COLUMN end_before, DROP COLUMN end_set_at`);
    await db.query(`DROP TABLE price_book_write`);
    await db.query(`DROP FUNCTION price_book_write_in_time()`);
    await db.query(`DROP FUNCTION ${NEXT_PUBLICATION_INSTANT}(interval, interval)`);
    await db.query(`DROP FUNCTION ${PUBLICATION_INSTANT}(interval, interval)`);
    await db.query(`DROP FUNCTION pricing_publication_instant_after(timestamptz, interval, interval)`);
    await db.query(`DROP TABLE price_book_clock`);
  }

  /**
   * The end changes of the records written before, from the change log: an `end` row names the
   * record it ended (an end is only ever set on a price with none), a withdrawal lists in its effect
   * the records it reopened or re-ended (from an end this log may not hold whole: counted twice, so
   * that an instance replays that record from the log). The history trigger is set aside for it.
   */
  private async fillEndChanges(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE price_record DISABLE TRIGGER price_record_keep_history`);
    await db.query(`
      UPDATE price_record r SET end_set_at = e.last_at, end_before = NULL,
             end_changes = CASE WHEN e.withdrawals > 0 THEN e.changes + 1 ELSE e.changes END
        FROM (SELECT record_id, count(*)::int AS changes, max(changed_at) AS last_at,
                     count(*) FILTER (WHERE change <> 'end')::int AS withdrawals
                FROM (SELECT price_record_id AS record_id, changed_at, change FROM price_change WHERE change = 'end'
                      UNION ALL
                      SELECT (ended->>'id')::bigint, c.changed_at, c.change
                        FROM price_change c, jsonb_array_elements(coalesce(c.effect->'ends', '[]'::jsonb)) ended
                       WHERE c.change IN ('withdraw_price', 'withdraw_end')) ends
               WHERE record_id IS NOT NULL
               GROUP BY record_id) e
       WHERE r.id = e.record_id`);
    await db.query(`ALTER TABLE price_record ENABLE TRIGGER price_record_keep_history`);
  }
}

/**
 * The runtime role's grants (RuntimeGrants1764000010500), with this migration's tables and functions
 * (exported: GroupRoles1764000013000 puts it back in its `down`):
 * it reads the clock's settings and dates its writes (the two functions); it never writes
 * price_book_write or uses a sequence itself (the functions and the log's trigger do, as their owner).
 */
export const GRANTS_OF_1764000011000 = `
      FUNCTION ${PRICING_RUNTIME_GRANTS}(runtime name) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        EXECUTE format('REVOKE ALL ON price_record, price_change, product_availability, price_book_version,
                                      price_book_clock, price_book_write FROM %I', runtime);
        EXECUTE format('REVOKE ALL ON SEQUENCE %s, price_change_id, %s FROM %I',
                       pg_get_serial_sequence('price_record', 'id'), pg_get_serial_sequence('price_book_write', 'id'),
                       runtime);
        EXECUTE format('REVOKE ALL ON FUNCTION ${PUBLICATION_INSTANT}(interval, interval),
                        ${NEXT_PUBLICATION_INSTANT}(interval, interval) FROM %I', runtime);
        EXECUTE format('GRANT SELECT, INSERT, DELETE ON price_record TO %I', runtime);
        EXECUTE format('GRANT UPDATE (valid_until, superseded_by) ON price_record TO %I', runtime);
        EXECUTE format('GRANT SELECT, INSERT ON price_change TO %I', runtime);
        EXECUTE format('GRANT SELECT, INSERT ON product_availability TO %I', runtime);
        EXECUTE format('GRANT UPDATE (on_sale, updated_at) ON product_availability TO %I', runtime);
        EXECUTE format('GRANT SELECT ON price_book_version TO %I', runtime);
        EXECUTE format('GRANT UPDATE (version) ON price_book_version TO %I', runtime);
        EXECUTE format('GRANT SELECT ON price_book_clock TO %I', runtime);
        EXECUTE format('GRANT EXECUTE ON FUNCTION ${PUBLICATION_INSTANT}(interval, interval),
                        ${NEXT_PUBLICATION_INSTANT}(interval, interval) TO %I', runtime);
      END $$`;

/** The price book's advisory lock (PriceBookWrites: PRICE_BOOK_LOCK). */
const PRICE_BOOK_LOCK_KEY = 4_705_212_001;

/**
 * The insert trigger of price_record (1764000002000, 1764000006000), once per statement: every
 * inserted record is recorded at the write's publication instant with no end change of its own,
 * and a past `valid_from` only where its key and scope had no record before the write.
 */
const KEEP_HISTORY_ON_INSERT = `
      FUNCTION price_record_keep_history_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        instant timestamptz := ${PUBLICATION_INSTANT}();
        refused record;
      BEGIN
        SELECT i.id, i.recorded_at INTO refused FROM inserted i WHERE i.recorded_at IS DISTINCT FROM instant LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'price record %: recorded_at is the write''s publication instant %, set by the database, not %',
            refused.id, instant, refused.recorded_at USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        SELECT i.id INTO refused FROM inserted i
         WHERE i.end_changes <> 0 OR i.end_set_at IS NOT NULL OR i.end_before IS NOT NULL LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'price record %: end_set_at, end_before and end_changes are kept by the database', refused.id
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
${PAST_OVER_RECORDS_BY_SCOPE.replaceAll('now()', 'instant')}
        IF FOUND THEN
          RAISE EXCEPTION 'price record %: valid_from % is before the write''s publication instant and % of % already has records; a change starts then or later',
            refused.id, refused.valid_from, coalesce('organization ' || refused.organization_id, 'the list'),
            refused.product_key USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NULL;
      END $$`;

/** What the update trigger keeps of an end's change. */
const TRACK_END_CHANGES = `
        IF NEW.valid_until IS DISTINCT FROM OLD.valid_until THEN
          NEW.end_set_at := instant;
          NEW.end_before := OLD.valid_until;
          NEW.end_changes := OLD.end_changes + 1;
        ELSE
          NEW.end_set_at := OLD.end_set_at;
          NEW.end_before := OLD.end_before;
          NEW.end_changes := OLD.end_changes;
        END IF;`;

/**
 * The history trigger of price_record (1764000000000): only the end of a price may move, to the
 * write's instant or later, and a past end never; only what has not taken effect may be deleted.
 * `instant` is that instant's SQL; `track` what else an update does.
 */
function keepHistory(instant: string, track: string): string {
  return `
      FUNCTION price_record_keep_history() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        instant timestamptz := ${instant};
      BEGIN
        IF TG_OP = 'DELETE' THEN
          IF OLD.valid_from <= instant THEN
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
           AND OLD.valid_until <= instant THEN
          RAISE EXCEPTION 'price record % ended at % and its end cannot move', OLD.id, OLD.valid_until
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF NEW.valid_until IS DISTINCT FROM OLD.valid_until AND NEW.valid_until < instant THEN
          RAISE EXCEPTION 'price record %: an end may be set to now or later, not to %', OLD.id, NEW.valid_until
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;${track}
        RETURN NEW;
      END $$`;
}
