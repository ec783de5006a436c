import 'reflect-metadata';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DatabaseConnection, dataSourceOptions } from '@app/database';
import { PricingService } from '@app/pricing';
import { withPriceBook } from '@app/pricing/cli';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { type AppConfig, ConfigurationError, loadConfig } from './config/app-config';
import { configureExpress } from './configure-express';
import { appDatabaseOptions } from './database/app-database';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres';
import { SAMPLE_PRICE_BOOK } from './database/sample-price-book';
import { HttpDrain } from './lifecycle/http-drain';
import { ShutdownState } from './lifecycle/shutdown-state';
import { appLogger } from './logging/logging';

const logger = new Logger('Main');
/** Said once at start, in production, when DATABASE_URL's role owns the schema (and so migrates it). */
const SINGLE_ROLE_WARNING =
  "the service's own role (DATABASE_URL) owns the pricing schema and migrates it, so it could disable or replace " +
  'the triggers and rewrite the change log and the prices; run the service as a member of pricing_reader, which ' +
  'owns nothing, and migrate as the owner with DATABASE_MIGRATION_URL as a deploy step (docs/operations.md, ' +
  '"Readers and writers")';
/** How long the embedded default may take to be migrated before the sample book is loaded. */
const EMBEDDED_READY_MS = 60_000;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // JSON lines from the first one on (PostgreSQL's start included); Nest keeps this logger.
  Logger.overrideLogger(appLogger(config));
  /** What has started so far, for the shutdown to stop. */
  const started: { app?: INestApplication; drain?: HttpDrain; embedded?: Promise<EmbeddedDatabase> } = {};

  // Installed first: a signal at any point, during start-up too, stops what has started, in
  // order: readiness turns 503, the server stops accepting, requests in flight finish (their
  // connections close after them; whatever is open at SHUTDOWN_TIMEOUT_S is closed), the pools
  // close, then PostgreSQL stops. A second signal closes every connection at once but still
  // lets the rest stop cleanly: an embedded PostgreSQL is never left running.
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    logger.log(`${signal}: shutting down`);
    const { app, drain, embedded } = started;
    if (app && drain) {
      app.get(ShutdownState).begin();
      const { forced } = await drain.close(config.shutdownTimeoutS * 1000);
      if (forced)
        logger.warn(`closed the connections still open after SHUTDOWN_TIMEOUT_S (${config.shutdownTimeoutS} s)`);
      await app.close().catch((error: unknown) => logger.error(`closing the app: ${String(error)}`));
    }
    // Still starting: once it has started, it stops.
    await (await embedded?.catch(() => undefined))?.stop();
    process.exit(0);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!stopping) {
      stopping = true;
      void shutdown(signal);
      return;
    }
    logger.warn(`${signal} again: closing every connection now; the shutdown goes on`);
    started.drain?.closeAll();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  if (config.databaseUrl === undefined) {
    logger.log(`DATABASE_URL is unset: using the embedded PostgreSQL in ${config.dataDir}`);
    started.embedded = startEmbeddedPostgres(config.dataDir);
  }
  // The app runs as DATABASE_URL's role (the embedded default's reader); migrations run as the
  // migration role, when there is one.
  const database = config.databaseUrl
    ? { url: config.databaseUrl, migrationUrl: config.databaseMigrationUrl }
    : await started.embedded!;
  if (stopping) return;
  // Bodies are parsed only on the routes that take one (VolumesModule), not on every request.
  const app = await NestFactory.create(AppModule.forRoot(config, database.url, database.migrationUrl), {
    bodyParser: false,
  });
  started.app = app;
  started.drain = new HttpDrain(app.getHttpServer() as Server);
  try {
    configureExpress(app, config);
    await app.init();
    if (config.databaseUrl && !config.databaseMigrationUrl && config.nodeEnv === 'production') {
      // Known once connected: a reader (the intended set-up) is not warned of.
      const connection = app.get(DatabaseConnection);
      void connection.whenReady().then(
        () => connection.runsWithOwnerRights && logger.warn(SINGLE_ROLE_WARNING),
        () => undefined,
      );
    }
    if (started.embedded) await loadSampleBookIfEmpty(app, (await started.embedded).writerUrl, config);
    if (stopping) return;
    await app.listen(config.port, config.host);
  } catch (error) {
    // A start that fails here (most often a port taken) stops what has started, in order, as a
    // shutdown does, before the process exits with 1: the app (its pools, the LISTEN connection),
    // then PostgreSQL, stopped cleanly rather than by the exit hook.
    if (!stopping) {
      await app.close().catch((closing: unknown) => logger.error(`closing the app: ${String(closing)}`));
      await (await started.embedded?.catch(() => undefined))?.stop();
    }
    throw error;
  }
  logger.log(`listening on http://${config.host}:${config.port}`);
}

/**
 * The embedded default's first start: the sample price book goes into an empty database, written
 * as the embedded writer (the service's own role only reads), on a connection opened for it.
 */
async function loadSampleBookIfEmpty(app: INestApplication, writerUrl: string, config: AppConfig): Promise<void> {
  await app.get(DatabaseConnection).whenReady(EMBEDDED_READY_MS);
  const book: unknown = JSON.parse(await readFile(SAMPLE_PRICE_BOOK, 'utf8'));
  const writer = new DataSource({
    ...dataSourceOptions({ ...appDatabaseOptions(writerUrl, config.databaseTimeoutS), poolSize: 1 }),
    logging: false,
  });
  await writer.initialize();
  try {
    const loaded = await withPriceBook(writer, (priceBook) =>
      priceBook.applyIfEmpty(book, {
        actor: 'control-plane',
        reason: 'the sample price book, loaded into an empty embedded database',
      }),
    );
    if (!loaded) return;
    logger.log(`loaded the sample price book (${loaded.inserted} prices)`);
    // As PriceBookService in the app would (PricingModuleHost.afterWrite): read back, then wait
    // for the write's publication instant, so that the first answer has the sample prices.
    await app.get(PricingService).refresh();
    const wait = loaded.instant.getTime() + 1 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  } finally {
    await writer.destroy();
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigurationError) {
    console.error(error.message);
  } else {
    logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  }
  process.exit(1);
});
