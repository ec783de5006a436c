import 'reflect-metadata';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DatabaseConnection } from '@app/database';
import { PriceBookService, PricingService } from '@app/pricing';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { AppModule } from './app.module';
import { ConfigurationError, loadConfig } from './config/app-config';
import { configureExpress } from './configure-express';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres';
import { SAMPLE_PRICE_BOOK } from './database/sample-price-book';
import { appLogger } from './logging/logging';

const logger = new Logger('Main');
/** How long the embedded default may take to be migrated before the sample book is loaded. */
const EMBEDDED_READY_MS = 60_000;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // JSON lines from the first one on (PostgreSQL's start included); Nest keeps this logger.
  Logger.overrideLogger(appLogger(config));
  /** What has started so far, for the shutdown to stop. */
  const started: { app?: INestApplication; embedded?: EmbeddedDatabase } = {};

  // Installed first: a signal at any point, during start-up too, stops what has started, in
  // order: stop accepting, finish requests in flight, close the pools, then stop PostgreSQL.
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: shutting down`);
    const { app, embedded } = started;
    if (app) {
      // Nest's close() runs the shutdown hooks (the pool closes) before the server stops: stop
      // the server first, which stops accepting and waits for the requests in flight.
      const server = app.getHttpServer() as Server;
      if (server.listening) await new Promise((resolve) => server.close(resolve));
      await app.close().catch((error: unknown) => logger.error(`closing the app: ${String(error)}`));
    }
    await embedded?.stop();
    process.exit(0);
  };
  process.once('SIGTERM', (signal) => void shutdown(signal));
  process.once('SIGINT', (signal) => void shutdown(signal));

  if (config.databaseUrl === undefined) {
    logger.log(`DATABASE_URL is unset: using the embedded PostgreSQL in ${config.dataDir}`);
    started.embedded = await startEmbeddedPostgres(config.dataDir);
  }
  if (stopping) return;
  const databaseUrl = config.databaseUrl ?? started.embedded!.url;
  // Bodies are parsed only on the routes that take one (VolumesModule), not on every request.
  const app = await NestFactory.create(AppModule.forRoot(config, databaseUrl), { bodyParser: false });
  started.app = app;
  configureExpress(app, config);
  await app.init();
  if (started.embedded) await loadSampleBookIfEmpty(app);
  if (stopping) return;
  await app.listen(config.port, config.host);
  logger.log(`listening on http://${config.host}:${config.port}`);
}

/** The embedded default's first start: the sample price book goes into an empty database. */
async function loadSampleBookIfEmpty(app: INestApplication): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    app.get(DatabaseConnection).whenReady(),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('the embedded PostgreSQL was not ready in time')), EMBEDDED_READY_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  const book: unknown = JSON.parse(await readFile(SAMPLE_PRICE_BOOK, 'utf8'));
  const loaded = await app.get(PriceBookService).applyIfEmpty(book);
  if (!loaded) return;
  logger.log(`loaded the sample price book (${loaded.inserted} prices)`);
  await app.get(PricingService).refresh();
}

main().catch((error: unknown) => {
  if (error instanceof ConfigurationError) {
    console.error(error.message);
  } else {
    logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  }
  process.exit(1);
});
