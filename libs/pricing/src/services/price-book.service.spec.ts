import { Test } from '@nestjs/testing';
import { PriceBookReads } from '../database/price-book-reads';
import { PriceBookWrites, type PriceBookTransaction, type PriceScope } from '../database/price-book-writes';
import { PriceSnapshotReads } from '../database/price-snapshot-reads';
import type { PriceRecord } from '../core/price-record';
import { priceRecord } from '../core/price-record.fixture';
import { PriceBookHost, StandaloneHost } from './price-book-host';
import { PriceBookService } from './price-book.service';

// The write workflow on a repository that only records what it is asked: an import reads the
// stored records of the keys and scopes its book names, and nothing else, so that changing one
// price of a large book reads one scope (docs/benchmarks.md, "A large price book").

function stubRepository(stored: readonly PriceRecord[]) {
  const asked: PriceScope[][] = [];
  const committed: boolean[] = [];
  /** What each transaction was: a write, or a dry run's read-only one. */
  const transactions: ('write' | 'read only')[] = [];
  const repository = {
    inTransaction: async <T>(
      work: (tx: PriceBookTransaction) => Promise<T>,
      { commit = true }: { commit?: boolean | ((result: T) => boolean) } = {},
    ) => {
      transactions.push('write');
      const result = await work({} as PriceBookTransaction);
      committed.push(typeof commit === 'function' ? commit(result) : commit);
      return result;
    },
    inReadOnlyTransaction: <T>(work: (tx: PriceBookTransaction) => Promise<T>) => {
      transactions.push('read only');
      return work({} as PriceBookTransaction);
    },
    begin: () => Promise.resolve(new Date('2026-06-01T12:00:00Z')),
    nextInstant: () => Promise.resolve(new Date('2026-06-01T12:00:00Z')),
    recordsOf: (_tx: PriceBookTransaction, scopes: readonly PriceScope[]) => {
      asked.push([...scopes]);
      const named = new Set(scopes.map((s) => `${s.organizationId}/${s.productKey}`));
      return Promise.resolve(stored.filter((r) => named.has(`${r.organizationId}/${r.productKey}`)));
    },
    availability: () => Promise.resolve(new Map<string, boolean>()),
    pricedProducts: () => Promise.resolve(new Set<string>()),
    writePlan: () => Promise.resolve(),
    writeWithdrawal: () => Promise.resolve(),
    publishChange: () => Promise.resolve('2'),
    version: () => Promise.resolve('1'),
  };
  return { repository: repository as unknown as PriceBookWrites, asked, committed, transactions };
}

/** The service as Nest makes it, on the stub and the host of a process that holds no prices. */
async function serviceOn(writes: PriceBookWrites): Promise<PriceBookService> {
  const moduleRef = await Test.createTestingModule({
    providers: [
      PriceBookService,
      { provide: PriceBookWrites, useValue: writes },
      { provide: PriceBookReads, useValue: {} },
      { provide: PriceSnapshotReads, useValue: {} },
      { provide: PriceBookHost, useClass: StandaloneHost },
    ],
  }).compile();
  return moduleRef.get(PriceBookService);
}

const price = (productKey: string, amount: string, organization?: string) => ({
  product_key: productKey,
  ...(organization && { organization_id: organization }),
  unit_type: 'gib_hours',
  unit_count: 730,
  amount,
});

describe('PriceBookService reads what a write touches', () => {
  it('asks for the scopes of the book, each once, and plans against what they hold', async () => {
    const stored = [
      priceRecord({ productKey: 'storage.gp1', amount: '0.0480' }),
      priceRecord({ productKey: 'storage.gp1', organizationId: 'org_1', amount: '0.0400' }),
      priceRecord({ productKey: 'storage.snapshot', amount: '0.0100' }),
    ];
    const { repository, asked, committed } = stubRepository(stored);
    const result = await (
      await serviceOn(repository)
    ).apply({
      prices: [
        price('storage.gp1', '0.0480'),
        price('storage.gp1', '0.0390', 'org_1'),
        price('storage.gp1', '0.0390', 'org_1'),
        price('storage.st1', '0.0250'),
      ],
    });
    expect(asked).toEqual([
      [
        { productKey: 'storage.gp1', organizationId: null },
        { productKey: 'storage.gp1', organizationId: 'org_1' },
        { productKey: 'storage.st1', organizationId: null },
      ],
    ]);
    // The restated list price and org_1's repeated entry are unchanged; org_1's price changes (its
    // stored price is ended) and storage.st1 is new.
    expect({ unchanged: result.unchanged, ended: result.ended, inserted: result.inserted }).toEqual({
      unchanged: 2,
      ended: 1,
      inserted: 2,
    });
    expect(committed).toEqual([true]);
  });

  it('a withdrawal reads its one scope; a dry run only reads, in a read-only transaction', async () => {
    const { repository, asked, committed, transactions } = stubRepository([
      priceRecord({ productKey: 'storage.gp1', validFrom: '2027-01-01T00:00:00Z' }),
    ]);
    const service = await serviceOn(repository);
    await service.withdraw({
      productKey: 'storage.gp1',
      organizationId: null,
      validFrom: Date.parse('2027-01-01T00:00:00Z'),
    });
    expect(asked).toEqual([
      [{ productKey: 'storage.gp1', organizationId: null, validFrom: Date.parse('2027-01-01T00:00:00Z') }],
    ]);
    const planned = await service.apply({ prices: [price('storage.snapshot', '0.05')] }, { dryRun: true });
    expect({ dryRun: planned.dryRun, changed: planned.changed, inserted: planned.inserted }).toEqual({
      dryRun: true,
      changed: true,
      inserted: 1,
    });
    expect(committed).toEqual([true]);
    expect(transactions).toEqual(['write', 'read only']);
  });
});
