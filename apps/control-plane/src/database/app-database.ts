import type { DatabaseModuleOptions } from '@app/database';
import { PRICING_ROLE_GRANTS, pricingMigrations } from '@app/pricing/migrations';
import { VolumeEntity } from '../volumes/volume.entity';
import { CreateVolumes1764000001000 } from './migrations/1764000001000-create-volumes';
import { VolumesRuntimeGrants1764000010600 } from './migrations/1764000010600-volumes-runtime-grants';
import { VOLUMES_ROLE_GRANTS, VolumesGroupRole1764000013100 } from './migrations/1764000013100-volumes-group-role';

/**
 * The control plane's database: its entities and every migration, the libraries' first, and the
 * functions that grant each part to its group roles (with a migration role): `pricing_reader` and
 * `pricing_writer` for the price book, `volumes_writer` for the volumes routes, each name after
 * `rolePrefix` (DATABASE_ROLE_PREFIX).
 */
export function appDatabaseOptions(
  url: string,
  timeoutS?: number,
  migrationTimeoutS?: number,
  rolePrefix?: string,
): DatabaseModuleOptions {
  return {
    url,
    timeoutS,
    migrationTimeoutS,
    entities: [VolumeEntity],
    migrations: [
      ...pricingMigrations,
      CreateVolumes1764000001000,
      VolumesRuntimeGrants1764000010600,
      VolumesGroupRole1764000013100,
    ],
    roleGrants: [PRICING_ROLE_GRANTS, VOLUMES_ROLE_GRANTS],
    rolePrefix,
    applicationName: 'control-plane',
  };
}
