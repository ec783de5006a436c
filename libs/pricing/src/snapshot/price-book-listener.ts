import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DatabaseConnection, type TimedClient } from '@app/database';
import { filter, take, type Subscription } from 'rxjs';
import { PRICE_BOOK_CHANNEL } from '../database/price-book-writes';
import { PriceBookLoader } from './price-book-loader';

const RECONNECT_MS = 1_000;
/** How often the LISTEN connection is asked whether it is alive (its answer has the database timeout). */
export const HEARTBEAT_MS = 3_000;
/** Instances hearing one NOTIFY reload within this spread, not all at the same instant. */
const RELOAD_JITTER_MS = 100;

/**
 * Hears the NOTIFY every price book change sends, on a connection of its own (with the pool's
 * settings), and has the loader check the version. The connection is asked `SELECT 1` every few
 * seconds: one that stopped answering (a partition that dropped it silently) times out and is
 * replaced, so notifications come back within seconds of the network's return. After a
 * reconnect the cache checks too: notifications sent while the connection was down are lost.
 */
@Injectable()
export class PriceBookListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceBookListener.name);
  private client: TimedClient | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private databaseReady: Subscription | undefined;
  private stopped = false;

  constructor(
    private readonly database: DatabaseConnection,
    private readonly loader: PriceBookLoader,
  ) {}

  onApplicationBootstrap(): void {
    this.databaseReady = this.database.state$
      .pipe(
        filter((state) => state === 'ready'),
        take(1),
      )
      .subscribe(() => void this.connect());
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.databaseReady?.unsubscribe();
    clearTimeout(this.reconnectTimer);
    clearInterval(this.heartbeat);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = this.database.createClient();
    this.client = client;
    // Nothing waits on it: it never keeps the process alive, like the timers here and the loader's,
    // so a host that failed to start (a port taken) and never closed its app still exits.
    client.unref();
    client.on('notification', () => {
      setTimeout(() => void this.loader.check(), Math.random() * RELOAD_JITTER_MS).unref();
    });
    client.on('error', () => this.retry(client));
    client.on('end', () => this.retry(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${PRICE_BOOK_CHANNEL}`);
      clearInterval(this.heartbeat);
      this.heartbeat = setInterval(() => {
        client.query('SELECT 1').catch(() => this.retry(client));
      }, HEARTBEAT_MS);
      this.heartbeat.unref();
      void this.loader.check();
    } catch {
      this.retry(client);
    }
  }

  private retry(client: TimedClient): void {
    if (this.stopped || this.client !== client) return;
    this.client = undefined;
    clearInterval(this.heartbeat);
    client.drop();
    this.logger.debug('price book notifications lost; reconnecting');
    this.reconnectTimer = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.reconnectTimer.unref();
  }
}
