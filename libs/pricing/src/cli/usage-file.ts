// The usage file of `focus` (docs/price-book-cli.md, "focus"): CSV (RFC 4180) with a header that
// names its columns, one usage a record. Text from outside: read in one linear pass, every value
// checked, every problem named by its line (usage-file.properties.spec.ts).
import { explainProductKey, parseProductKey, type UnitType } from '../catalogue/catalogue';
import { listProblems, MAX_LISTED_PROBLEMS, quoteValue } from '../errors/bounded-text';
import { parseInstant } from '../core/instant';
import { plainQuantity } from '../core/quote';
import { ORGANIZATION_ID } from '../price-book/price-book';
import { PriceBookFileError, readFileBytes, textOf, type ReadPriceBookOptions } from './price-book-file';

/** The columns a usage file may have, in any order; the first three are required. */
export const USAGE_COLUMNS = ['product_key', 'start', 'end', 'organization_id', 'quantity', 'size_gib'] as const;
type UsageColumn = (typeof USAGE_COLUMNS)[number];
const REQUIRED_COLUMNS: readonly UsageColumn[] = ['product_key', 'start', 'end'];

/** One usage of the file, checked. */
export interface UsageFileRow {
  /** The line its record starts on (the header is line 1). */
  readonly line: number;
  readonly productKey: string;
  readonly unitType: UnitType;
  /** Whose agreed prices apply (and whose billing account it is); `null`: list prices. */
  readonly organizationId: string | null;
  readonly from: Date;
  readonly to: Date;
  /** The quantity of a metered family, in its unit; `null` for the families billed in time. */
  readonly quantity: string | null;
  /** The size of a `gib_hours` family; `null` for the others. */
  readonly sizeGib: string | null;
}

/** A usage file's rows, or every problem found (at most MAX_LISTED_PROBLEMS + 1 are collected). */
export type ParsedUsageFile = { readonly rows: readonly UsageFileRow[] } | { readonly problems: readonly string[] };

/**
 * Reads the usage file `path` (a regular file of at most `maxBytes`: PRICE_BOOK_MAX_BYTES) and
 * checks it; PriceBookFileError naming every problem when it cannot be read or breaks its format.
 */
export async function readUsageFile(
  path: string,
  options: ReadPriceBookOptions = {},
): Promise<readonly UsageFileRow[]> {
  const parsed = parseUsageCsv(textOf(path, await readFileBytes(path, options)));
  if ('problems' in parsed) {
    throw new PriceBookFileError(`${path}: refused, nothing was priced:\n  ${listProblems(parsed.problems)}`);
  }
  return parsed.rows;
}

/** Records of CSV text: each with the line it starts on, or the first problem of its syntax. */
type Records = { readonly records: readonly CsvRecord[] } | { readonly problem: string };
interface CsvRecord {
  readonly line: number;
  readonly fields: readonly string[];
}

const QUOTE = 34; // "
const COMMA = 44;
const LF = 10;
const CR = 13;

/**
 * RFC 4180 records: fields separated by commas, records by CRLF or LF (a last one may end without
 * it); a field with a comma, quote or line break is quoted, its quotes doubled. A byte order mark
 * at the start is skipped. Every character is looked at once.
 */
function recordsOf(text: string): Records {
  const records: CsvRecord[] = [];
  const end = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  const lineEndAt = (at: number) =>
    text.charCodeAt(at) === LF || (text.charCodeAt(at) === CR && text.charCodeAt(at + 1) === LF);
  while (i < end) {
    const first = line;
    const fields: string[] = [];
    for (;;) {
      let value = '';
      if (text.charCodeAt(i) === QUOTE) {
        let from = i + 1;
        for (;;) {
          const close = text.indexOf('"', from);
          if (close < 0) return { problem: `line ${line}: a quoted field is not closed` };
          value += text.slice(from, close);
          for (let at = from; at < close; at++) if (text.charCodeAt(at) === LF) line++;
          if (text.charCodeAt(close + 1) !== QUOTE) {
            i = close + 1;
            break;
          }
          value += '"';
          from = close + 2;
        }
        if (i < end && text.charCodeAt(i) !== COMMA && !lineEndAt(i)) {
          return { problem: `line ${line}: text after the closing quote of a field` };
        }
      } else {
        const from = i;
        for (; i < end && text.charCodeAt(i) !== COMMA && !lineEndAt(i); i++) {
          if (text.charCodeAt(i) === QUOTE)
            return { problem: `line ${line}: a quote inside a field that is not quoted` };
        }
        value = text.slice(from, i);
      }
      fields.push(value);
      if (i >= end) break;
      if (text.charCodeAt(i) === COMMA) {
        i++;
        continue;
      }
      i += text.charCodeAt(i) === CR ? 2 : 1;
      line++;
      break;
    }
    records.push({ line: first, fields });
  }
  return { records };
}

/** A usage file's text, checked: its rows, or every problem (never throws). */
export function parseUsageCsv(text: string): ParsedUsageFile {
  const read = recordsOf(text);
  if ('problem' in read) return { problems: [read.problem] };
  const [header, ...records] = read.records;
  if (header === undefined) return { problems: ['the file is empty: a header line is needed'] };
  const problems: string[] = [];
  const position = new Map<UsageColumn, number>();
  header.fields.forEach((name, index) => {
    if (problems.length > MAX_LISTED_PROBLEMS) return; // enough to list
    if (!(USAGE_COLUMNS as readonly string[]).includes(name)) {
      problems.push(`line 1: unknown column ${quoteValue(name)} (the columns: ${USAGE_COLUMNS.join(', ')})`);
    } else if (position.has(name as UsageColumn)) {
      problems.push(`line 1: the column ${name} is named twice`);
    } else position.set(name as UsageColumn, index);
  });
  for (const name of REQUIRED_COLUMNS) {
    if (!position.has(name) && problems.length <= MAX_LISTED_PROBLEMS)
      problems.push(`line 1: the column ${name} is missing`);
  }
  if (problems.length > 0) return { problems };
  const rows: UsageFileRow[] = [];
  for (const record of records) {
    if (problems.length > MAX_LISTED_PROBLEMS) break; // enough to list: the rest is not read
    const row = rowOf(record, header.fields.length, position, problems);
    if (row) rows.push(row);
  }
  return problems.length > 0 ? { problems } : { rows };
}

/** One record as a usage, checked; `undefined` after adding its problems to `problems`. */
function rowOf(
  { line, fields }: CsvRecord,
  width: number,
  position: ReadonlyMap<UsageColumn, number>,
  problems: string[],
): UsageFileRow | undefined {
  const at = `line ${line}`;
  if (fields.length !== width) {
    problems.push(`${at}: ${fields.length} field${fields.length === 1 ? '' : 's'}, where the header has ${width}`);
    return undefined;
  }
  const value = (column: UsageColumn): string => {
    const index = position.get(column);
    return index === undefined ? '' : fields[index];
  };
  const before = problems.length;
  const productKey = value('product_key');
  const parts = parseProductKey(productKey);
  if (!parts) problems.push(`${at}: product_key ${explainProductKey(productKey)}`);
  const organization = value('organization_id');
  if (organization !== '' && !ORGANIZATION_ID.test(organization)) {
    problems.push(
      `${at}: organization_id ${quoteValue(organization)} is not 1 to 64 letters, digits, "_", "." or "-" starting with a letter or digit`,
    );
  }
  const instant = (column: 'start' | 'end'): Date | undefined => {
    const parsed = parseInstant(value(column));
    if (!parsed)
      problems.push(`${at}: ${column} ${quoteValue(value(column))} is not an RFC 3339 timestamp with an offset`);
    return parsed;
  };
  const from = instant('start');
  const to = instant('end');
  const unitType = parts?.family.unitType;
  const metered = unitType !== undefined && unitType !== 'seconds' && unitType !== 'gib_hours';
  if (from && to && (metered ? from >= to : from > to)) {
    problems.push(`${at}: end ${value('end')} is not after start ${value('start')}`);
  }
  const amount = (column: 'quantity' | 'size_gib', wanted: boolean): string | null => {
    const text = value(column);
    if (!wanted) {
      if (text !== '') problems.push(`${at}: ${column} is given, but ${unitType} usage has none`);
      return null;
    }
    if (plainQuantity(text) === undefined) {
      problems.push(`${at}: ${column} ${quoteValue(text)} is not a non-negative decimal of at most 60 digits`);
    }
    return text;
  };
  const quantity = unitType === undefined ? null : amount('quantity', metered);
  const sizeGib = unitType === undefined ? null : amount('size_gib', unitType === 'gib_hours');
  if (problems.length > before || !parts || !from || !to) return undefined;
  return {
    line,
    productKey,
    unitType: parts.family.unitType,
    organizationId: organization === '' ? null : organization,
    from,
    to,
    quantity,
    sizeGib,
  };
}
