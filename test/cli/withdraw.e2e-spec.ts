import { inDays, price, recordsOf, useCliDatabase, versionOf } from '../support/price-book-cli';

// `withdraw`: scheduled prices and ends taken back, and what cannot be.

describe('withdraw', () => {
  const scheduledAt = inDays(30);
  const scheduledEnd = inDays(45);
  const orgScheduledAt = inDays(35);
  const f = useCliDatabase({
    prices: [
      price('compute.w1.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' }),
      price('compute.w1.1', '2.00', { valid_from: scheduledAt }),
      price('compute.w2.1', '1.00', { valid_from: '2020-01-01T00:00:00Z', valid_until: scheduledEnd }),
      price('compute.w3.1', '1.00', { valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' }),
      price('compute.w1.1', '0.90', { organization_id: 'org_42', valid_from: '2020-01-01T00:00:00Z' }),
      price('compute.w1.1', '0.80', { organization_id: 'org_42', valid_from: orgScheduledAt }),
      price('compute.w4.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' }),
      price('compute.w4.1', '2.00', { valid_from: inDays(10) }),
      price('compute.w4.1', '3.00', { valid_from: inDays(20) }),
    ],
  });

  async function lastChanged(): Promise<string> {
    const shown = await f.cli('show');
    expect(shown.code).toBe(0);
    return (JSON.parse(shown.stdout) as { last_changed: string }).last_changed;
  }

  it('refuses to withdraw a price that took effect, writing nothing', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-from', '2020-01-01T00:00:00Z'],
      'the list price compute.w1.1 starting at 2020-01-01T00:00:00Z took effect; what took effect cannot be withdrawn',
    );
  });

  it('refuses to withdraw an end that passed, writing nothing', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w3.1', '--valid-until', '2021-01-01T00:00:00Z'],
      'the list price compute.w3.1 ended at 2021-01-01T00:00:00Z; what took effect cannot be withdrawn',
    );
  });

  it('refuses to withdraw what does not exist, writing nothing', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-from', '2031-01-01T00:00:00Z'],
      'no list price compute.w1.1 starts at 2031-01-01T00:00:00Z',
    );
    await f.expectRefused(
      ['withdraw', 'compute.w2.1', '--valid-until', '2031-01-01T00:00:00Z'],
      'no list price compute.w2.1 ends at 2031-01-01T00:00:00Z',
    );
    // The organization's scheduled price is not the list price's.
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-from', orgScheduledAt],
      `no list price compute.w1.1 starts at ${orgScheduledAt}`,
    );
  });

  it('refuses to withdraw the end a scheduled price sets: that price is withdrawn instead', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-until', scheduledAt],
      `the end of the list price compute.w1.1 at ${scheduledAt} comes from the price scheduled at ${scheduledAt}; withdraw that price instead`,
    );
  });

  it('withdraws a scheduled price, reopens the price it would have ended, and moves last_changed', async () => {
    const rowsBefore = await recordsOf(f.dataSource, 'compute.w1.1');
    expect(rowsBefore.map((r) => r.amount)).toEqual(['1.00', '2.00']);
    const changedBefore = await lastChanged();
    const version = await versionOf(f.dataSource);

    const result = await f.cli('withdraw', 'compute.w1.1', '--valid-from', scheduledAt);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const withdrawnAt = /^withdrawn at (\S+) \(version (\d+)\)\n$/.exec(result.stdout);
    expect(withdrawnAt).not.toBeNull();
    expect(withdrawnAt![2]).toBe(String(Number(version) + 1));

    const rows = await recordsOf(f.dataSource, 'compute.w1.1');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: rowsBefore[0].id, amount: '1.00', valid_until: null, superseded_by: null });
    const changes: { change: string; changed_at: Date }[] = await f.dataSource.query(
      `SELECT change, changed_at FROM price_change WHERE change LIKE 'withdraw%'`,
    );
    expect(changes).toEqual([{ change: 'withdraw_price', changed_at: new Date(withdrawnAt![1]) }]);

    const changedAfter = await lastChanged();
    expect(Date.parse(changedAfter)).toBeGreaterThan(Date.parse(changedBefore));
    expect(Date.parse(changedAfter)).toBe(Date.parse(withdrawnAt![1]));
    // The organization's price is untouched.
    expect((await recordsOf(f.dataSource, 'compute.w1.1', 'org_42')).map((r) => r.amount)).toEqual(['0.90', '0.80']);
  });

  it('withdraws a scheduled end with --valid-until', async () => {
    const result = await f.cli('withdraw', 'compute.w2.1', '--valid-until', scheduledEnd);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const rows = await recordsOf(f.dataSource, 'compute.w2.1');
    expect(rows.map((r) => [r.amount, r.valid_until])).toEqual([['1.00', null]]);
    const changes: { change: string; price_record_id: string }[] = await f.dataSource.query(
      `SELECT change, price_record_id::text FROM price_change WHERE change = 'withdraw_end'`,
    );
    expect(changes).toEqual([{ change: 'withdraw_end', price_record_id: rows[0].id }]);
  });

  it('withdraws a scheduled organization price with --organization', async () => {
    const result = await f.cli('withdraw', 'compute.w1.1', '--valid-from', orgScheduledAt, '--organization', 'org_42');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const rows = await recordsOf(f.dataSource, 'compute.w1.1', 'org_42');
    expect(rows.map((r) => [r.amount, r.valid_until, r.superseded_by])).toEqual([['0.90', null, null]]);
  });

  it('withdrawing the middle of a chain of scheduled changes hands its end and successor to the price before it', async () => {
    const before = await recordsOf(f.dataSource, 'compute.w4.1');
    expect(before.map((r) => r.amount)).toEqual(['1.00', '2.00', '3.00']);
    const result = await f.cli('withdraw', 'compute.w4.1', '--valid-from', before[1].valid_from.toISOString());
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const rows = await recordsOf(f.dataSource, 'compute.w4.1');
    expect(rows.map((r) => [r.id, r.amount, r.valid_until?.getTime() ?? null, r.superseded_by])).toEqual([
      [before[0].id, '1.00', before[2].valid_from.getTime(), before[2].id],
      [before[2].id, '3.00', null, null],
    ]);
  });

  it('refuses a second withdrawal of what is gone, writing nothing', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-from', scheduledAt],
      `no list price compute.w1.1 starts at ${scheduledAt}`,
    );
  });
});
