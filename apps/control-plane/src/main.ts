import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import { AppModule } from './app.module';
import { setUpApp } from './app.setup';
import { ConfigurationError, loadConfig } from './config/environment';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres';

const logger = new Logger('Main');

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  let embedded: EmbeddedDatabase | undefined;
  if (config.databaseUrl === undefined) {
    logger.log(`DATABASE_URL is unset: using the embedded PostgreSQL in ${config.dataDir}`);
    embedded = await startEmbeddedPostgres(config.dataDir);
  }
  const databaseUrl = config.databaseUrl ?? embedded!.url;
  const app = await NestFactory.create(
    AppModule.forRoot(config, databaseUrl, { loadSampleBook: embedded !== undefined }),
  );
  setUpApp(app, config);

  // Stop accepting, finish requests in flight, close the pools, then stop PostgreSQL.
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: shutting down`);
    // Nest's close() runs the shutdown hooks (the pool closes) before the server stops: stop
    // the server first, which stops accepting and waits for the requests in flight.
    await new Promise((resolve) => (app.getHttpServer() as Server).close(resolve));
    await app.close().catch((error: unknown) => logger.error(`closing the app: ${String(error)}`));
    await embedded?.stop();
    process.exit(0);
  };
  process.once('SIGTERM', (signal) => void shutdown(signal));
  process.once('SIGINT', (signal) => void shutdown(signal));

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
