import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BehaviorSubject, filter, firstValueFrom, throwError, timeout } from 'rxjs';
import { DataSource } from 'typeorm';
import { clientConfig, timedClientClass } from './data-source-options';
import { DATABASE_OPTIONS, type DatabaseModuleOptions } from './database.options';
import { MigrationTimeoutError } from './migrate';
import { migrateSchema, SchemaBehindError, type MigrationRun } from './migrate-database';
import type { TimedClient } from './timed-client';

/**
 * `connecting`: not connected or not migrated yet (retrying); `behind`: connected, but the schema
 * lacks migrations that this role may not run (SchemaBehindError: said once, checked again quietly
 * until a deploy step has run them); `ready`: connected and migrated (the pool reconnects by itself
 * after that); `failed`: a migration overran its time limit, and is not tried again; `stopped`: the
 * app is shutting down.
 */
export type DatabaseState = 'connecting' | 'behind' | 'ready' | 'failed' | 'stopped';

const RETRY_MS = 2_000;

/**
 * The one owner of the database's lifecycle. It connects in the background, so that the app
 * listens even while PostgreSQL cannot be reached, retries until it can, migrates under an
 * advisory lock (as the migration role when there is one, else only what is pending and only when
 * its role may: migrateDatabase), then publishes `ready`. A schema behind the code that this role
 * may not migrate is `behind`: logged once, and checked again every 2 s, quietly, so that the
 * instance is ready once a deploy step has migrated (never a loop of failed migrations). Everything
 * else observes `state$`; nobody else connects, migrates or disconnects the DataSource.
 *
 * Closing the app stops it and leaves nothing running: no retry, no migration, and no pool
 * opened by an attempt still in flight (close() waits for it, at most the database timeout).
 * After a failed init, close() does the same (Nest 12 runs the shutdown hooks after a failed
 * init); but `NestFactory.createApplicationContext` returns no context when init fails and calls
 * no hook, so nothing can stop the retries then: the retry timer is unref'd, so they never keep
 * the process alive, and a job awaits `whenReady()` after creating its context, never in a
 * bootstrap hook (docs/using-pricing.md, "A job or a worker").
 */
@Injectable()
export class DatabaseConnection implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DatabaseConnection.name);
  private readonly state = new BehaviorSubject<DatabaseState>('connecting');
  readonly state$ = this.state.asObservable();
  private retryTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  /** The DataSource's initialize() in flight, if any. */
  private initializing: Promise<unknown> | undefined;
  /** A migration in flight, if any (with a migration role, on a connection of its own). */
  private migrating: Promise<MigrationRun> | undefined;
  /** Once ready: whether the app's own role has the schema owner's rights (no migration role). */
  private ownerRights = false;
  /** While `behind`: the migrations the schema lacks. */
  private lacking: readonly string[] = [];

  constructor(
    private readonly dataSource: DataSource,
    @Inject(DATABASE_OPTIONS) private readonly options: DatabaseModuleOptions,
  ) {}

  get isReady(): boolean {
    return this.state.value === 'ready';
  }

  /**
   * Once ready, without a migration role: whether the app's own role (`url`'s) owns the schema, or
   * has its rights (a superuser, a member of the owner), and so could rewrite what its triggers
   * guard (main.ts warns of it in production).
   */
  get runsWithOwnerRights(): boolean {
    return this.ownerRights;
  }

  /** While the schema is behind the code (`behind`), the migrations it lacks, in order; else none. */
  get pendingMigrations(): readonly string[] {
    return this.state.value === 'behind' ? this.lacking : [];
  }

  /**
   * Resolves once the database is connected and migrated; rejects if the app stops first, or
   * after `timeoutMs` when one is given.
   */
  async whenReady(timeoutMs?: number): Promise<void> {
    const settled = this.state$.pipe(filter((s) => s !== 'connecting' && s !== 'behind'));
    const state = await firstValueFrom(
      timeoutMs === undefined
        ? settled
        : settled.pipe(
            timeout({
              first: timeoutMs,
              with: () => throwError(() => new Error(`the database was not ready within ${timeoutMs} ms`)),
            }),
          ),
    );
    if (state === 'stopped') throw new Error('the app stopped before the database was ready');
    if (state === 'failed') throw new Error('a migration overran its time limit: the database will not be ready');
  }

  /**
   * A client with the pool's settings (URL, timeouts, keepalive), for a LISTEN connection; its
   * application name says what it is for (`purpose`), so that it can be told from the pool's.
   */
  createClient(purpose?: string): TimedClient {
    const TimedClient = timedClientClass(this.options);
    const config = clientConfig(this.options);
    const name = purpose === undefined ? config.application_name : `${config.application_name ?? ''} ${purpose}`.trim();
    return new TimedClient({ ...config, application_name: name });
  }

  onApplicationBootstrap(): void {
    void this.connect();
  }

  /**
   * Stops connecting. An attempt in flight is awaited and what it opened closed here: TypeORM's
   * own shutdown hook closes the DataSource only if it is open when that hook runs, and a pool
   * opened later would stay open in a process that closed its app.
   */
  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.wake?.();
    if (this.state.value !== 'stopped') {
      this.state.next('stopped');
      this.state.complete();
    }
    const inFlight = this.initializing;
    await inFlight?.catch(() => undefined);
    // The migration role's connection closes once its migration is done (or failed).
    await this.migrating?.catch(() => undefined);
    if (inFlight && this.dataSource.isInitialized) await this.dataSource.destroy();
  }

  private async connect(): Promise<void> {
    let reported = false;
    let behindReported = false;
    while (this.state.value === 'connecting' || this.state.value === 'behind') {
      try {
        if (!this.dataSource.isInitialized) {
          this.initializing = this.dataSource.initialize();
          await this.initializing.finally(() => (this.initializing = undefined));
        }
        // Stopped while connecting: no migration; onApplicationShutdown closes what this opened.
        if (this.state.value !== 'connecting' && this.state.value !== 'behind') return;
        this.migrating = migrateSchema(this.dataSource, this.options);
        const { applied, ownerRights } = await this.migrating.finally(() => (this.migrating = undefined));
        this.ownerRights = ownerRights;
        if (applied.length > 0) this.logger.log(`migrated: ${applied.join(', ')}`);
        if (this.state.value === 'behind') this.logger.log('the schema has its migrations now: ready');
        if (this.state.value === 'connecting' || this.state.value === 'behind') this.state.next('ready');
        return;
      } catch (error) {
        if (error instanceof MigrationTimeoutError) {
          // Again would run as long again, holding the tables each time: an operator decides.
          this.logger.error(
            `${error.message}; not retried: run \`npm run migrate\` with a longer DATABASE_MIGRATION_TIMEOUT_S, then restart`,
          );
          this.state.next('failed');
          return;
        }
        if (error instanceof SchemaBehindError) {
          // Not this instance's to fix: said once; readiness names what is pending meanwhile.
          this.lacking = error.pending;
          if (!behindReported)
            this.logger.error(`${error.message}; not ready until then (checked every ${RETRY_MS / 1000} s)`);
          behindReported = true;
          if (this.state.value === 'connecting') this.state.next('behind');
        } else if (!reported) {
          this.logger.warn(`database not ready, retrying every ${RETRY_MS / 1000} s: ${(error as Error).message}`);
          reported = true;
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.retryTimer = setTimeout(resolve, RETRY_MS);
          // Never what keeps a process alive: an app context whose start failed, and was not
          // closed, must not run forever for it (test/pricing-module.e2e-spec.ts).
          this.retryTimer.unref();
        });
      }
    }
  }
}
