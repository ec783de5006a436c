import type { DatabaseModuleOptions } from '@app/database';
import { PRICING_RUNTIME_GRANTS, pricingMigrations } from '@app/pricing/migrations';
import { VolumeEntity } from '../volumes/volume.entity';
import { CreateVolumes1764000001000 } from './migrations/1764000001000-create-volumes';
import {
  VOLUMES_RUNTIME_GRANTS,
  VolumesRuntimeGrants1764000010600,
} from './migrations/1764000010600-volumes-runtime-grants';

/**
 * The control plane's database: its entities and every migration, the libraries' first, and the
 * functions that grant the runtime role what it needs of each part (with a migration role).
 */
export function appDatabaseOptions(url: string, timeoutS?: number, migrationTimeoutS?: number): DatabaseModuleOptions {
  return {
    url,
    timeoutS,
    migrationTimeoutS,
    entities: [VolumeEntity],
    migrations: [...pricingMigrations, CreateVolumes1764000001000, VolumesRuntimeGrants1764000010600],
    runtimeGrants: [PRICING_RUNTIME_GRANTS, VOLUMES_RUNTIME_GRANTS],
    applicationName: 'control-plane',
  };
}
