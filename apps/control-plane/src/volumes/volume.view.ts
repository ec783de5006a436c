import { STORAGE_CLASSES } from '@app/pricing';
import { ApiProperty } from '@nestjs/swagger';
import { MAX_VOLUME_SIZE_GIB, VOLUME_NAME } from './create-volume.dto';
import type { VolumeEntity } from './volume.entity';

/** A volume as the API shows it (a class, so that the OpenAPI document can describe it). */
export class VolumeView {
  @ApiProperty({ format: 'uuid' })
  readonly id!: string;

  @ApiProperty({ pattern: VOLUME_NAME.source, example: 'data-1' })
  readonly name!: string;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_VOLUME_SIZE_GIB, example: 100 })
  readonly size_gib!: number;

  @ApiProperty({ enum: STORAGE_CLASSES, example: 'gp1' })
  readonly storage_class!: string;

  @ApiProperty({ format: 'date-time', description: 'When the volume was created (RFC 3339, UTC).' })
  readonly created_at!: string;
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
