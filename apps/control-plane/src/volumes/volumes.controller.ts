import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { CreateVolumeDto } from './create-volume.dto';
import { toVolumeView, type VolumeView } from './volume.view';
import { VolumesService } from './volumes.service';

@Controller('v1/volumes')
export class VolumesController {
  constructor(private readonly volumes: VolumesService) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  async create(@Body() request: CreateVolumeDto): Promise<VolumeView> {
    return toVolumeView(await this.volumes.create(request));
  }

  @Get(':id')
  async get(@Param('id') id: string): Promise<VolumeView> {
    return toVolumeView(await this.volumes.get(id));
  }
}
