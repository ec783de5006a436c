import { jan1, priceRecord } from '../core/price-record.fixture';
import { planWithdrawal } from './plan-withdrawal';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const at = (iso: string): number => Date.parse(iso);

describe('planWithdrawal', () => {
  const current = priceRecord({ id: 1, validFrom: jan1(2026), validUntil: jan1(2027), supersededBy: 2 });
  const scheduled = priceRecord({ id: 2, amount: '0.04', validFrom: jan1(2027) });
  const list = { productKey: 'storage.gp1', organizationId: null };

  it('deletes a scheduled price and reopens the price it would have ended', () => {
    expect(planWithdrawal({ ...list, validFrom: at(jan1(2027)) }, [current, scheduled], NOW)).toEqual({
      plan: { deleteId: 2, reends: [{ id: 1, validUntil: null, supersededBy: null }] },
    });
  });

  it('gives the reopened price the end the withdrawn one had', () => {
    const middle = priceRecord({ id: 2, validFrom: jan1(2027), validUntil: jan1(2028), supersededBy: 3 });
    const last = priceRecord({ id: 3, validFrom: jan1(2028) });
    expect(planWithdrawal({ ...list, validFrom: at(jan1(2027)) }, [current, middle, last], NOW)).toEqual({
      plan: { deleteId: 2, reends: [{ id: 1, validUntil: at(jan1(2028)), supersededBy: 3 }] },
    });
  });

  it('refuses to withdraw what took effect', () => {
    expect(planWithdrawal({ ...list, validFrom: at(jan1(2026)) }, [current, scheduled], NOW)).toEqual({
      error:
        'the list price storage.gp1 starting at 2026-01-01T00:00:00Z took effect; what took effect cannot be withdrawn',
    });
    const ended = priceRecord({ id: 5, validFrom: jan1(2025), validUntil: jan1(2026) });
    expect(planWithdrawal({ ...list, validUntil: at(jan1(2026)) }, [ended], NOW)).toEqual({
      error: 'the list price storage.gp1 ended at 2026-01-01T00:00:00Z; what took effect cannot be withdrawn',
    });
  });

  it('refuses what does not exist, in the scope given', () => {
    expect(planWithdrawal({ ...list, validFrom: at('2027-02-01T00:00:00Z') }, [current, scheduled], NOW)).toEqual({
      error: 'no list price storage.gp1 starts at 2027-02-01T00:00:00Z',
    });
    expect(
      planWithdrawal(
        { productKey: 'storage.gp1', organizationId: 'org_1', validFrom: at(jan1(2027)) },
        [current, scheduled],
        NOW,
      ),
    ).toEqual({ error: 'no storage.gp1 for organization org_1 starts at 2027-01-01T00:00:00Z' });
  });

  it('withdraws a scheduled end', () => {
    const ending = priceRecord({ id: 7, validUntil: jan1(2027) });
    expect(planWithdrawal({ ...list, validUntil: at(jan1(2027)) }, [ending], NOW)).toEqual({
      plan: { deleteId: null, reends: [{ id: 7, validUntil: null, supersededBy: null }] },
    });
  });

  it('refuses to withdraw an end that a scheduled price set, or one a later price follows', () => {
    expect(planWithdrawal({ ...list, validUntil: at(jan1(2027)) }, [current, scheduled], NOW)).toEqual({
      error:
        'the end of the list price storage.gp1 at 2027-01-01T00:00:00Z comes from the price scheduled at 2027-01-01T00:00:00Z; withdraw that price instead',
    });
    const ending = priceRecord({ id: 7, validUntil: jan1(2027) });
    const later = priceRecord({ id: 8, validFrom: '2027-03-01T00:00:00Z' });
    expect(planWithdrawal({ ...list, validUntil: at(jan1(2027)) }, [ending, later], NOW)).toEqual({
      error:
        'the list price storage.gp1 cannot be reopened at 2027-01-01T00:00:00Z: a later price starts at 2027-03-01T00:00:00Z; withdraw it first',
    });
  });
});
