import { Injectable } from '@nestjs/common';
import { Clock, PricingService } from '@app/pricing';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiError, ApiErrorCode } from '../errors/api-error';
import type { CreateVolumeDto } from './create-volume.dto';
import { VolumeEntity } from './volume.entity';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

@Injectable()
export class VolumesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly pricing: PricingService,
    private readonly clock: Clock,
  ) {}

  /** Creates a volume; a storage class that is not on sale is refused before anything is stored. */
  async create(request: CreateVolumeDto): Promise<VolumeEntity> {
    this.pricing.assertOrderable(`storage.${request.storage_class}`);
    const volume = Object.assign(new VolumeEntity(), {
      id: randomUUID(),
      name: request.name,
      sizeGib: request.size_gib,
      storageClass: request.storage_class,
      createdAt: this.clock.now(),
    });
    await this.dataSource.getRepository(VolumeEntity).insert(volume);
    return volume;
  }

  async get(id: string): Promise<VolumeEntity> {
    const volume = UUID.test(id) ? await this.dataSource.getRepository(VolumeEntity).findOneBy({ id }) : null;
    if (!volume) throw new ApiError(ApiErrorCode.NotFound, `no volume ${id}`, { id });
    return volume;
  }
}
