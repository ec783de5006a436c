// What the specs of usage pricing share: named prices, windows, and how a cost reads.
import { byValidFrom } from './price-record';
import { InvalidUsageError } from '../errors/pricing-error';
import { thrownAs } from '../errors/thrown.fixture';
import type { PriceRecord } from './price-record';
import { priceRecord } from './price-record.fixture';
import type { ApplicablePrices, UsageCost } from './usage';

// Instants of January and February 2026, at midnight UTC unless a time is given.
export const jan = (day: number, time = '00:00:00.000') => new Date(`2026-01-${String(day).padStart(2, '0')}T${time}Z`);
export const feb = (day: number, time = '00:00:00.000') => new Date(`2026-02-${String(day).padStart(2, '0')}T${time}Z`);

/** Each held price by the name a test gives it (its id is a number), to name the lines' prices. */
const names = new Map<PriceRecord, string>();
export function named(name: string, fields: Parameters<typeof priceRecord>[0]): PriceRecord {
  const price = priceRecord(fields);
  names.set(price, name);
  return price;
}
export const nameOf = (price: PriceRecord | null): string | null => (price && names.get(price)) ?? null;

// storage.gp1, per 730 GiB-hours: 0.0480 until 1 February, then 0.0500.
export const listA = named('list-A', { amount: '0.0480', validFrom: jan(1), validUntil: feb(1) });
export const listB = named('list-B', { amount: '0.0500', validFrom: feb(1) });
/** The prices that apply, each scope sorted by valid_from as the prices in memory hold them. */
export const prices = (list: PriceRecord[], organization: PriceRecord[] = []): ApplicablePrices => ({
  list: [...list].sort(byValidFrom),
  organization: [...organization].sort(byValidFrom),
});
export const orgPrice = (id: string, validFrom: Date, validUntil: Date | null) =>
  named(id, { organizationId: 'org-1', amount: '0.0400', validFrom, validUntil });

/** Each line as [from, to, price id or null, quantity, cost], for exact comparison. */
export function rows(cost: UsageCost) {
  return cost.lines.map((line) => [
    line.from.toISOString(),
    line.to.toISOString(),
    nameOf(line.price),
    line.quantity,
    line.cost,
  ]);
}

/** Expects `cost` to be exactly `lines` (each as `rows` gives it), with this total, complete or not. */
export function expectCost(
  cost: UsageCost,
  { total, complete }: Pick<UsageCost, 'total' | 'complete'>,
  lines: ReturnType<typeof rows>,
): void {
  expect(rows(cost)).toEqual(lines);
  expect(cost.total).toBe(total);
  expect(cost.complete).toBe(complete);
}

export const volume = (from: Date, to: Date) => ({ from, to, sizeGib: '100' });

/** What `run` threw, which must be an InvalidUsageError (fails the test when nothing is thrown). */
export function refusal(run: () => unknown): InvalidUsageError {
  return thrownAs(InvalidUsageError, run);
}
