/**
 * What PriceBookService asks of where it runs, provided by the module it runs in: PricingModule
 * provides PricingModuleHost (pricing-module-host.ts: a database that connects in the background,
 * prices held in memory); PriceBookCliModule provides StandaloneHost (cli/price-book-cli.module.ts:
 * a DataSource handed over migrated, no prices held).
 */
export abstract class PriceBookHost {
  /** Resolves once the database can be used; throws PRICING_UNAVAILABLE when it cannot be in time. */
  abstract databaseReady(): Promise<void>;

  /**
   * Called once a write committed, before the write resolves: whatever holds prices reads it back
   * and waits for its publication instant.
   */
  abstract afterWrite(instant: Date): Promise<void>;
}

/** Where the DataSource is ready when PriceBookService is made, and no prices are held: the CLI, scripts, tests. */
export class StandaloneHost extends PriceBookHost {
  databaseReady(): Promise<void> {
    return Promise.resolve();
  }

  afterWrite(): Promise<void> {
    return Promise.resolve();
  }
}
