import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { PRICE_BOOK_CHANNEL } from '../database/price-book.store';
import { PRICING_OPTIONS, type PricingModuleOptions } from '../pricing.options';
import { PriceBookCache } from './price-book-cache';

const RECONNECT_MS = 1_000;

/**
 * Hears the NOTIFY every price book change sends, on a connection of its own, and has the
 * cache check the version. After a reconnect it checks too: notifications sent while the
 * connection was down are lost.
 */
@Injectable()
export class PriceBookListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceBookListener.name);
  private client: Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    @Inject(PRICING_OPTIONS) private readonly options: PricingModuleOptions,
    private readonly cache: PriceBookCache,
  ) {}

  onApplicationBootstrap(): void {
    void this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    // Keepalive: a connection dropped silently would otherwise go unnoticed.
    const client = new Client({
      connectionString: this.options.databaseUrl,
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    this.client = client;
    client.on('notification', () => void this.cache.check());
    client.on('error', () => this.retry(client));
    client.on('end', () => this.retry(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${PRICE_BOOK_CHANNEL}`);
      void this.cache.check();
    } catch {
      this.retry(client);
    }
  }

  private retry(client: Client): void {
    if (this.stopped || this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.logger.debug('price book notifications lost; reconnecting');
    this.reconnectTimer = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.reconnectTimer.unref();
  }
}
