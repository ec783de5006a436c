import { Module, type DynamicModule, type FactoryProvider, type ModuleMetadata } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options';
import { DatabaseConnection } from './database-connection';
import { DATABASE_OPTIONS, type DatabaseModuleOptions } from './database.options';

export interface DatabaseModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  readonly inject?: FactoryProvider['inject'];
  readonly useFactory: (...args: never[]) => DatabaseModuleOptions | Promise<DatabaseModuleOptions>;
}

/**
 * The app's one PostgreSQL database: a TypeORM DataSource (so TypeOrmModule.forFeature works),
 * connected and migrated in the background by DatabaseConnection (forRoot), or one its caller
 * opened (forDataSource). Global.
 */
@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseModuleOptions): DynamicModule {
    return DatabaseModule.forRootAsync({ useFactory: () => options });
  }

  static forRootAsync(options: DatabaseModuleAsyncOptions): DynamicModule {
    const factory = options.useFactory as (...args: unknown[]) => Promise<DatabaseModuleOptions>;
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        ...(options.imports ?? []),
        TypeOrmModule.forRootAsync({
          imports: options.imports,
          inject: options.inject,
          // Connected by DatabaseConnection, in the background: the app listens without a database.
          useFactory: async (...args: unknown[]) => ({
            ...dataSourceOptions(await factory(...args)),
            manualInitialization: true,
          }),
        }),
      ],
      providers: [{ provide: DATABASE_OPTIONS, inject: options.inject, useFactory: factory }, DatabaseConnection],
      exports: [DATABASE_OPTIONS, DatabaseConnection],
    };
  }

  /**
   * A DataSource that its caller initialized and migrated, and destroys (the price book CLI, which
   * migrates or refuses before a command runs; scripts; tests), provided as it is: no
   * DatabaseConnection, nothing here connects, migrates, retries or closes it. Global.
   */
  static forDataSource(dataSource: DataSource): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [{ provide: DataSource, useValue: dataSource }],
      exports: [DataSource],
    };
  }
}
