import { preparePriceBookCommand, PriceBookUsageError } from './command-line';

// docs/decisions.md, "Leap seconds": an instant that asks about the log reads a leap second as the
// millisecond before the next UTC day; one that names a stored record refuses it (none has it).
describe('preparePriceBookCommand and a leap second', () => {
  it('changes --since and --until read 23:59:60 as 23:59:59.999 UTC, as the change feed does', async () => {
    expect(await preparePriceBookCommand(['changes', '--since', '2016-12-31T23:59:60Z'])).toEqual({
      name: 'changes',
      since: Date.parse('2016-12-31T23:59:59.999Z'),
      until: null,
      productKey: null,
      limit: null,
      json: false,
    });
    expect(await preparePriceBookCommand(['changes', '--until', '2017-01-01T00:59:60+01:00'])).toMatchObject({
      until: Date.parse('2016-12-31T23:59:59.999Z'),
    });
    await expect(preparePriceBookCommand(['changes', '--since', '2016-12-31T23:58:60Z'])).rejects.toThrow(
      PriceBookUsageError,
    );
  });

  it('withdraw --valid-from refuses it: no stored price starts in a leap second', async () => {
    await expect(
      preparePriceBookCommand(['withdraw', 'storage.gp1', '--valid-from', '2016-12-31T23:59:60Z', '--actor', 'ops']),
    ).rejects.toThrow(/is not an RFC 3339 timestamp with an offset/);
  });
});
