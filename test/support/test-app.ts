import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Clock } from '@app/clock';
import { AppModule, configureExpress, loadConfig } from '@app/control-plane';
import { DatabaseConnection } from '@app/database';
import { PricingService } from '@app/pricing';
import type { Server } from 'node:http';

export interface TestApp {
  readonly app: INestApplication;
  readonly server: Server;
  /** http://127.0.0.1:<port> when started with `listen: true`. */
  readonly url: string | undefined;
  close(): Promise<void>;
}

export interface TestAppOptions {
  readonly databaseUrl: string;
  /** Environment variables, as the app would read them (DATABASE_URL is set from databaseUrl). */
  readonly env?: Record<string, string>;
  readonly clock?: Clock;
  /** Listen on a port of loopback (for tests that need a real socket). */
  readonly listen?: boolean;
  /** Wait until the database is migrated and prices are loaded (default true). */
  readonly waitUntilReady?: boolean;
  /** Where the app logs (default: errors only, to the console). */
  readonly logger?: LoggerService;
}

/** The real control-plane app, in-process, on the given database, set up as main.ts sets it up. */
export async function startTestApp(options: TestAppOptions): Promise<TestApp> {
  // Quiet request lines and no metrics port unless a test asks (test files run side by side).
  const config = loadConfig({
    LOG_LEVEL: 'error',
    METRICS_PORT: 'off',
    ...options.env,
    DATABASE_URL: options.databaseUrl,
  });
  let builder = Test.createTestingModule({ imports: [AppModule.forRoot(config, options.databaseUrl)] });
  if (options.clock) builder = builder.overrideProvider(Clock).useValue(options.clock);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication({ logger: options.logger ?? ['error'], bodyParser: false });
  configureExpress(app, config);
  await app.init();
  let url: string | undefined;
  if (options.listen) {
    await app.listen(0, '127.0.0.1');
    const address = (app.getHttpServer() as Server).address();
    if (typeof address === 'object' && address) url = `http://127.0.0.1:${address.port}`;
  }
  if (options.waitUntilReady !== false) {
    await app.get(DatabaseConnection).whenReady();
    await app.get(PricingService).refresh();
  }
  return { app, server: app.getHttpServer() as Server, url, close: () => app.close() };
}
