import {
  Body,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseUUIDPipe,
  Post,
  type ArgumentMetadata,
} from '@nestjs/common';
import { ApiError, ApiErrorCode } from '../errors/api-error';
import { CreateVolumeDto } from './create-volume.dto';
import { toVolumeView, type VolumeView } from './volume.view';
import { VolumesService } from './volumes.service';

/** A volume id is a UUID; any other names no volume: 404, as for an unknown one. */
class VolumeIdPipe extends ParseUUIDPipe {
  override async transform(value: string, metadata: ArgumentMetadata): Promise<string> {
    try {
      await super.transform(value, metadata);
      return value;
    } catch {
      throw new ApiError(ApiErrorCode.NotFound, `no volume ${value}`, { id: value });
    }
  }
}

@Controller('v1/volumes')
export class VolumesController {
  constructor(private readonly volumes: VolumesService) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  async create(@Body() request: CreateVolumeDto): Promise<VolumeView> {
    return toVolumeView(await this.volumes.create(request));
  }

  @Get(':id')
  async get(@Param('id', VolumeIdPipe) id: string): Promise<VolumeView> {
    return toVolumeView(await this.volumes.get(id));
  }
}
