import { formatInstant, parseInstant } from '../core/instant';
import { quoteValue } from '../errors/bounded-text';
import type { AtApply, ImportChange, PriceTerms } from './describe-import';
import { isObject, PRICE_FIELDS } from './price-book';

// A reviewed plan (docs/price-book-cli.md, "Reviewed plans") is applied exactly as it reads. Its
// changes are what the book makes, field by field; an instant that only the apply gives (an entry
// without valid_from starts when it is applied, and ends the open price before it then) is written
// as AT_APPLY, never as an instant: which entries start at the apply instant is the plan's
// structure, not a value that happens to match. Pure: the plan file is read in cli/plan-file.ts,
// the book's changes compared in PriceBookService.

/** How a plan writes the apply's own instant, in `valid_from` and `valid_until`: not an instant at all. */
export const AT_APPLY = 'at apply';

/** An instant of a plan: epoch milliseconds, or the apply's own. */
export type PlanInstant = number | typeof AT_APPLY;

/** A price's terms as a plan gives them (an `end`'s `validUntil` is its new end). */
export interface PlanTerms {
  readonly productKey: string;
  readonly organizationId: string | null;
  readonly unitType: string;
  readonly unitCount: number;
  readonly amount: string;
  readonly validFrom: PlanInstant;
  /** `null` for no end. */
  readonly validUntil: PlanInstant | null;
}

/** One change of a plan: an ImportChange with the apply's own instants as AT_APPLY. */
export type PlanChange =
  | { readonly kind: 'new'; readonly price: PlanTerms }
  | { readonly kind: 'change'; readonly price: PlanTerms; readonly ends: PlanTerms }
  | { readonly kind: 'end'; readonly price: PlanTerms }
  | { readonly kind: 'availability'; readonly productKey: string; readonly onSale: boolean };

/** A change of an import as a plan gives it: the instants its AtApply names are AT_APPLY. */
export function planChangeOf(change: ImportChange): PlanChange {
  return asPlanChange(change, change.kind === 'availability' ? {} : change);
}

/** A change of an import with every instant as the run had it: what `import --json` prints. */
export function changeAsRun(change: ImportChange): PlanChange {
  return asPlanChange(change, {});
}

function asPlanChange(change: ImportChange, atApply: AtApply): PlanChange {
  switch (change.kind) {
    case 'new':
      return { kind: 'new', price: planTerms(change.price, atApply) };
    case 'change':
      return { kind: 'change', price: planTerms(change.price, atApply), ends: planTerms(change.ends, {}) };
    case 'end':
      return {
        kind: 'end',
        price: { ...planTerms(change.price, {}), validUntil: atApply.endsAtApply ? AT_APPLY : change.validUntil },
      };
    case 'availability':
      return { kind: 'availability', productKey: change.productKey, onSale: change.onSale };
  }
}

function planTerms(price: PriceTerms, atApply: AtApply): PlanTerms {
  return {
    productKey: price.productKey,
    organizationId: price.organizationId,
    unitType: price.unitType,
    unitCount: price.unitCount,
    amount: price.amount,
    validFrom: atApply.startsAtApply ? AT_APPLY : price.validFrom,
    validUntil: atApply.endsAtApply ? AT_APPLY : price.validUntil,
  };
}

/**
 * A change as JSON, fields named as in the price book file: as `import --json` gives it
 * (importChangeJson), and as a plan file does, the apply's own instants written "at apply".
 */
export function planChangeJson(change: PlanChange): Record<string, unknown> {
  switch (change.kind) {
    case 'new':
    case 'end':
      return { change: change.kind, ...termsJson(change.price) };
    case 'change':
      return { change: 'change', ...termsJson(change.price), ends: termsJson(change.ends) };
    case 'availability':
      return { change: 'availability', product_key: change.productKey, on_sale: change.onSale };
  }
}

function termsJson(price: PlanTerms): Record<string, unknown> {
  return {
    product_key: price.productKey,
    organization_id: price.organizationId,
    unit_type: price.unitType,
    unit_count: price.unitCount,
    amount: price.amount,
    valid_from: instantJson(price.validFrom),
    valid_until: price.validUntil === null ? null : instantJson(price.validUntil),
  };
}

function instantJson(instant: PlanInstant): string {
  return instant === AT_APPLY ? AT_APPLY : formatInstant(instant);
}

/** The fields of each kind of change: a price's are a book entry's. */
const FIELDS: Readonly<Record<PlanChange['kind'], ReadonlySet<string>>> = {
  new: new Set(['change', ...PRICE_FIELDS]),
  change: new Set(['change', ...PRICE_FIELDS, 'ends']),
  end: new Set(['change', ...PRICE_FIELDS]),
  availability: new Set(['change', 'product_key', 'on_sale']),
};

/** Why a plan's change is not one: the field at fault (`.valid_from`, `.ends.amount`) and what is wrong. */
class NotAChange extends Error {}

/**
 * Reads one change of a plan file's JSON (any value): a PlanChange, or what is wrong with it, in
 * one line, the field first (`.valid_from: ...`); a value is quoted at most 80 characters long.
 * Exactly the fields `import --json` gives that kind of change, each of its type; an instant is an
 * RFC 3339 timestamp with an offset, or "at apply". Time linear in the text of the change.
 */
export function parsePlanChange(json: unknown): { readonly change: PlanChange } | { readonly problem: string } {
  try {
    return { change: readChange(json) };
  } catch (error) {
    if (error instanceof NotAChange) return { problem: error.message };
    throw error;
  }
}

function readChange(json: unknown): PlanChange {
  const change = objectAt(json, '');
  const kind = change.change;
  if (kind !== 'new' && kind !== 'change' && kind !== 'end' && kind !== 'availability') {
    throw new NotAChange(`.change: ${describeJson(kind)} is not "new", "change", "end" or "availability"`);
  }
  onlyFields(change, FIELDS[kind], '', `a change "${kind}"`);
  switch (kind) {
    case 'new':
    case 'end':
      return { kind, price: readTerms(change, '') };
    case 'change':
      return { kind, price: readTerms(change, ''), ends: readTerms(objectAt(change.ends, '.ends'), '.ends') };
    case 'availability': {
      const onSale = change.on_sale;
      if (typeof onSale !== 'boolean') throw new NotAChange(`.on_sale: ${describeJson(onSale)} is not true or false`);
      return { kind, productKey: text(change, 'product_key', ''), onSale };
    }
  }
}

function readTerms(terms: Record<string, unknown>, at: string): PlanTerms {
  if (at !== '') onlyFields(terms, PRICE_FIELDS, at, 'a price');
  const unitCount = terms.unit_count;
  if (typeof unitCount !== 'number' || !Number.isSafeInteger(unitCount)) {
    throw new NotAChange(`${at}.unit_count: ${describeJson(unitCount)} is not an integer`);
  }
  const organizationId = terms.organization_id;
  if (organizationId !== null && typeof organizationId !== 'string') {
    throw new NotAChange(`${at}.organization_id: ${describeJson(organizationId)} is not a string or null`);
  }
  return {
    productKey: text(terms, 'product_key', at),
    organizationId,
    unitType: text(terms, 'unit_type', at),
    unitCount,
    amount: text(terms, 'amount', at),
    validFrom: instant(terms.valid_from, `${at}.valid_from`),
    validUntil: terms.valid_until === null ? null : instant(terms.valid_until, `${at}.valid_until`),
  };
}

function objectAt(json: unknown, at: string): Record<string, unknown> {
  if (!isObject(json)) throw new NotAChange(`${at} is not an object`);
  return json;
}

function onlyFields(json: Record<string, unknown>, fields: ReadonlySet<string>, at: string, what: string): void {
  for (const key of Object.keys(json)) {
    if (!fields.has(key)) throw new NotAChange(`${at} has the field ${quoteValue(key)}, which ${what} has not`);
  }
  for (const key of fields) {
    if (!Object.hasOwn(json, key)) throw new NotAChange(`${at}.${key} is missing`);
  }
}

function text(json: Record<string, unknown>, key: string, at: string): string {
  const value = json[key];
  if (typeof value !== 'string') throw new NotAChange(`${at}.${key}: ${describeJson(value)} is not a string`);
  return value;
}

function instant(value: unknown, at: string): PlanInstant {
  if (value === AT_APPLY) return AT_APPLY;
  const parsed = typeof value === 'string' ? parseInstant(value) : undefined;
  if (parsed === undefined) {
    throw new NotAChange(
      `${at}: ${describeJson(value)} is not an RFC 3339 timestamp with an offset, nor "${AT_APPLY}"`,
    );
  }
  return parsed.getTime();
}

/** A JSON value in a message, bounded: strings quoted (80 characters at most), other kinds named. */
function describeJson(value: unknown): string {
  if (typeof value === 'string') return quoteValue(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return value === undefined ? 'nothing' : 'an object';
}

/** Where a plan and the changes a book makes now part: the first change that differs, and the first field. */
export interface PlanDifference {
  /** Index of the first change that differs (either list may have none there). */
  readonly index: number;
  /** The field, as the plan file names it (`valid_from`, `ends.amount`), when both have a change there. */
  readonly field?: string;
  readonly planned?: unknown;
  readonly now?: unknown;
}

/**
 * The first place where the book's changes now differ from the plan's, field by field, or
 * `undefined` when they are the same: the same changes in the same order, every field equal. An
 * instant given as AT_APPLY equals only AT_APPLY (the book's entry has no `valid_from`); an
 * instant given as a timestamp, only that instant. O(total size).
 */
export function planDifference(planned: readonly PlanChange[], now: readonly PlanChange[]): PlanDifference | undefined {
  const common = Math.min(planned.length, now.length);
  for (let index = 0; index < common; index++) {
    const differing = fieldDifference(planChangeJson(planned[index]), planChangeJson(now[index]), '');
    if (differing) return { index, ...differing };
  }
  return planned.length === now.length ? undefined : { index: common };
}

function fieldDifference(
  planned: Record<string, unknown>,
  now: Record<string, unknown>,
  at: string,
): { field: string; planned: unknown; now: unknown } | undefined {
  for (const key of new Set([...Object.keys(now), ...Object.keys(planned)])) {
    const [a, b] = [planned[key], now[key]];
    if (isRecord(a) && isRecord(b)) {
      const inside = fieldDifference(a, b, `${at}${key}.`);
      if (inside) return inside;
    } else if (a !== b) {
      return { field: `${at}${key}`, planned: a, now: b };
    }
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** A field's value in a refusal: "at apply" says what it means; others as JSON, bounded. */
export function describePlanValue(value: unknown): string {
  if (value === AT_APPLY) return `"${AT_APPLY}" (the apply's instant: the book's entry has no valid_from)`;
  return describeJson(value);
}
