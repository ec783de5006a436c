import { sortNatural } from '../catalogue/natural-order';
import { formatInstant } from '../core/instant';
import type { PriceRecord } from '../core/price-record';
import { escapeJson, quoteValue } from '../errors/bounded-text';
import { PriceBookRefusedError } from '../errors/pricing-error';
import { sortInBookOrder } from '../price-book/book-order';
import { prettyJsonParts } from './text-parts';

/**
 * The longest text value `export` and `show` print (docs/price-book-cli.md, "export and show"):
 * far above any value the book's rules allow (product keys and organization ids of 64 characters,
 * amounts of 40), so only a record written around the rules has a longer one. Such a value is
 * never cut (the output is a data format): the command refuses, naming the record.
 */
export const MAX_PRINTED_VALUE = 1024;

/**
 * The whole price book in the import format, in parts (text-parts.ts): list prices first, then
 * organizations, each by product key in natural order and `valid_from`. The same state gives the
 * same bytes, and importing the output changes nothing. Characters a terminal acts on or hides,
 * which JSON.stringify leaves raw (bidirectional and C1 controls, U+2028, U+2029), are written as
 * `\u` escapes: the same values, read back exactly. A text value longer than MAX_PRINTED_VALUE
 * refuses the whole export before anything is printed (PriceBookRefusedError naming each record).
 */
export function priceBookParts(
  records: readonly PriceRecord[],
  availability: ReadonlyMap<string, boolean>,
): Generator<string, void, void> {
  const problems = unprintableValues(records, availability);
  if (problems.length > 0) throw new PriceBookRefusedError(problems);
  const products = sortNatural([...availability.entries()], ([key]) => key).map(([productKey, onSale]) => ({
    product_key: productKey,
    on_sale: onSale,
  }));
  return escaped(prettyJsonParts({ products }, 'prices', bookEntries(sortInBookOrder(records, (r) => r))));
}

function* escaped(parts: Iterable<string>): Generator<string, void, void> {
  for (const part of parts) yield escapeJson(part);
}

/** Each record and product whose text values `export` would not print exactly in bounded lines. */
function unprintableValues(records: readonly PriceRecord[], availability: ReadonlyMap<string, boolean>): string[] {
  const problems: string[] = [];
  const tooLong = (value: string | null): boolean => value !== null && value.length > MAX_PRINTED_VALUE;
  for (const key of availability.keys()) {
    if (tooLong(key)) problems.push(`export: a product's key ${quoteValue(key)} ${longerThanPrinted}`);
  }
  for (const record of records) {
    const fields = { product_key: record.productKey, organization_id: record.organizationId };
    const long = Object.entries({ ...fields, unit_type: record.unitType, amount: record.amount }).filter(([, value]) =>
      tooLong(value),
    );
    if (long.length === 0) continue;
    const names = long.map(([field, value]) => `${field} (${value!.length} characters)`).join(', ');
    problems.push(
      `export: price record ${record.id} (product_key ${quoteValue(record.productKey)}) has ${names}: ${longerThanPrinted}`,
    );
  }
  return problems;
}

const longerThanPrinted =
  `longer than ${MAX_PRINTED_VALUE} characters, which no price book's rules allow (written around them?); ` +
  'export prints a value exactly or not at all: correct the record';

/**
 * The body `show` prints: `body` (the JSON GET /v1/pricing would serve) as it is, or with the
 * characters JSON.stringify leaves raw escaped (the same document); refused, naming each entry,
 * when a text value of it is longer than MAX_PRINTED_VALUE, as `export` is. Linear in the body.
 */
export function printableListBody(body: Buffer): Buffer {
  const text = body.toString('utf8');
  const problems: string[] = [];
  // The list's own document: families of prices, each value a string, a number, null or an object of strings.
  const list = JSON.parse(text) as { families?: { prices?: Record<string, unknown>[] }[] };
  for (const [f, family] of (list.families ?? []).entries()) {
    for (const [p, price] of (family.prices ?? []).entries()) {
      const values = Object.entries(price).flatMap(([field, value]) =>
        value !== null && typeof value === 'object' ? Object.entries(value) : [[field, value] as const],
      );
      const long = values.filter(([, value]) => typeof value === 'string' && value.length > MAX_PRINTED_VALUE);
      if (long.length === 0) continue;
      const names = long.map(([field, value]) => `${field} (${(value as string).length} characters)`).join(', ');
      const key = typeof price.product_key === 'string' ? ` (product_key ${quoteValue(price.product_key)})` : '';
      problems.push(`show: families[${f}].prices[${p}]${key} has ${names}: ${longerThanPrinted}`);
    }
  }
  if (problems.length > 0) throw new PriceBookRefusedError(problems);
  const escapedText = escapeJson(text);
  return escapedText === text ? body : Buffer.from(escapedText, 'utf8');
}

/** The whole price book in one string, for a book known to be small. */
export function formatPriceBook(records: readonly PriceRecord[], availability: ReadonlyMap<string, boolean>): string {
  return [...priceBookParts(records, availability)].join('');
}

function* bookEntries(records: readonly PriceRecord[]): Generator<Record<string, unknown>, void, void> {
  for (const r of records) {
    yield {
      product_key: r.productKey,
      ...(r.organizationId !== null && { organization_id: r.organizationId }),
      unit_type: r.unitType,
      unit_count: r.unitCount,
      amount: r.amount,
      valid_from: formatInstant(r.validFrom),
      valid_until: r.validUntil === null ? null : formatInstant(r.validUntil),
    };
  }
}
