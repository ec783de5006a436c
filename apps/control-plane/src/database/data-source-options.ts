import { pricingMigrations } from '@app/pricing';
import type { DataSourceOptions } from 'typeorm';
import { CreateVolumes1764000001000 } from './migrations/1764000001000-create-volumes';
import { VolumeEntity } from '../volumes/volume.entity';

/** One place for the DataSource settings of the app, the CLI and the TypeORM CLI. */
export function dataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: [VolumeEntity],
    migrations: [...pricingMigrations, CreateVolumes1764000001000],
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: ['error', 'warn'],
    applicationName: 'control-plane',
    extra: { max: 10, connectionTimeoutMillis: 5_000 },
  };
}
