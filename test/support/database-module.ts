import type { LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { DatabaseConnection, DatabaseModule, type DatabaseModuleOptions, type DatabaseState } from '@app/database';
import { filter, firstValueFrom } from 'rxjs';
import type { MigrationInterface } from 'typeorm';

/** DatabaseModule alone on `options`, with `extra` migrations after the app's, initialized. */
export async function startDatabaseModule(
  options: DatabaseModuleOptions,
  extra: (new () => MigrationInterface)[],
  logger: LoggerService,
): Promise<TestingModule> {
  const module = await Test.createTestingModule({
    imports: [DatabaseModule.forRoot({ ...options, migrations: [...(options.migrations as []), ...extra] })],
  })
    .setLogger(logger)
    .compile();
  await module.init();
  return module;
}

/** The state the connection settles in after connecting: ready, or why not. */
export const settledState = (connection: DatabaseConnection): Promise<DatabaseState> =>
  firstValueFrom(connection.state$.pipe(filter((state) => state !== 'connecting')));
