// The pure part of the price page: names and units in words, the calculator's exact arithmetic,
// and what changed between two price lists. No DOM, no fetch: unit-tested under Jest
// (prices.spec.ts) and loaded by app.js in the browser, where an import map resolves
// 'decimal.js' to the library's ESM build served by the page server.
import Decimal from 'decimal.js';

// Exact products of a 40-character amount and quantities of up to 40 digits each (GiB × hours)
// fit well inside this precision; divisions are done on integers (see exactQuotient).
const Exact = Decimal.clone({ precision: 200, toExpNeg: -300, toExpPos: 300 });

/** Section 2.4 of the API document, in words: the family's name, what one product is called, what is billed. */
const FAMILIES = {
  compute_instance: { name: 'Compute instances', billed: 'Time an instance runs, per instance type.' },
  network_floating_ip: {
    name: 'Floating IPs',
    product: 'Floating IP',
    billed: 'Time a Floating IP is allocated to the project.',
  },
  network_nat_gateway: {
    name: 'NAT gateways',
    product: 'NAT gateway',
    billed: 'Time a NAT gateway exists. The Floating IP it holds is billed separately, as a Floating IP.',
  },
  network_vpc_egress: {
    name: 'VPC egress traffic',
    product: 'Egress traffic',
    billed: 'Traffic from a VPC to the internet.',
  },
  network_vpc_ingress: {
    name: 'VPC ingress traffic',
    product: 'Ingress traffic',
    billed: 'Traffic from the internet into a VPC.',
  },
  network_vpc_internal: {
    name: 'VPC internal traffic',
    product: 'Internal traffic',
    billed: 'Traffic routed between two subnets of the same VPC.',
  },
  storage_volume: {
    name: 'Volumes',
    billed: 'Provisioned size of a volume for the time it exists, per storage class.',
  },
  storage_snapshot: {
    name: 'Volume snapshots',
    product: 'Snapshot',
    billed: "Size of a snapshot's source volume for the time the snapshot exists.",
  },
  observability_custom_metric: {
    name: 'Custom metrics',
    product: 'Custom metric',
    billed: 'A metric you submit, per month kept. Submitting your own metrics is not supported yet: nothing is billed.',
  },
  observability_api_request: {
    name: 'Metrics API requests',
    product: 'Metrics query',
    billed: 'Each successful metrics query, however many metrics or data points it returns.',
  },
  observability_ingested_sample: {
    name: 'Ingested metric samples',
    product: 'Sample',
    billed:
      'Each value collected for your instances, volumes and network interfaces: one per metric and resource every 30 seconds while the instance runs.',
  },
};

/** "compute_instance" → "Compute instances"; a family this page does not know yet → its identifier in words. */
export function familyName(family) {
  return FAMILIES[family]?.name ?? capitalize(family.replaceAll('_', ' '));
}

/** What the family bills, or '' for a family this page does not know. */
export function familyBilled(family) {
  return FAMILIES[family]?.billed ?? '';
}

/** What a price is for: the instance type or storage class, else the family's product in words. */
export function productName(family, price) {
  const dimensions = price.dimensions ?? {};
  return dimensions.instance_type ?? dimensions.storage_class ?? FAMILIES[family]?.product ?? price.product_key;
}

/** "per hour", "per GiB-month", "per GB", "per 1,000,000 samples", "per 2 minutes", "per metric-month". */
export function unitWords(unitType, unitCount) {
  const per = (count, one, many = `${one}s`) =>
    count === 1 ? `per ${one}` : `per ${groupDigits(String(count))} ${many}`;
  switch (unitType) {
    case 'seconds':
      if (unitCount % 3600 === 0) return per(unitCount / 3600, 'hour');
      if (unitCount % 60 === 0) return per(unitCount / 60, 'minute');
      return per(unitCount, 'second');
    case 'gib_hours':
      if (unitCount % 730 === 0) return per(unitCount / 730, 'GiB-month');
      return per(unitCount, 'GiB-hour');
    case 'gb':
      return per(unitCount, 'GB', 'GB');
    case 'metric_months':
      return per(unitCount, 'metric-month');
    case 'requests':
      return per(unitCount, 'request');
    case 'samples':
      return per(unitCount, 'sample');
    default:
      return per(unitCount, unitType.replaceAll('_', ' '), unitType.replaceAll('_', ' '));
  }
}

/** "0.0305" → "€0.0305", "1234.5" → "€1,234.5": the published digits, never rounded. */
export function formatEuro(amount) {
  const [whole, fraction] = amount.split('.');
  return `€${groupDigits(whole)}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** "1000000" → "1,000,000". */
export function groupDigits(digits) {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * The calculator's inputs for a unit type, in natural units: the fields' values multiplied
 * together and by their `factor`s give the quantity in the price's unit type. `unit` is the
 * value's unit in words, `initial` a sensible first value (a month of 730 hours, 100 GiB, ...).
 */
export function quantityFields(unitType) {
  const field = (name, label, unit, initial, factor = 1) => ({ name, label, unit, initial, factor });
  switch (unitType) {
    case 'seconds':
      return [field('hours', 'Hours', 'hours', '730', 3600)];
    case 'gib_hours':
      return [field('gib', 'Size in GiB', 'GiB', '100'), field('hours', 'For hours', 'hours', '730')];
    case 'gb':
      return [field('gb', 'GB (10⁹ bytes)', 'GB', '1000')];
    case 'metric_months':
      return [field('metrics', 'Metrics', 'metrics', '10'), field('months', 'For months', 'months', '1')];
    case 'requests':
      return [field('requests', 'Requests', 'requests', '1000000')];
    case 'samples':
      return [field('samples', 'Samples', 'samples', '1000000')];
    default:
      return [field('units', unitType.replaceAll('_', ' '), unitType.replaceAll('_', ' '), '1')];
  }
}

const QUANTITY = /^\d{1,30}(?:\.\d{1,30})?$/;

/**
 * A quantity typed by a reader: digits with an optional decimal point (spaces and underscores
 * between digits are ignored). A comma is refused rather than guessed at: "1,5" and "1,500"
 * mean different things to different readers. Returns { value } (a Decimal) or { error }.
 */
export function parseQuantity(text) {
  const compact = text.trim().replace(/(?<=\d)[\s_](?=\d)/g, '');
  if (compact === '') return { error: 'Enter a quantity.' };
  if (compact.includes(',')) return { error: 'Use a decimal point, not a comma (1.5), and no thousands separators.' };
  if (!QUANTITY.test(compact)) return { error: 'Enter a number such as 730 or 1.5 (at most 30 digits each side).' };
  return { value: new Exact(compact) };
}

/** The quantity in the price's unit type: the product of the fields' values and factors. */
export function quantityInUnits(unitType, values) {
  return quantityFields(unitType).reduce(
    (total, field) => total.times(new Exact(values[field.name])).times(field.factor),
    new Exact(1),
  );
}

/**
 * The cost of `quantity` units at `amount` per `unitCount` units: amount × quantity / unitCount,
 * exactly. Returns
 * - `cents`: the cost rounded half up to the cent, as a string with two decimals ("22.27"),
 * - `exact`: the cost's decimal expansion { whole, fraction, repetend }: the digits of
 *   `repetend` repeat forever after `fraction` ("0.1", "57808219" …), '' when it terminates.
 */
export function cost(amount, unitCount, quantity) {
  const product = new Exact(amount).times(new Exact(quantity)); // exact: no division yet
  const scale = new Exact(10).pow(product.decimalPlaces());
  const numerator = product.times(scale); // an integer
  const denominator = new Exact(unitCount).times(scale);
  return { cents: roundToCents(numerator, denominator), exact: exactQuotient(numerator, denominator) };
}

/** numerator / denominator (non-negative integers as Decimals) rounded half up to two decimals. */
function roundToCents(numerator, denominator) {
  const hundredths = numerator.times(100);
  let cents = hundredths.divToInt(denominator);
  const remainder = hundredths.minus(cents.times(denominator));
  if (remainder.times(2).gte(denominator)) cents = cents.plus(1);
  return cents.div(100).toFixed(2);
}

// Long division stops here if no digit has repeated yet. Unit counts made of 2s, 3s, 5s and 73s
// (3600, 730, powers of ten) repeat or end within a few dozen digits; one with a large prime
// factor may not, and its expansion is then cut (`cut: true`).
const MAX_FRACTION_DIGITS = 400;

/** The decimal expansion of numerator / denominator (non-negative integers), by long division. */
function exactQuotient(numerator, denominator) {
  const whole = numerator.divToInt(denominator);
  let remainder = numerator.minus(whole.times(denominator));
  const digits = [];
  const seen = new Map(); // remainder → index of the digit it produced: a repeat starts a repetend
  while (!remainder.isZero() && digits.length < MAX_FRACTION_DIGITS) {
    const key = remainder.toFixed();
    if (seen.has(key)) {
      const start = seen.get(key);
      return {
        whole: whole.toFixed(),
        fraction: digits.slice(0, start).join(''),
        repetend: digits.slice(start).join(''),
      };
    }
    seen.set(key, digits.length);
    const shifted = remainder.times(10);
    const digit = shifted.divToInt(denominator);
    digits.push(digit.toFixed());
    remainder = shifted.minus(digit.times(denominator));
  }
  return { whole: whole.toFixed(), fraction: digits.join(''), repetend: '', cut: !remainder.isZero() };
}

/** The exact value as plain digits: "22.265", "0.15(78082191)…" with the repetend in brackets. */
export function exactText(exact) {
  const fraction = exact.fraction + (exact.repetend ? `(${exact.repetend})…` : '') + (exact.cut ? '…' : '');
  return `${exact.whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * What changed from one price list to the next, by product key: prices that appeared,
 * disappeared, or whose amount, unit or end changed. Ordered as the newer list is, then removals.
 */
export function diffPriceLists(before, after) {
  const index = (list) => {
    const byKey = new Map();
    for (const family of list.families)
      for (const price of family.prices) byKey.set(price.product_key, { family: family.family, price });
    return byKey;
  };
  const old = index(before);
  const now = index(after);
  const changes = [];
  for (const [key, { family, price }] of now) {
    const was = old.get(key)?.price;
    if (!was) changes.push({ kind: 'added', family, productKey: key, after: price });
    else if (
      was.amount !== price.amount ||
      was.unit_type !== price.unit_type ||
      was.unit_count !== price.unit_count ||
      was.valid_until !== price.valid_until
    ) {
      changes.push({ kind: 'changed', family, productKey: key, before: was, after: price });
    }
  }
  for (const [key, { family, price }] of old) {
    if (!now.has(key)) changes.push({ kind: 'removed', family, productKey: key, before: price });
  }
  return changes;
}

/**
 * A change of the change feed (GET /v1/pricing/changes) as `diffPriceLists` gives changes:
 * added (not listed before), removed (not listed after) or changed.
 */
export function feedChange(change) {
  const kind = change.before === null ? 'added' : change.after === null ? 'removed' : 'changed';
  return {
    kind,
    family: change.family,
    productKey: change.product_key,
    ...(change.before && { before: change.before }),
    ...(change.after && { after: change.after }),
  };
}

/** A change in words: `<family>, <product>: <what>`, dates as `formatDate` writes them. */
export function describeChange(change, formatDate) {
  const price = (p) => `${formatEuro(p.amount)} ${unitWords(p.unit_type, p.unit_count)}`;
  const name = `${familyName(change.family)}, ${productName(change.family, change.after ?? change.before)}`;
  if (change.kind === 'added') return `${name}: new, ${price(change.after)}`;
  if (change.kind === 'removed') return `${name}: no longer listed (was ${price(change.before)})`;
  const ends = change.after.valid_until;
  const end = ends ? `, ends ${formatDate(ends)}` : ', no end scheduled';
  if (price(change.before) === price(change.after)) return `${name}: ${price(change.after)}${end}`;
  return `${name}: ${price(change.before)} → ${price(change.after)}${ends ? end : ''}`;
}

function capitalize(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
