import 'reflect-metadata';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import { AppModule } from './app.module';
import { setUpApp } from './app.setup';
import { ConfigurationError, loadConfig } from './config/environment';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres';

const logger = new Logger('Main');

async function main(): Promise<void> {
  const config = loadConfig(process.env);
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
  const app = await NestFactory.create(
    AppModule.forRoot(config, databaseUrl, { loadSampleBook: started.embedded !== undefined }),
  );
  started.app = app;
  setUpApp(app, config);
  if (stopping) return;
  await app.listen(config.port, config.host);
  logger.log(`listening on http://${config.host}:${config.port}`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigurationError) {
    console.error(error.message);
  } else {
    logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  }
  process.exit(1);
});
