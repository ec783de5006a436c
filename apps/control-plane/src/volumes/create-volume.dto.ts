import { STORAGE_CLASSES, type StorageClass } from '@app/pricing';
import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Matches, Max, Min } from 'class-validator';

export const MAX_VOLUME_SIZE_GIB = 16_384;
/** DNS-label-like: 1 to 63 lower-case letters, digits or "-", starting and ending with a letter or digit. */
export const VOLUME_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export class CreateVolumeDto {
  @ApiProperty({ pattern: VOLUME_NAME.source, minLength: 1, maxLength: 63, example: 'data-1' })
  @IsString()
  @Matches(VOLUME_NAME, {
    message: 'name must be 1 to 63 lower-case letters, digits or "-", starting and ending with a letter or digit',
  })
  readonly name!: string;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_VOLUME_SIZE_GIB, example: 100 })
  @IsInt({ message: 'size_gib must be an integer' })
  @Min(1, { message: `size_gib must be from 1 to ${MAX_VOLUME_SIZE_GIB}` })
  @Max(MAX_VOLUME_SIZE_GIB, { message: `size_gib must be from 1 to ${MAX_VOLUME_SIZE_GIB}` })
  readonly size_gib!: number;

  @ApiProperty({
    enum: STORAGE_CLASSES,
    description: '`io1` and `st1` are priced but not on sale: 409 PRODUCT_UNAVAILABLE.',
    example: 'gp1',
  })
  @IsIn(STORAGE_CLASSES, { message: `storage_class must be one of ${STORAGE_CLASSES.join(', ')}` })
  readonly storage_class!: StorageClass;
}
