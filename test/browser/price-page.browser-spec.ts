import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freePort } from '@app/control-plane';
import type { PriceList } from '@app/price-page';
import { runCli } from '../support/cli';
import { useTestDatabase } from '../support/database';
import { waitFor } from '../support/http';
import { startPageServer, startService, type Child } from './support/processes';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy';

// The price page (apps/price-page) in the system's Chromium, on its own origin, reading the real
// service (main.ts, as `npm start` runs it, on a database of its own) through a recording proxy that shows what
// crossed the wire. Screenshots go to screenshots/ (git-ignored).

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// The flags this machine's Chromium needs (no background connections to a closed network).
const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SCREENSHOTS = resolve(__dirname, '../../screenshots');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const FROM = '2026-01-01T00:00:00Z';
const ENDS = '2099-01-01T00:00:00Z';
// [product key, unit type, unit count, amount]; compute.g2.4 has a scheduled end.
const BOOK: [string, string, number, string][] = [
  ['compute.g2.2', 'seconds', 3600, '0.0305'],
  ['compute.g2.4', 'seconds', 3600, '0.0610'],
  ['compute.g2.16', 'seconds', 3600, '0.2440'],
  ['network.floating_ip', 'seconds', 3600, '0.0050'],
  ['network.nat_gateway', 'seconds', 60, '0.00075'],
  ['network.vpc_egress', 'gb', 1, '0.0100'],
  ['network.vpc_ingress', 'gb', 1, '0'],
  ['network.vpc_internal', 'gb', 1, '0.0020'],
  ['storage.gp1', 'gib_hours', 730, '0.0480'],
  ['storage.io1', 'gib_hours', 730, '0.1250'],
  ['storage.snapshot', 'gib_hours', 1, '0.00003'],
  ['observability.custom_metric', 'metric_months', 1, '0.30'],
  ['observability.api_request', 'requests', 1000, '0.0100'],
  ['observability.ingested_sample', 'samples', 1000000, '0.000012'],
];

// What the reader must see, written out here rather than computed by the page's own code.
const FAMILY_NAMES = [
  'Compute instances',
  'Floating IPs',
  'NAT gateways',
  'VPC egress traffic',
  'VPC ingress traffic',
  'VPC internal traffic',
  'Volumes',
  'Volume snapshots',
  'Custom metrics',
  'Metrics API requests',
  'Ingested metric samples',
];
const UNIT_WORDS: Record<string, string> = {
  'seconds/3600': 'per hour',
  'seconds/60': 'per minute',
  'gb/1': 'per GB',
  'gib_hours/730': 'per GiB-month',
  'gib_hours/1': 'per GiB-hour',
  'metric_months/1': 'per metric-month',
  'requests/1000': 'per 1,000 requests',
  'samples/1000000': 'per 1,000,000 samples',
};

let workDir: string;
let books = 0;
let api: Child;
let proxy: RecordingProxy;
let pageServer: Child;
let browser: Browser;
const others: Child[] = [];
const contexts: BrowserContext[] = [];
const pageErrors: string[] = [];

async function importBook(prices: object[]): Promise<void> {
  const file = join(workDir, `book-${++books}.json`);
  await writeFile(file, JSON.stringify({ prices }));
  const result = await runCli(['import', file], { DATABASE_URL: database.url });
  if (result.code !== 0) throw new Error(`import failed: ${result.stderr}`);
}

/** The list as the service serves it, read directly (not through the proxy). */
async function priceList(): Promise<PriceList> {
  return (await (await fetch(`${api.url}/v1/pricing`)).json()) as PriceList;
}

/** Imports a new hourly price for `productKey` through the CLI, and waits until the service lists it. */
async function importHourlyPrice(productKey: string, amount: string): Promise<void> {
  await importBook([{ product_key: productKey, unit_type: 'seconds', unit_count: 3600, amount }]);
  await waitFor(
    'the service to list the new price',
    () => priceList(),
    (list) => list.families.some((f) => f.prices.some((p) => p.product_key === productKey && p.amount === amount)),
    10_000,
  );
}

/** A new browser context (empty HTTP cache) on the page, in Tokyo with British English. */
async function openPage(options: { viewport?: typeof DESKTOP; phone?: boolean; clock?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext({
    viewport: options.viewport ?? DESKTOP,
    isMobile: options.phone ?? false,
    hasTouch: options.phone ?? false,
    locale: 'en-GB',
    timezoneId: 'Asia/Tokyo',
  });
  contexts.push(context);
  if (options.clock) await context.clock.install();
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(pageServer.url);
  return page;
}

async function waitForState(page: Page, state: string): Promise<string> {
  await page.waitForSelector(`#status[data-state="${state}"]`, { timeout: 10_000 });
  return (await page.textContent('#status')) ?? '';
}

function priceText(page: Page, productKey: string): Promise<string | null> {
  return page.textContent(`tr[data-product-key="${productKey}"] .price`);
}

function pricingRequests() {
  return proxy.recorded().filter((r) => r.path === '/v1/pricing');
}

// Declared before the database: runs before it is dropped.
afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await Promise.all([api, pageServer, ...others].map((child) => child?.stop()));
  await proxy?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const database = useTestDatabase();

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y --no-install-recommends chromium`);
  }
  workDir = await mkdtemp(join(tmpdir(), 'price-page-'));
  await mkdir(SCREENSHOTS, { recursive: true });
  await importBook(
    BOOK.map(([product_key, unit_type, unit_count, amount]) => ({
      product_key,
      unit_type,
      unit_count,
      amount,
      valid_from: FROM,
      valid_until: product_key === 'compute.g2.4' ? ENDS : null,
    })),
  );
  [api, browser] = await Promise.all([
    startService({ DATABASE_URL: database.url }),
    chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
  ]);
  proxy = await startRecordingProxy(api.url);
  pageServer = await startPageServer(proxy.url);
}, 60_000);

beforeEach(() => {
  proxy.target = api.url;
  proxy.mode = 'forward';
  proxy.clear();
});

afterEach(() => {
  expect(pageErrors.splice(0)).toEqual([]); // no uncaught error in the page's script
});

it('shows every price with its unit in words, by family in the order of section 2.4, net of VAT said once', async () => {
  const page = await openPage();
  await waitForState(page, 'loaded');
  const list = await priceList();

  expect(await page.$$eval('section.family h2', (headings) => headings.map((h) => h.textContent))).toEqual(
    FAMILY_NAMES,
  );
  expect(await page.$$eval('section.family', (sections) => sections.map((s) => s.dataset.family))).toEqual(
    list.families.map((f) => f.family),
  );
  const shown = await page.$$eval('tr[data-product-key]', (rows) => rows.map((r) => r.dataset.productKey));
  expect(shown).toEqual(list.families.flatMap((f) => f.prices.map((p) => p.product_key)));
  expect(shown).toHaveLength(BOOK.length);
  for (const price of list.families.flatMap((f) => f.prices)) {
    const words = UNIT_WORDS[`${price.unit_type}/${price.unit_count}`];
    expect(await priceText(page, price.product_key)).toBe(`€${price.amount} ${words}`);
  }
  expect(await priceText(page, 'observability.ingested_sample')).toBe('€0.000012 per 1,000,000 samples');
  expect(await priceText(page, 'storage.gp1')).toBe('€0.0480 per GiB-month');

  // The scheduled end, and only there; times in the reader's zone (Tokyo, UTC+9).
  expect(await page.$$eval('.ends', (ends) => ends.length)).toBe(1);
  expect(await page.getAttribute('tr[data-product-key="compute.g2.4"] .ends time', 'datetime')).toBe(ENDS);
  expect(await page.textContent('tr[data-product-key="compute.g2.4"] .ends')).toBe(
    'Ends 1 January 2099 at 09:00 GMT+9',
  );
  const lastChanged = new Date(list.last_changed!);
  const tokyo = new Date(lastChanged.getTime() + 9 * 3_600_000);
  const hhmm = `${String(tokyo.getUTCHours()).padStart(2, '0')}:${String(tokyo.getUTCMinutes()).padStart(2, '0')}`;
  expect(await page.getAttribute('#last-changed time', 'datetime')).toBe(list.last_changed);
  expect(await page.textContent('#last-changed')).toContain(`${hhmm} GMT+9`);

  expect(await page.isVisible('#vat')).toBe(true);
  expect(await page.textContent('#vat')).toContain('exclude VAT');
  expect(await page.$$eval('main', (main) => main[0].textContent)).not.toContain('VAT');

  // One plain GET from another origin, no If-None-Match.
  const requests = pricingRequests();
  expect(requests.map((r) => `${r.method} ${r.status}`)).toEqual(['GET 200']);
  expect(requests[0].headers.origin).toBe(pageServer.url);
  expect(requests[0].headers['if-none-match']).toBeUndefined();

  await page.screenshot({ path: join(SCREENSHOTS, 'price-page-desktop.png'), fullPage: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'price-page-desktop-viewport.png') });

  const phone = await openPage({ viewport: PHONE, phone: true });
  await waitForState(phone, 'loaded');
  expect(await priceText(phone, 'observability.ingested_sample')).toBe('€0.000012 per 1,000,000 samples');
  // Nothing wider than the screen: no sideways scrolling on a phone.
  expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
  await phone.screenshot({ path: join(SCREENSHOTS, 'price-page-phone.png'), fullPage: true });
});

it('computes costs exactly, to the last digit, in natural units', async () => {
  const page = await openPage();
  await waitForState(page, 'loaded');
  const calculate = async (productKey: string, values: Record<string, string>) => {
    await page.selectOption('#calc-product', productKey);
    for (const [name, value] of Object.entries(values)) await page.fill(`#calc-${name}`, value);
    return [await page.textContent('#calc-result .cost'), await page.getAttribute('#calc-result .exact', 'data-exact')];
  };

  expect(await calculate('compute.g2.2', { hours: '730' })).toEqual(['€22.27', '22.265']);
  expect(await calculate('compute.g2.4', { hours: '1.5' })).toEqual(['€0.09', '0.0915']);
  expect(await calculate('compute.g2.2', { hours: '0.1' })).toEqual(['less than €0.01', '0.00305']);
  expect(await calculate('network.nat_gateway', { hours: '730' })).toEqual(['€32.85', '32.85']); // per minute
  expect(await calculate('network.vpc_egress', { gb: '1.5' })).toEqual(['€0.02', '0.015']);
  expect(await calculate('network.vpc_ingress', { gb: '5000' })).toEqual(['€0.00', '0']);
  expect(await calculate('storage.gp1', { gib: '100', hours: '730' })).toEqual(['€4.80', '4.8']);
  // 100 GiB for a day at €0.0480 per GiB-month: 0.048 × 2400 / 730 = 288/1825, a repeating decimal.
  expect(await calculate('storage.gp1', { gib: '100', hours: '24' })).toEqual(['€0.16', '0.15(78082191)…']);
  expect(await page.textContent('#calc-result .exact .repetend')).toBe('78082191');
  expect(await calculate('storage.snapshot', { gib: '500', hours: '730' })).toEqual(['€10.95', '10.95']);
  expect(await calculate('observability.custom_metric', { metrics: '3', months: '12' })).toEqual(['€10.80', '10.8']);
  expect(await calculate('observability.api_request', { requests: '2500' })).toEqual(['€0.03', '0.025']);
  expect(await calculate('observability.ingested_sample', { samples: '123456789' })).toEqual([
    'less than €0.01',
    '0.001481481468',
  ]);
  expect(await calculate('observability.ingested_sample', { samples: '987654321987654321' })).toEqual([
    '€11,851,851.86',
    '11851851.863851851852',
  ]);
  expect(await page.textContent('#calc-result .exact')).toBe('Exactly €11,851,851.863851851852');

  await page.fill('#calc-samples', '1,5');
  expect(await page.textContent('#calc-result .error')).toContain('decimal point');
  expect(await page.getAttribute('#calc-samples', 'aria-invalid')).toBe('true');
});

it('checks for changes through the browser cache: 304 when unchanged, the new price after an import', async () => {
  const page = await openPage();
  await waitForState(page, 'loaded');
  const [first] = pricingRequests();
  expect(first.status).toBe(200);
  expect(first.etag).toMatch(/^W\/"/);

  proxy.clear();
  await page.click('#check');
  expect(await waitForState(page, 'unchanged')).toMatch(/^Unchanged/);
  // The browser revalidated with the tag it kept; the page never saw the tag, and read the kept body.
  expect(pricingRequests().map((r) => [r.method, r.headers['if-none-match'], r.status])).toEqual([
    ['GET', first.etag, 304],
  ]);
  expect(await priceText(page, 'compute.g2.2')).toBe('€0.0305 per hour');

  await page.selectOption('#calc-product', 'compute.g2.2');
  await page.fill('#calc-hours', '730');
  expect(await page.textContent('#calc-result .cost')).toBe('€22.27');

  // A new price for compute.g2.2, from now, through the price book CLI.
  await importHourlyPrice('compute.g2.2', '0.0315');

  proxy.clear();
  await page.click('#check');
  const status = await waitForState(page, 'changed');
  expect(status).toContain('Compute instances, g2.2: €0.0305 per hour → €0.0315 per hour');
  expect(await priceText(page, 'compute.g2.2')).toBe('€0.0315 per hour');
  expect(await page.textContent('#calc-result .cost')).toBe('€23.00'); // 730 h × €0.0315, recomputed
  const [revalidated] = pricingRequests();
  expect([revalidated.headers['if-none-match'], revalidated.status]).toEqual([first.etag, 200]);
  expect(revalidated.etag).not.toBe(first.etag);
  await page.screenshot({ path: join(SCREENSHOTS, 'price-page-changed.png') });
});

it('shows what changed lately, newest first, from the change feed', async () => {
  await importHourlyPrice('network.floating_ip', '0.0060');
  const page = await openPage();
  await waitForState(page, 'loaded');
  await page.waitForSelector('#what-changed:not([hidden]) #recent-changes li', { timeout: 10_000 });
  const items = await page.$$eval('#recent-changes li', (lis) =>
    lis.map((li) => ({
      key: li.dataset.productKey,
      at: li.querySelector('time')?.getAttribute('datetime'),
      text: li.textContent,
    })),
  );
  expect(items.length).toBeGreaterThan(1);
  expect(items.length).toBeLessThanOrEqual(8);
  expect(items[0].key).toBe('network.floating_ip');
  expect(items[0].text).toContain('Floating IPs');
  expect(items[0].text).toContain('€0.0050 per hour → €0.0060 per hour');
  const instants = items.map((item) => Date.parse(item.at!));
  expect(instants).toEqual([...instants].sort((a, b) => b - a)); // newest first
  expect(await page.textContent('#what-changed h2')).toBe('What changed');
  // Read from the feed, cross-origin, as a plain GET; never an organization's price.
  const feed = proxy.recorded().filter((r) => r.path.startsWith('/v1/pricing/changes'));
  expect(feed.length).toBeGreaterThan(0);
  expect(feed.map((r) => [r.method, r.status, r.headers.origin])).toContainEqual(['GET', 200, pageServer.url]);
  await page.screenshot({ path: join(SCREENSHOTS, 'price-page-what-changed.png') });
});

it('says when the API refuses with 429, keeps the prices, and retries after the wait', async () => {
  // An hour's window: one that turned between the two requests would let the second through.
  const limited = await startService({
    DATABASE_URL: database.url,
    PRICING_RATE_LIMIT: '1',
    PRICING_RATE_WINDOW_S: '3600',
  });
  others.push(limited);
  proxy.target = limited.url;
  const page = await openPage({ clock: true });
  await waitForState(page, 'loaded');
  await page.click('#check');
  const status = await waitForState(page, 'rate-limited');
  expect(status).toMatch(/^Too many requests from your network address\. Trying again at \d\d:\d\d:\d\d\./);
  expect(status).toContain('The prices shown are as loaded at');
  expect(await page.$$eval('tr[data-product-key]', (rows) => rows.length)).toBe(BOOK.length);
  expect(pricingRequests().map((r) => r.status)).toEqual([200, 429]);
  await page.screenshot({ path: join(SCREENSHOTS, 'price-page-rate-limited.png') });

  // The page waits what Retry-After says (exposed to other origins), not a second less.
  const waitS = Number(pricingRequests()[1].retryAfter);
  expect(waitS).toBeGreaterThan(1);
  await page.clock.runFor((waitS - 1) * 1000);
  expect(pricingRequests()).toHaveLength(2);
  await page.clock.runFor(1_000);
  await waitFor(
    'the retry to be answered',
    () => Promise.resolve(pricingRequests()),
    (r) => r[2]?.status > 0,
    10_000,
  );
  expect(pricingRequests().map((r) => `${r.method} ${r.status}`)).toEqual(['GET 200', 'GET 429', 'GET 429']);
  expect(await waitForState(page, 'rate-limited')).toContain('Too many requests');
});

it('says when the price list is unavailable (503), and loads it when the retry succeeds', async () => {
  const deadDatabase = `postgres://nobody:nothing@127.0.0.1:${await freePort()}/nothing`;
  const unavailable = await startService({ DATABASE_URL: deadDatabase }, '/health/live');
  others.push(unavailable);
  proxy.target = unavailable.url;
  const page = await openPage({ clock: true });
  const status = await waitForState(page, 'unavailable');
  expect(status).toMatch(/^The price list is temporarily unavailable\. Trying again at \d\d:\d\d:\d\d\.$/);
  expect(await page.$$eval('tr[data-product-key]', (rows) => rows.length)).toBe(0);
  expect(await page.isVisible('#calculator-panel')).toBe(false);
  expect(pricingRequests().map((r) => r.status)).toEqual([503]);
  await page.screenshot({ path: join(SCREENSHOTS, 'price-page-unavailable.png') });

  proxy.target = api.url; // the service is back
  await page.clock.runFor(25_000);
  expect(pricingRequests()).toHaveLength(1);
  await page.clock.runFor(5_000);
  await waitForState(page, 'loaded');
  expect(pricingRequests().map((r) => r.status)).toEqual([503, 200]);
  expect(await page.isVisible('#calculator-panel')).toBe(true);
  expect(await page.$$eval('tr[data-product-key]', (rows) => rows.length)).toBe(BOOK.length);
});

it('says when the network fails, and keeps what it showed', async () => {
  const page = await openPage();
  await waitForState(page, 'loaded');
  const before = await page.textContent('#families');
  proxy.mode = 'drop';
  await page.click('#check');
  const status = await waitForState(page, 'network-error');
  expect(status).toMatch(/^Could not reach the price list: network error\. The prices shown are as loaded at/);
  expect(await page.textContent('#families')).toBe(before);
  expect(await priceText(page, 'compute.g2.2')).toBe('€0.0315 per hour');
});

it('never made the browser send a CORS preflight: the page set no request header itself', () => {
  const all = proxy.all;
  expect(all.filter((r) => r.method !== 'GET')).toEqual([]);
  expect(all.filter((r) => r.headers['access-control-request-method'] !== undefined)).toEqual([]);
  expect(all.filter((r) => r.headers['access-control-request-headers'] !== undefined)).toEqual([]);
  // The If-None-Match that did cross the wire came from the HTTP cache, on revalidations only.
  expect(all.some((r) => r.headers['if-none-match'] !== undefined)).toBe(true);
  expect(all.every((r) => r.headers.origin === pageServer.url)).toBe(true);
});
