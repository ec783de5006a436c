import { createHash } from 'node:crypto';
import { renderPriceList } from '../http/price-list-response';
import type { ListPriceHistory } from '../price-list/build-price-list';
import { priceRecord } from '../price-list/price-record.fixture';
import { PriceListRenderer } from './price-list-renderer';

// The worker runs the built script (dist/): the Jest global setup builds first.

const history = (count: number): ListPriceHistory => ({
  records: Array.from({ length: count }, (_, i) =>
    priceRecord({
      productKey: `compute.g${i % 7}.${i}`,
      unitType: 'seconds',
      unitCount: 3600,
      amount: `0.${String(i + 1).padStart(4, '0')}`,
      validFrom: '2026-01-01T00:00:00Z',
      validUntil: i % 3 === 0 ? '2026-07-01T00:00:00Z' : null,
    }),
  ),
  writes: [new Date('2025-12-01T00:00:00Z'), new Date('2026-09-01T00:00:00.002Z')],
});

/** A list with its bodies as digests: Jest compares large buffers byte by byte, slowly. */
function comparable(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return createHash('sha256').update(value).digest('hex');
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, comparable(field)]));
}

describe('PriceListRenderer', () => {
  const renderers: PriceListRenderer[] = [];
  const renderer = (inlineBelow: number): PriceListRenderer => {
    const created = new PriceListRenderer(inlineBelow);
    renderers.push(created);
    return created;
  };

  afterAll(async () => {
    for (const created of renderers) await created.close();
  });

  it('on its worker: the same bytes, tag, headers and instants as rendering inline', async () => {
    const onWorker = renderer(0);
    const book = history(12_345); // more than one part sent to the worker
    for (const at of ['2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z', '2026-10-01T00:00:00Z']) {
      const instant = new Date(at);
      expect(comparable(await onWorker.render(book, instant))).toEqual(comparable(renderPriceList(book, instant)));
    }
  });

  it('inline below its threshold: the very list renderPriceList gives', async () => {
    const book = history(10);
    const instant = new Date('2026-06-01T00:00:00Z');
    expect(await renderer(11).render(book, instant)).toEqual(renderPriceList(book, instant));
  });

  it('renders one request after the other, each with its own history', async () => {
    const onWorker = renderer(0);
    const instant = new Date('2026-06-01T00:00:00Z');
    const books = [history(5), history(40), history(5), history(0)];
    const lists = await Promise.all(books.map((book) => onWorker.render(book, instant)));
    lists.forEach((list, i) => expect(list.body.equals(renderPriceList(books[i], instant).body)).toBe(true));
  });

  it('refuses to render once closed', async () => {
    const onWorker = renderer(0);
    await onWorker.render(history(1), new Date('2026-06-01T00:00:00Z'));
    await onWorker.close();
    await expect(onWorker.render(history(1), new Date('2026-06-01T00:00:00Z'))).rejects.toThrow('closed');
  });
});
