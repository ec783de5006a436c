import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DatabaseConnection, type TimedClient } from '@app/database';
import { filter, take, type Subscription } from 'rxjs';
import { performance } from 'node:perf_hooks';
import { PRICE_BOOK_CHANNEL } from '../database/price-book-writes';
import { HEAD_QUERY, toReadHead, type HeadRow } from '../database/price-snapshot-reads';
import { PriceBookLoader } from './price-book-loader';

const RECONNECT_MS = 1_000;
/** What the LISTEN connection's application name ends with (DatabaseConnection.createClient). */
export const LISTENER = 'listener';
/**
 * How often the LISTEN connection is asked where the price book stands (its answer has the database
 * timeout): often enough that what an instance holds is known final up to now (a write not seen yet
 * takes effect at least the publication margin, less COMMIT_VISIBILITY_MS, after the answer:
 * docs/decisions.md, "One clock"), so that the change feed serves a change as soon as its instant
 * has passed.
 */
export const HEARTBEAT_MS = 400;
/** Instances hearing one NOTIFY reload within this spread, not all at the same instant. */
const RELOAD_JITTER_MS = 100;

/**
 * Hears the NOTIFY every price book change sends, on a connection of its own (with the pool's
 * settings), and has the loader check the version. The connection is asked where the price book
 * stands a few times a second (HEARTBEAT_MS): the loader confirms what it holds, or checks; one that
 * stopped answering (a partition that dropped it silently) times out and is replaced, so
 * notifications come back within seconds of the network's return. After a reconnect the cache
 * checks too: notifications sent while the connection was down are lost.
 */
@Injectable()
export class PriceBookListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceBookListener.name);
  private client: TimedClient | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private databaseReady: Subscription | undefined;
  private stopped = false;
  private beating = false;

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
    const client = this.database.createClient(LISTENER);
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
      this.heartbeat = setInterval(() => void this.beat(client), HEARTBEAT_MS);
      this.heartbeat.unref();
      void this.loader.check();
    } catch {
      this.retry(client);
    }
  }

  /** Asks where the price book stands; a connection that does not answer is replaced. */
  private async beat(client: TimedClient): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    const sentAt = performance.now();
    try {
      const { rows } = await client.query<HeadRow>(HEAD_QUERY);
      if (this.client === client && !this.stopped) this.loader.heard(toReadHead(rows[0]), sentAt);
    } catch {
      this.retry(client);
    } finally {
      this.beating = false;
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
