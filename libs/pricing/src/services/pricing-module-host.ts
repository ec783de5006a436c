import { Injectable } from '@nestjs/common';
import { DatabaseConnection } from '@app/database';
import { PricingUnavailableError } from '../errors/pricing-error';
import { PriceBookLoader } from '../snapshot/price-book-loader';
import { PriceBookHost } from './price-book-host';
import { READY_TIMEOUT_MS } from './pricing.service';

/**
 * PriceBookService inside PricingModule: the database connects and migrates in the background
 * (DatabaseConnection), and the prices PricingService answers from are held in memory.
 */
@Injectable()
export class PricingModuleHost extends PriceBookHost {
  constructor(
    private readonly database: DatabaseConnection,
    private readonly loader: PriceBookLoader,
  ) {
    super();
  }

  /**
   * A call made right after start-up waits for the database, up to READY_TIMEOUT_MS, then fails
   * with the library's PRICING_UNAVAILABLE rather than a driver's error.
   */
  async databaseReady(): Promise<void> {
    if (this.database.isReady) return;
    try {
      await this.database.whenReady(READY_TIMEOUT_MS);
    } catch {
      throw new PricingUnavailableError();
    }
  }

  /**
   * The prices are read back, and the write's publication instant waited for (on the real clock: the
   * database's, not the module's Clock), so that a write is in PricingService's answers when it
   * resolves (docs/decisions.md, "One clock").
   */
  async afterWrite(instant: Date): Promise<void> {
    await this.loader.check();
    const wait = instant.getTime() + 2 - Date.now();
    if (wait <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, wait));
    // A check after the instant: the book as recorded now (PricingService's default) includes the write.
    await this.loader.check();
  }
}
