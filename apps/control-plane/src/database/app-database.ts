import type { DatabaseModuleOptions } from '@app/database';
import { pricingMigrations } from '@app/pricing/migrations';
import { VolumeEntity } from '../volumes/volume.entity';
import { CreateVolumes1764000001000 } from './migrations/1764000001000-create-volumes';

/** The control plane's database: its entities and every migration, the libraries' first. */
export function appDatabaseOptions(url: string, timeoutS?: number, migrationTimeoutS?: number): DatabaseModuleOptions {
  return {
    url,
    timeoutS,
    migrationTimeoutS,
    entities: [VolumeEntity],
    migrations: [...pricingMigrations, CreateVolumes1764000001000],
    applicationName: 'control-plane',
  };
}
