import { STORAGE_CLASSES, type StorageClass } from '@app/pricing';
import { IsIn, IsInt, IsString, Matches, Max, Min } from 'class-validator';

export const MAX_VOLUME_SIZE_GIB = 16_384;

export class CreateVolumeDto {
  @IsString()
  @Matches(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, {
    message: 'name must be 1 to 63 lower-case letters, digits or "-", starting and ending with a letter or digit',
  })
  readonly name!: string;

  @IsInt({ message: 'size_gib must be an integer' })
  @Min(1, { message: `size_gib must be from 1 to ${MAX_VOLUME_SIZE_GIB}` })
  @Max(MAX_VOLUME_SIZE_GIB, { message: `size_gib must be from 1 to ${MAX_VOLUME_SIZE_GIB}` })
  readonly size_gib!: number;

  @IsIn(STORAGE_CLASSES, { message: `storage_class must be one of ${STORAGE_CLASSES.join(', ')}` })
  readonly storage_class!: StorageClass;
}
