import type { MigrationInterface, QueryRunner } from 'typeorm';
import { NEXT_PUBLICATION_INSTANT } from './1764000011000-one-clock';

/**
 * A dry run writes nothing anywhere (docs/decisions.md, "A dry run reads"): it plans in a READ ONLY
 * transaction, at the instant pricing_next_publication_instant gives. That function looked for its
 * own transaction's write with pg_current_xact_id(), which gives the transaction an id (an xid taken,
 * and a commit or abort record for it) even when it is read only: it now asks with
 * pg_current_xact_id_if_assigned(), which takes none, and a transaction without one has written
 * nothing yet. Same signature and owner: the runtime role's grant (RuntimeGrants) stays.
 */
export class ReadOnlyDryRun1764000012000 implements MigrationInterface {
  name = 'ReadOnlyDryRun1764000012000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `CREATE OR REPLACE ${nextPublicationInstant(await schemaOf(db), 'pg_current_xact_id_if_assigned()')}`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`CREATE OR REPLACE ${nextPublicationInstant(await schemaOf(db), 'pg_current_xact_id()')}`);
  }
}

async function schemaOf(db: QueryRunner): Promise<string> {
  const [{ schema }] = (await db.query(`SELECT quote_ident(current_schema()) AS schema`)) as { schema: string }[];
  return schema;
}

/**
 * pricing_next_publication_instant as OneClock1764000011000 made it (SECURITY DEFINER, its search
 * path fixed to `schema` and pg_temp last), finding its transaction's write with `xid`.
 */
function nextPublicationInstant(schema: string, xid: string): string {
  // The body as OneClock1764000011000 wrote it, but for `xid`: its down gives back the same source.
  const body = `DECLARE
        instant timestamptz;
      BEGIN
        SELECT published_at INTO instant FROM price_book_write WHERE xid = ${xid};
        IF FOUND THEN RETURN instant; END IF;
        RETURN pricing_publication_instant_after(clock_timestamp(), delay, takes);
      END`;
  return `FUNCTION ${NEXT_PUBLICATION_INSTANT}(delay interval DEFAULT NULL, takes interval DEFAULT NULL) RETURNS timestamptz
       LANGUAGE plpgsql SECURITY DEFINER SET search_path = ${schema}, pg_temp AS $fn$ ${body} $fn$`;
}
