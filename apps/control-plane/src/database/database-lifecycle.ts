import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { applyPriceBookFileIfEmpty, PricingService } from '@app/pricing';
import { DataSource } from 'typeorm';
import { SAMPLE_PRICE_BOOK } from './sample-price-book';
import { migrateUnderLock } from './migrate';

export const DATABASE_SETTINGS = Symbol('DATABASE_SETTINGS');

export interface DatabaseSettings {
  /** The embedded default loads the sample price book into an empty database. */
  readonly loadSampleBook: boolean;
}

const RETRY_MS = 2_000;

/**
 * Connects to PostgreSQL in the background, so that the app listens even while the database
 * cannot be reached; migrates under an advisory lock once connected; then has pricing load.
 */
@Injectable()
export class DatabaseLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DatabaseLifecycle.name);
  private stopped = false;
  private migrated = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  readonly ready: Promise<void>;
  private markReady!: () => void;

  constructor(
    private readonly dataSource: DataSource,
    private readonly pricing: PricingService,
    @Inject(DATABASE_SETTINGS) private readonly settings: DatabaseSettings,
  ) {
    this.ready = new Promise((resolve) => (this.markReady = resolve));
  }

  get isMigrated(): boolean {
    return this.migrated;
  }

  onApplicationBootstrap(): void {
    void this.connect();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.wake?.();
  }

  private async connect(): Promise<void> {
    let reported = false;
    while (!this.stopped) {
      try {
        if (!this.dataSource.isInitialized) await this.dataSource.initialize();
        const applied = await migrateUnderLock(this.dataSource);
        if (applied.length > 0) this.logger.log(`migrated: ${applied.join(', ')}`);
        if (this.settings.loadSampleBook) {
          const loaded = await applyPriceBookFileIfEmpty(this.dataSource, SAMPLE_PRICE_BOOK);
          if (loaded !== undefined) this.logger.log(`loaded the sample price book (${loaded} prices)`);
        }
        this.migrated = true;
        this.markReady();
        await this.pricing.refresh();
        return;
      } catch (error) {
        if (!this.dataSource.isInitialized) await this.dataSource.driver.disconnect().catch(() => undefined);
        if (!reported)
          this.logger.warn(`database not ready, retrying every ${RETRY_MS / 1000} s: ${(error as Error).message}`);
        reported = true;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.retryTimer = setTimeout(resolve, RETRY_MS);
        });
      }
    }
  }
}
