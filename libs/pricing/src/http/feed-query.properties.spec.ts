import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { encodeCursor, FEED_START } from '../rendering/changes-page';
import { decodeCursor, parseFeedQuery, positionBefore } from './feed-query';

// The query of GET /v1/pricing/changes and its cursors come from any client.

const productKey = fc.constantFrom('', 'storage.gp1', 'compute.g2.4', 'compute.m3.16', 'network.vpc_egress');
const position = fc.record({ at: fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }), productKey });

describe('cursors', () => {
  it('read back every place they encode', () => {
    fc.assert(
      fc.property(position, (place) => {
        expect(decodeCursor(encodeCursor(place))).toEqual(place);
      }),
    );
    expect(decodeCursor(encodeCursor(FEED_START))).toEqual(FEED_START);
  });

  it('never throw on any text, and read only what this service writes', () => {
    fc.assert(
      fc.property(outsideText(['MTc2', '~', 'c3RvcmFnZS5ncDE', '-', '_', '=']), (text) => {
        const place = decodeCursor(text);
        if (place) expect(encodeCursor(place)).toBe(text);
      }),
    );
  });

  it.each([
    ['padding', `${encodeCursor({ at: 1, productKey: 'storage.gp1' })}=`],
    ['a key no family fits', Buffer.from('1~storage.gp9').toString('base64url')],
    ['an instant beyond a Date', Buffer.from('99999999999999999~').toString('base64url')],
    ['no separator', Buffer.from('1').toString('base64url')],
    ['text after the key', Buffer.from('1~storage.gp1~x').toString('base64url')],
    ['base64 with + and /', '+/+/'],
    ['a long text', 'A'.repeat(200)],
  ])('refuse %s', (_what, text) => {
    expect(decodeCursor(text)).toBeUndefined();
  });
});

describe('parseFeedQuery', () => {
  it('never throws on any query string, and answers a query or a reason', () => {
    fc.assert(
      fc.property(
        outsideText(['after=', 'since=', 'limit=', '&', '=', '%', '1000', '2026-01-01T00:00:00Z']),
        (text) => {
          const parsed = parseFeedQuery(text);
          expect('query' in parsed || 'error' in parsed).toBe(true);
          if ('query' in parsed) {
            expect(parsed.query.limit).toBeGreaterThanOrEqual(1);
            expect(parsed.query.limit).toBeLessThanOrEqual(1000);
          }
        },
      ),
    );
  });

  it('reads what a client writes', () => {
    fc.assert(
      fc.property(position, fc.integer({ min: 1, max: 1000 }), (place, limit) => {
        expect(parseFeedQuery(`after=${encodeCursor(place)}&limit=${limit}`)).toEqual({
          query: { after: place, limit },
        });
      }),
    );
    expect(parseFeedQuery('')).toEqual({ query: { limit: 1000 } });
    expect(parseFeedQuery('since=2026-03-01T01:00:00.250999%2B01:00')).toEqual({
      query: { since: Date.parse('2026-03-01T00:00:00.250Z'), limit: 1000 },
    });
    expect(positionBefore(5)).toEqual({ at: 5, productKey: '' });
  });

  it('reads a leap second in since as the last millisecond before the next UTC day (docs/decisions.md, "Leap seconds")', () => {
    expect(parseFeedQuery('since=2016-12-31T23:59:60Z')).toEqual({
      query: { since: Date.parse('2016-12-31T23:59:59.999Z'), limit: 1000 },
    });
    expect(parseFeedQuery('since=2017-01-01T00:59:60.5%2B01:00')).toEqual({
      query: { since: Date.parse('2016-12-31T23:59:59.999Z'), limit: 1000 },
    });
    expect(parseFeedQuery('since=2016-12-31T23:58:60Z')).toHaveProperty('error');
  });

  it.each([
    ['an unknown parameter', 'page=1'],
    ['a parameter twice', 'since=2026-01-01T00:00:00Z&since=2026-01-01T00:00:00Z'],
    ['after with since', `after=${encodeCursor(FEED_START)}&since=2026-01-01T00:00:00Z`],
    ['a limit of 0', 'limit=0'],
    ['a limit with a sign', 'limit=+5'],
    ['a limit of 1001', 'limit=1001'],
    ['a limit in exponent form', 'limit=1e3'],
    ['a since without an offset', 'since=2026-01-01T00:00:00'],
    ['a cursor of garbage', 'after=%00%01'],
  ])('refuses %s', (_what, query) => {
    expect(parseFeedQuery(query)).toHaveProperty('error');
  });

  it.each<[string, (n: number) => string]>([
    ['ampersands', (n) => repeated('&', n)],
    ['a long cursor', (n) => `after=${repeated('A', n)}`],
    ['a long since', (n) => `since=2026-01-01T00:00:00.${repeated('1', n)}Z`],
    ['a long since in a leap second', (n) => `since=2016-12-31T23:59:60.${repeated('1', n)}Z`],
    ['many parameters', (n) => repeated('limit=1&', n)],
    ['percent escapes', (n) => repeated('%41', n)],
  ])('is linear in the query: %s', (_what, inputOfLength) => {
    expectLinearTime(parseFeedQuery, inputOfLength);
  });
});
