import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Clock } from '@app/clock';
import { databaseCall } from '@app/database';
import { PricingService } from '@app/pricing';
import { randomUUID } from 'node:crypto';
import { Repository } from 'typeorm';
import { ApiError, ApiErrorCode } from '../errors/api-error';
import type { CreateVolumeDto } from './create-volume.dto';
import { VolumeEntity } from './volume.entity';

@Injectable()
export class VolumesService {
  constructor(
    @InjectRepository(VolumeEntity) private readonly volumes: Repository<VolumeEntity>,
    private readonly pricing: PricingService,
    private readonly clock: Clock,
  ) {}

  /** Creates a volume; a storage class that is not on sale is refused before anything is stored. */
  async create(request: CreateVolumeDto): Promise<VolumeEntity> {
    this.pricing.assertOrderable(`storage.${request.storage_class}`);
    const volume = this.volumes.create({
      id: randomUUID(),
      name: request.name,
      sizeGib: request.size_gib,
      storageClass: request.storage_class,
      createdAt: this.clock.now(),
    });
    await databaseCall(() => this.volumes.insert(volume));
    return volume;
  }

  /** `id` is a UUID (checked by the controller's pipe). */
  async get(id: string): Promise<VolumeEntity> {
    const volume = await databaseCall(() => this.volumes.findOneBy({ id }));
    if (!volume) throw new ApiError(ApiErrorCode.NotFound, `no volume ${id}`, { id });
    return volume;
  }
}
