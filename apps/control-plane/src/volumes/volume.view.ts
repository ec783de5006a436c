import type { VolumeEntity } from './volume.entity';

/** A volume as the API shows it. */
export interface VolumeView {
  readonly id: string;
  readonly name: string;
  readonly size_gib: number;
  readonly storage_class: string;
  readonly created_at: string;
}

export function toVolumeView(volume: VolumeEntity): VolumeView {
  return {
    id: volume.id,
    name: volume.name,
    size_gib: volume.sizeGib,
    storage_class: volume.storageClass,
    created_at: volume.createdAt.toISOString(),
  };
}
