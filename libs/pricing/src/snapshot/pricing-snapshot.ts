import type { ListPriceHistory } from '../price-list/build-price-list';
import { isInForce, type PriceRecord } from '../price-list/price-record';
import type { ApplicablePrices } from '../price-list/usage';

/** Everything the pricing library serves, as read from the database in one transaction. */
export interface PricingData {
  readonly records: readonly PriceRecord[];
  readonly availability: ReadonlyMap<string, boolean>;
  /** Instants of list-price writes (set, end, withdrawal), for `last_changed`. */
  readonly listWrites: readonly Date[];
  readonly version: string;
}

/** Prices and availability held in memory, indexed for lookups at any instant. */
export class PricingSnapshot {
  readonly listHistory: ListPriceHistory;
  private readonly listPrices = new Map<string, PriceRecord[]>();
  private readonly organizationPrices = new Map<string, PriceRecord[]>();

  constructor(readonly data: PricingData) {
    const listRecords: PriceRecord[] = [];
    for (const record of data.records) {
      if (record.organizationId === null) {
        listRecords.push(record);
        push(this.listPrices, record.productKey, record);
      } else {
        push(this.organizationPrices, organizationKey(record.organizationId, record.productKey), record);
      }
    }
    this.listHistory = { records: listRecords, writes: data.listWrites };
  }

  get version(): string {
    return this.data.version;
  }

  /** The list price of `productKey` in force at `instant`. */
  listPriceAt(productKey: string, instant: Date): PriceRecord | undefined {
    return this.listPrices.get(productKey)?.find((r) => isInForce(r, instant));
  }

  /** The price agreed with `organizationId` for `productKey`, in force at `instant`. */
  organizationPriceAt(productKey: string, organizationId: string, instant: Date): PriceRecord | undefined {
    return this.organizationPrices.get(organizationKey(organizationId, productKey))?.find((r) => isInForce(r, instant));
  }

  /** The records that may price usage of `productKey`: its list prices, and the organization's. */
  applicablePrices(productKey: string, organizationId?: string): ApplicablePrices {
    return {
      list: this.listPrices.get(productKey) ?? [],
      organization:
        organizationId === undefined
          ? []
          : (this.organizationPrices.get(organizationKey(organizationId, productKey)) ?? []),
    };
  }

  /** Availability is data: a product not marked otherwise is on sale. */
  isOnSale(productKey: string): boolean {
    return this.data.availability.get(productKey) ?? true;
  }
}

function push(map: Map<string, PriceRecord[]>, key: string, record: PriceRecord): void {
  const list = map.get(key);
  if (list) list.push(record);
  else map.set(key, [record]);
}

function organizationKey(organizationId: string, productKey: string): string {
  return `${organizationId}\u0000${productKey}`;
}
