import { ListHistory } from '../core/list-history';
import { priceListDocument } from '../core/price-list';
import { priceRecord } from '../core/price-record.fixture';
import { runNow } from '../core/slices';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  BROTLI_QUALITY,
  brotliQualityFor,
  LARGE_BODY_BYTES,
  prepareAnswers,
  renderPriceList,
  renderPriceListNow,
  sha256Of,
} from './price-list-response';
import { weakEntityTag } from './entity-tag';
import { createHash } from 'node:crypto';

describe('the body of the list', () => {
  // Entries are written a chunk of 1,024 at a time: lists of sizes around its edges, the families
  // changing on them, must be the document's JSON exactly.
  it.each([0, 1, 1023, 1024, 1025, 2048, 2500])(
    'is JSON.stringify of the document, byte for byte, at %i compute prices and other families',
    async (computePrices) => {
      const records = [
        ...Array.from({ length: computePrices }, (_, i) =>
          priceRecord({
            productKey: `compute.c${Math.floor(i / 100)}.${i % 100}`,
            unitType: 'seconds',
            unitCount: 3600,
            amount: `0.${i + 1}`,
          }),
        ),
        priceRecord({ productKey: 'network.floating_ip', unitType: 'seconds', unitCount: 3600, amount: '0.005' }),
        priceRecord({ productKey: 'storage.gp1', validUntil: '2027-01-01T00:00:00.250Z' }),
        priceRecord({ productKey: 'storage.snapshot', amount: '0.05' }),
      ];
      const history = runNow(ListHistory.build({ records, ends: new Map(), writes: [], lastChangeId: 0 }));
      const at = Date.parse('2026-06-01T00:00:00Z');
      const document = priceListDocument(runNow(history.listAt(at)));
      expect(document.families.flatMap((family) => family.prices)).toHaveLength(computePrices + 3);
      const expected = JSON.stringify(document);
      expect((await renderPriceList(history.listAt(at))).body.toString('utf8')).toBe(expected);
      expect(renderPriceListNow(history.listAt(at, true)).body.toString('utf8')).toBe(expected);
      // The entries kept on the timelines (the present) serve the next list the same.
      expect((await renderPriceList(history.listAt(at, true))).body.toString('utf8')).toBe(expected);
    },
  );

  // The book's rules keep every entry ASCII; an entry that is not (a hand-made history) is encoded all the same.
  it.each([
    ['the first entry', 0],
    ['an entry in the middle', 700],
    ['the last entry', 1499],
  ])('is the JSON of the document with a character beyond ASCII in %s', async (_, wide) => {
    const records = Array.from({ length: 1500 }, (_, i) =>
      priceRecord({
        productKey: `compute.c${Math.floor(i / 100)}.${i % 100}`,
        unitType: 'seconds',
        unitCount: 3600,
        amount: i === wide ? '0.5\u00e9\u{1f600}' : '0.5',
      }),
    );
    const history = runNow(ListHistory.build({ records, ends: new Map(), writes: [], lastChangeId: 0 }));
    const at = Date.parse('2026-06-01T00:00:00Z');
    const document = priceListDocument(runNow(history.listAt(at)));
    expect(document.families[0].prices).toHaveLength(1500);
    const expected = JSON.stringify(document);
    const body = (await renderPriceList(history.listAt(at))).body;
    expect(body.equals(Buffer.from(expected, 'utf8'))).toBe(true);
  });
});

describe('the codings of a body', () => {
  it('brotli at quality 4, and 2 from 8 MiB on (a third of the time), each coding decoding to the body', async () => {
    expect([brotliQualityFor(0), brotliQualityFor(LARGE_BODY_BYTES - 1), brotliQualityFor(LARGE_BODY_BYTES)]).toEqual([
      BROTLI_QUALITY,
      BROTLI_QUALITY,
      2,
    ]);
    const entry = (i: number) => `{"product_key":"compute.c${i}.1","amount":"0.${(i * 7919) % 100_000}"}`;
    const body = Buffer.from(`[${Array.from({ length: 160_000 }, (_, i) => entry(i)).join(',')}]`);
    expect(body.length).toBeGreaterThan(LARGE_BODY_BYTES);
    const answers = await prepareAnswers(body, {}, { lastChangedMs: null, previousChangeMs: null, builtForMs: 0 });
    expect(brotliDecompressSync(answers.ok.br.body!).equals(body)).toBe(true);
    expect(gunzipSync(answers.ok.gzip.body!).equals(body)).toBe(true);
    expect(answers.ok.identity.headers.etag).toBe(weakEntityTag(body));
  });

  it('hashes a body in steps of a MiB, each a pause for the event loop, to the SHA-256 of the whole', () => {
    for (const length of [0, 1, 1024 * 1024 - 1, 1024 * 1024, 3 * 1024 * 1024 + 5]) {
      const body = Buffer.alloc(length, 'x');
      const steps = sha256Of(body);
      let pauses = 0;
      let step = steps.next();
      for (; !step.done; step = steps.next()) pauses++;
      expect(pauses).toBe(Math.ceil(length / (1024 * 1024)));
      expect(step.value.equals(createHash('sha256').update(body).digest())).toBe(true);
    }
  });
});
