// The price page: reads GET /v1/pricing from the API's origin and shows it, with a calculator.
//
// Caching is the browser's (section 4, "Browser notes"): the first load is a plain fetch, which
// the HTTP cache may answer for up to max-age; "Check for changes" asks the cache to revalidate
// (cache: 'no-cache'), so the browser itself sends If-None-Match and, on 304, hands the page the
// body it kept. The page never sets a request header: a non-safelisted one would need a CORS
// preflight, which the endpoint refuses.
import { PRICING_API_URL } from './config.js';
import {
  cost,
  describeChange,
  diffPriceLists,
  exactText,
  familyBilled,
  feedChange,
  familyName,
  formatEuro,
  groupDigits,
  parseQuantity,
  productName,
  quantityFields,
  quantityInUnits,
  unitWords,
} from './prices.mjs';

const PRICE_LIST_URL = `${PRICING_API_URL}/v1/pricing`;
const CHANGES_URL = `${PRICING_API_URL}/v1/pricing/changes`;
/** What changed: the latest changes of the last year, read a page of the feed at a time. */
const RECENT_CHANGES = 8;
const CHANGES_SINCE_MS = 365 * 24 * 3_600_000;
const MAX_CHANGE_PAGES = 10;
// Section 8 of the API document: the wait when a 429 or 503 carries no readable Retry-After
// (the endpoint exposes it to other origins with Access-Control-Expose-Headers; a proxy may not).
const DEFAULT_RETRY_AFTER_S = 30;

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'long',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZoneName: 'short',
});
const timeOfDay = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** What the page shows: the body as received, parsed, and when it was first received. */
let shown;
let retryTimer;

const byId = (id) => document.getElementById(id);

/** A DOM element with attributes and children (strings become text, never HTML). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children.filter((child) => child !== undefined && child !== null && child !== false && child !== ''));
  return node;
}

function timeElement(iso) {
  return el('time', { datetime: iso }, dateTime.format(new Date(iso)));
}

function showStatus(state, ...content) {
  const status = byId('status');
  status.dataset.state = state;
  status.replaceChildren(...content);
}

/** What the reader still sees when a later request failed. */
function keptNote() {
  return shown ? ` The prices shown are as loaded at ${timeOfDay.format(shown.loadedAt)}.` : '';
}

async function loadPriceList(kind) {
  clearTimeout(retryTimer);
  const button = byId('check');
  button.disabled = true;
  if (kind === 'check') showStatus('checking', 'Checking for changes…');
  let response;
  let text;
  try {
    response = await fetch(PRICE_LIST_URL, kind === 'check' ? { cache: 'no-cache' } : {});
    text = await response.text();
  } catch {
    showStatus(
      'network-error',
      `Could not reach the price list: network error.${keptNote() || ' Try again with “Check for changes”.'}`,
    );
    return;
  } finally {
    button.disabled = false;
  }

  if (response.status === 429 || response.status === 503) return scheduleRetry(kind, response);
  let list;
  try {
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    list = JSON.parse(text);
  } catch (error) {
    showStatus('error', `The price list could not be read (${error.message}).${keptNote()}`);
    return;
  }

  const now = new Date();
  const before = shown;
  if (before && before.text === text) {
    showStatus(
      'unchanged',
      `Unchanged: the prices are the same as at ${timeOfDay.format(before.loadedAt)} (checked at ${timeOfDay.format(now)}).`,
    );
    return;
  }
  shown = { text, list, loadedAt: now };
  render(list);
  if (!before) showStatus('loaded', `Loaded at ${timeOfDay.format(now)}.`);
  else showChanges(diffPriceLists(before.list, list), before.loadedAt);
  void loadRecentChanges();
}

/**
 * "What changed": the latest changes of the list, newest first, from the change feed (a year of
 * it, page after page while more are ready). A refusal leaves the section saying so; the next
 * load of the list tries again.
 */
async function loadRecentChanges() {
  const section = byId('what-changed');
  const list = byId('recent-changes');
  let recent = [];
  let query = `since=${new Date(Date.now() - CHANGES_SINCE_MS).toISOString()}`;
  try {
    for (let page = 0; page < MAX_CHANGE_PAGES; page++) {
      const response = await fetch(`${CHANGES_URL}?${query}`);
      if (!response.ok) {
        const why = response.status === 429 ? 'too many requests from your network address' : `HTTP ${response.status}`;
        list.replaceChildren(el('li', { class: 'error' }, `The latest changes could not be read (${why}).`));
        section.hidden = false;
        return;
      }
      const feed = await response.json();
      recent = [...recent, ...feed.changes].slice(-RECENT_CHANGES);
      if (!feed.has_more) break;
      query = `after=${encodeURIComponent(feed.next)}`;
    }
  } catch {
    list.replaceChildren(el('li', { class: 'error' }, 'The latest changes could not be read: network error.'));
    section.hidden = false;
    return;
  }
  list.replaceChildren(
    ...recent
      .reverse()
      .map((change) =>
        el(
          'li',
          { 'data-product-key': change.product_key },
          timeElement(change.at),
          ' ',
          describeChange(feedChange(change), formatDate),
        ),
      ),
  );
  if (recent.length === 0) list.replaceChildren(el('li', {}, 'No price changed in the last year.'));
  section.hidden = false;
}

const formatDate = (iso) => dateTime.format(new Date(iso));

function showChanges(changes, since) {
  const describe = (change) => describeChange(change, formatDate);
  const summary = `Changed since ${timeOfDay.format(since)}`;
  if (changes.length === 0) return showStatus('changed', `${summary}: the list was updated; no price changed.`);
  showStatus('changed', `${summary}:`, el('ul', {}, ...changes.map((change) => el('li', {}, describe(change)))));
}

/** 429 and 503: say so, keep what is shown, and try again after Retry-After. */
function scheduleRetry(kind, response) {
  const seconds = retryAfterSeconds(response.headers.get('Retry-After'));
  const at = new Date(Date.now() + seconds * 1000);
  const reason =
    response.status === 429
      ? 'Too many requests from your network address.'
      : 'The price list is temporarily unavailable.';
  showStatus(
    response.status === 429 ? 'rate-limited' : 'unavailable',
    `${reason} Trying again at ${timeOfDay.format(at)}.${keptNote()}`,
  );
  retryTimer = setTimeout(() => void loadPriceList(kind), seconds * 1000);
}

/** Seconds to wait: Retry-After as seconds or an HTTP date when the page may read it, else the default. */
function retryAfterSeconds(header) {
  if (header && /^\d+$/.test(header.trim())) return Math.max(1, Number(header.trim()));
  const date = header ? Date.parse(header) : NaN;
  if (!Number.isNaN(date)) return Math.max(1, Math.ceil((date - Date.now()) / 1000));
  return DEFAULT_RETRY_AFTER_S;
}

function render(list) {
  byId('vat').hidden = list.amounts_exclude_vat !== true;
  byId('last-changed').replaceChildren(list.last_changed ? timeElement(list.last_changed) : 'never');
  byId('families').replaceChildren(...list.families.map(familySection));
  byId('family-nav').replaceChildren(
    ...list.families.map(({ family }) => el('li', {}, el('a', { href: `#family-${family}` }, familyName(family)))),
    el('li', { class: 'to-calculator' }, el('a', { href: '#calculator-title' }, 'Cost calculator')),
  );
  renderProductChoice(list);
}

function familySection({ family, prices }) {
  return el(
    'section',
    { class: 'family', id: `family-${family}`, 'data-family': family, 'aria-labelledby': `family-${family}-title` },
    el('h2', { id: `family-${family}-title` }, familyName(family)),
    el('p', { class: 'billed' }, familyBilled(family)),
    el(
      'table',
      {},
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Product'), el('th', { scope: 'col' }, 'Price'))),
      el('tbody', {}, ...prices.map((price) => priceRow(family, price))),
    ),
  );
}

function priceRow(family, price) {
  return el(
    'tr',
    { 'data-product-key': price.product_key },
    el(
      'th',
      { scope: 'row' },
      el('span', { class: 'product' }, productName(family, price)),
      el('code', {}, price.product_key),
    ),
    el(
      'td',
      {},
      el(
        'span',
        { class: 'price' },
        el('strong', { class: 'amount' }, formatEuro(price.amount)),
        ' ',
        el('span', { class: 'unit' }, unitWords(price.unit_type, price.unit_count)),
      ),
      price.valid_until && el('span', { class: 'ends' }, 'Ends ', timeElement(price.valid_until)),
    ),
  );
}

// The calculator.

function findPrice(productKey) {
  for (const { family, prices } of shown?.list.families ?? []) {
    const price = prices.find((p) => p.product_key === productKey);
    if (price) return { family, price };
  }
  return undefined;
}

function renderProductChoice(list) {
  const select = byId('calc-product');
  const previous = select.value;
  select.replaceChildren(
    ...list.families.map(({ family, prices }) =>
      el(
        'optgroup',
        { label: familyName(family) },
        ...prices.map((price) =>
          el(
            'option',
            { value: price.product_key },
            `${productName(family, price)} · ${formatEuro(price.amount)} ${unitWords(price.unit_type, price.unit_count)}`,
          ),
        ),
      ),
    ),
  );
  byId('calculator-panel').hidden = list.families.length === 0;
  if (previous && findPrice(previous)) select.value = previous;
  renderQuantityFields();
}

/** The quantity inputs of the selected product's unit type; values typed before are kept. */
function renderQuantityFields() {
  const selected = findPrice(byId('calc-product').value);
  const container = byId('calc-fields');
  const unitType = selected?.price.unit_type ?? '';
  if (container.dataset.unitType !== unitType) {
    container.dataset.unitType = unitType;
    container.replaceChildren(
      ...(selected ? quantityFields(unitType) : []).map((field) =>
        el(
          'div',
          { class: 'field' },
          el('label', { for: `calc-${field.name}` }, field.label),
          el('input', {
            id: `calc-${field.name}`,
            name: field.name,
            inputmode: 'decimal',
            autocomplete: 'off',
            spellcheck: 'false',
            value: field.initial,
          }),
        ),
      ),
    );
  }
  calculate();
}

function calculate() {
  const output = byId('calc-result');
  const selected = findPrice(byId('calc-product').value);
  if (!selected) return output.replaceChildren();
  const { price } = selected;
  const values = {};
  const errors = [];
  for (const field of quantityFields(price.unit_type)) {
    const input = byId(`calc-${field.name}`);
    const parsed = parseQuantity(input.value);
    input.setAttribute('aria-invalid', String(Boolean(parsed.error)));
    if (parsed.error) errors.push(`${field.label}: ${parsed.error}`);
    else values[field.name] = parsed.value.toFixed();
  }
  if (errors.length > 0) return output.replaceChildren(el('span', { class: 'error' }, errors.join(' ')));

  const result = cost(price.amount, price.unit_count, quantityInUnits(price.unit_type, values));
  const [whole, cents] = result.cents.split('.');
  const isZero = result.exact.whole === '0' && /^0*$/.test(result.exact.fraction) && !result.exact.repetend;
  const rounded = result.cents === '0.00' && !isZero ? 'less than €0.01' : `€${groupDigits(whole)}.${cents}`;
  const quantity = quantityFields(price.unit_type)
    .map((field) => `${groupDigits(values[field.name].split('.')[0])}${fraction(values[field.name])} ${field.unit}`)
    .join(' × ');
  output.replaceChildren(
    el('span', { class: 'cost', 'data-cents': result.cents }, rounded),
    el(
      'span',
      { class: 'exact', 'data-exact': exactText(result.exact) },
      'Exactly €',
      groupDigits(result.exact.whole),
      result.exact.fraction || result.exact.repetend ? `.${result.exact.fraction}` : '',
      result.exact.repetend &&
        el('span', { class: 'repetend', title: 'These digits repeat forever' }, result.exact.repetend),
      result.exact.repetend || result.exact.cut ? '…' : '',
    ),
    el(
      'span',
      { class: 'basis' },
      `${quantity} at ${formatEuro(price.amount)} ${unitWords(price.unit_type, price.unit_count)}`,
    ),
    result.exact.repetend && el('span', { class: 'hint' }, 'The digits under the bar repeat forever.'),
  );
}

function fraction(value) {
  const part = value.split('.')[1];
  return part ? `.${part}` : '';
}

byId('api-url').textContent = PRICE_LIST_URL;
byId('check').addEventListener('click', () => void loadPriceList('check'));
byId('calc-product').addEventListener('change', renderQuantityFields);
byId('calculator').addEventListener('input', (event) => {
  if (event.target instanceof HTMLInputElement) calculate();
});
byId('calculator').addEventListener('submit', (event) => event.preventDefault());
void loadPriceList('initial');
