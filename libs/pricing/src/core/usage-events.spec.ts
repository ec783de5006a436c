import Decimal from 'decimal.js';
import type { UnitType } from '../catalogue/catalogue';
import { priceRecord } from './price-record.fixture';
import { costOfEvents, costOfUsage, roundForInvoice, sumCosts, type MeteredEvent } from './usage';
import { jan, feb, named, prices, rows, expectCost, refusal } from './usage.fixture';

describe('costOfEvents', () => {
  // network.vpc_egress, per GB: 0.0100 until 1 February, then 0.0080.
  const vpcEgress = { productKey: 'network.vpc_egress', unitType: 'gb', unitCount: 1 } as const;
  const egress = (id: string, amount: string, validFrom: Date, validUntil: Date | null = null) =>
    named(id, { ...vpcEgress, amount, validFrom, validUntil });
  const egressA = egress('egress-A', '0.0100', jan(1), feb(1));
  const egressB = egress('egress-B', '0.0080', feb(1));

  it('prices each event at its instant: at valid_from the new price, never the ended one', () => {
    const cost = costOfEvents(prices([egressA, egressB]), 'gb', [
      { at: jan(20), quantity: '1.5' },
      { at: feb(1), bytes: 2_500_000_000n },
      { at: jan(31, '23:59:59.999'), quantity: '0.25' },
    ]);
    expectCost(cost, { total: '0.0375', complete: true }, [
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'egress-A', '1.75', '0.0175'],
      ['2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.001Z', 'egress-B', '2.5', '0.02'],
    ]);
  });

  it('leaves an event at the valid_until of a price with no successor unpriced', () => {
    const cost = costOfEvents(prices([egressA]), 'gb', [
      { at: jan(31, '23:59:59.999'), quantity: '1' },
      { at: feb(1), quantity: '2' },
    ]);
    expectCost(cost, { total: '0.01', complete: false }, [
      ['2026-01-31T23:59:59.999Z', '2026-02-01T00:00:00.000Z', 'egress-A', '1', '0.01'],
      ['2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.001Z', null, '2', null],
    ]);
  });

  it('groups the unpriced events of one gap into one line, and leaves out windows without events', () => {
    const march = egress('egress-C', '0.0050', new Date('2026-03-01T00:00:00Z'));
    const february = egress('egress-F', '0.0090', feb(10), new Date('2026-03-01T00:00:00Z'));
    const cost = costOfEvents(prices([march, egressA, february]), 'gb', [
      { at: new Date('2026-03-05T12:00:00Z'), quantity: '10' },
      { at: feb(3), quantity: '1' },
      { at: jan(5), quantity: '4' },
      { at: feb(2), quantity: '0.5' },
      { at: new Date('2026-03-02T00:00:00Z'), quantity: '10' },
    ]);
    expectCost(cost, { total: '0.14', complete: false }, [
      ['2026-01-05T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'egress-A', '4', '0.04'],
      ['2026-02-01T00:00:00.000Z', '2026-02-10T00:00:00.000Z', null, '1.5', null],
      ['2026-03-01T00:00:00.000Z', '2026-03-05T12:00:00.001Z', 'egress-C', '20', '0.1'],
    ]);
  });

  it('uses the organization price where it is in force', () => {
    const org = named('egress-org', {
      ...vpcEgress,
      organizationId: 'org-1',
      amount: '0.0050',
      validFrom: jan(10),
      validUntil: jan(20),
    });
    const cost = costOfEvents(prices([egressA], [org]), 'gb', [
      { at: jan(5), quantity: '1' },
      { at: jan(10), quantity: '1' },
      { at: jan(20), quantity: '1' },
    ]);
    expect(rows(cost)).toEqual([
      ['2026-01-05T00:00:00.000Z', '2026-01-10T00:00:00.000Z', 'egress-A', '1', '0.01'],
      ['2026-01-10T00:00:00.000Z', '2026-01-20T00:00:00.000Z', 'egress-org', '1', '0.005'],
      ['2026-01-20T00:00:00.000Z', '2026-01-20T00:00:00.001Z', 'egress-A', '1', '0.01'],
    ]);
  });

  it('converts bytes to decimal GB exactly (GB = bytes / 10^9)', () => {
    const cost = costOfEvents(prices([egressA]), 'gb', [
      { at: jan(5), bytes: 1n },
      { at: jan(5), bytes: '999999999' },
      { at: jan(6), bytes: 10n ** 30n },
    ]);
    expect(cost.lines[0].quantity).toBe('1000000000000000000001');
    expect(cost.lines[0].cost).toBe('10000000000000000000.01');
  });

  it('sums the events of a window before rounding once', () => {
    const thirds = priceRecord({
      productKey: 'observability.api_request',
      unitType: 'requests',
      unitCount: 3,
      amount: '1',
    });
    const cost = costOfEvents(prices([thirds]), 'requests', [
      { at: jan(5), quantity: '1' },
      { at: jan(6), quantity: 1n },
    ]);
    // 2/3 rounded once; rounding each event would give 0.33333333333333333333 × 2.
    expect(cost.lines[0].cost).toBe('0.66666666666666666667');
  });

  it('has no lines for no events', () => {
    expect(costOfEvents(prices([egressA]), 'gb', [])).toEqual({ lines: [], total: '0', complete: true });
  });

  describe('refuses', () => {
    const refused = (unitType: UnitType, events: unknown[]) => {
      const error = refusal(() => costOfEvents(prices([egressA]), unitType, events as MeteredEvent[]));
      return [error.message, error.details.field];
    };
    /** An event with nothing wrong in it. */
    const valid = { at: jan(5), quantity: '1' };

    it('bytes outside gb', () => {
      expect(refused('requests', [{ at: jan(5), bytes: '10' }])).toEqual([
        'events[0].bytes: bytes are accepted for gb only, not requests',
        'events[0].bytes',
      ]);
    });

    it('a byte count that is not whole, and quantities that are not non-negative decimals', () => {
      expect(refused('gb', [valid, { at: jan(5), bytes: '1.5' }])).toEqual([
        'events[1].bytes is not a whole number of bytes: 1.5',
        'events[1].bytes',
      ]);
      expect(refused('gb', [{ at: jan(5), quantity: 2 }])).toEqual([
        'events[0].quantity is not a non-negative decimal: 2',
        'events[0].quantity',
      ]);
      expect(refused('gb', [{ at: jan(5), bytes: -1n }])).toEqual([
        'events[0].bytes is not a non-negative decimal: -1',
        'events[0].bytes',
      ]);
    });

    it('an event without exactly one of quantity and bytes', () => {
      expect(refused('gb', [{ at: jan(5) }])).toEqual(['events[0] has neither quantity nor bytes', 'events[0]']);
      expect(refused('gb', [{ at: jan(5), quantity: '1', bytes: '1' }])).toEqual([
        'events[0] has both quantity and bytes: give one',
        'events[0].bytes',
      ]);
    });

    it('an event without a valid instant', () => {
      expect(refused('gb', [valid, { at: new Date(NaN), quantity: '1' }])).toEqual([
        'events[1].at is not a valid Date',
        'events[1].at',
      ]);
    });

    it.each(['seconds', 'gib_hours'] as const)('events of a time-based family (%s)', (unitType) => {
      expect(refused(unitType, [valid])).toEqual([
        `${unitType} is a time-based unit: price the usage with costOfUsage`,
        'unitType',
      ]);
    });
  });
});

describe('sumCosts', () => {
  it('adds costs exactly, where a default decimal.js sum loses digits', () => {
    const costs = ['12345678901234567890.12345678901234567891', '0.00000000000000000009'];
    expect(sumCosts(costs)).toBe('12345678901234567890.123456789012345679');
    expect(new Decimal(costs[0]).plus(costs[1]).toFixed()).toBe('12345678901234567890');
    expect(sumCosts(['0.1', '0.2'])).toBe('0.3');
    expect(sumCosts(['1.5', '2.5', '3'])).toBe('7');
    expect(sumCosts([])).toBe('0');
  });

  it('drops trailing zeros, as its documentation says (docs/using-pricing.md)', () => {
    expect(sumCosts(['0.10', '0.20'])).toBe('0.3');
    expect(sumCosts(['1.5', '2.5'])).toBe('4');
    expect(sumCosts(['0.00000000000000000010', '0'])).toBe('0.0000000000000000001');
  });

  it.each(['1e3', '-1', '', '.5'])('refuses %p', (cost) => {
    expect(() => sumCosts([cost])).toThrow(`not a plain non-negative decimal cost: ${JSON.stringify(cost)}`);
  });
});
describe('roundForInvoice', () => {
  it('rounds to the cent, half up, always with two decimals', () => {
    expect(roundForInvoice('3.15616438356164383562')).toBe('3.16');
    expect(roundForInvoice('1.80821917808219178082')).toBe('1.81');
    expect(roundForInvoice('0.005')).toBe('0.01');
    expect(roundForInvoice('0.00499999999999999999')).toBe('0.00');
    expect(roundForInvoice('2.675')).toBe('2.68'); // 2.67499999... as a float; exact here
    expect(roundForInvoice('0.015')).toBe('0.02'); // half up, not half-even (0.02 either way)
    expect(roundForInvoice('0.025')).toBe('0.03'); // half-even would give 0.02
    expect(roundForInvoice('2')).toBe('2.00');
    expect(roundForInvoice('0.1')).toBe('0.10');
    expect(roundForInvoice('0')).toBe('0.00');
    expect(roundForInvoice('12345678901234567890.995')).toBe('12345678901234567891.00');
  });

  it.each(['1e3', '-1', '', '.5', ' 1', '1.', '01'])('refuses %p', (cost) => {
    expect(() => roundForInvoice(cost)).toThrow(`not a plain non-negative decimal cost: ${JSON.stringify(cost)}`);
  });

  it('refuses a float', () => {
    expect(() => roundForInvoice(4.965 as unknown as string)).toThrow(
      'not a plain non-negative decimal cost: the number 4.965',
    );
  });

  it('one month of one volume: each line rounded then added is 4.97, its total rounded would be 4.96', () => {
    // 100 GiB through March 2026 (744 hours); the list price rises from 0.0480 to 0.0500 per
    // 730 GiB-hours on 21 March: 480 hours at the first, 264 at the second.
    const march = (day: number) => new Date(`2026-03-${String(day).padStart(2, '0')}T00:00:00Z`);
    const before = named('march-A', { amount: '0.0480', validFrom: jan(1), validUntil: march(21) });
    const after = named('march-B', { amount: '0.0500', validFrom: march(21) });
    const usage = costOfUsage(prices([before, after]), 'gib_hours', {
      from: march(1),
      to: new Date('2026-04-01T00:00:00Z'),
      sizeGib: '100',
    });
    expect(usage.lines.map((line) => [line.quantity, line.cost])).toEqual([
      ['48000', '3.15616438356164383562'],
      ['26400', '1.80821917808219178082'],
    ]);
    const lines = usage.lines.map((line) => roundForInvoice(line.cost!));
    expect(lines).toEqual(['3.16', '1.81']);
    expect(roundForInvoice(sumCosts(lines))).toBe('4.97'); // the invoice: the sum of its rounded lines
    expect(usage.total).toBe('4.96438356164383561644');
    expect(roundForInvoice(usage.total)).toBe('4.96'); // the total rounded: not the invoice's rule
  });
});
