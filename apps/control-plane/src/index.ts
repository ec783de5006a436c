// The control plane's entry point for its own processes (main.ts, cli.ts) and the e2e tests.
export { AppModule } from './app.module';
export { configureExpress } from './configure-express';
export { AppConfig, ConfigurationError, loadConfig } from './config/app-config';
export { appDatabaseOptions } from './database/app-database';
export { startEmbeddedPostgres, freePort, type EmbeddedDatabase } from './database/embedded-postgres';
export { SAMPLE_PRICE_BOOK } from './database/sample-price-book';
export { CreateVolumeDto } from './volumes/create-volume.dto';
export { MetricsServer } from './metrics/metrics-server';
export { runPriceBookCli, type CliIo } from './price-book-cli';
