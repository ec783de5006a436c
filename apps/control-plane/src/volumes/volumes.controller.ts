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
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrorCode } from '../errors/api-error';
import { ApiErrorResponses } from '../errors/error-envelope';
import { BEARER_SCHEME } from '../openapi';
import { CreateVolumeDto } from './create-volume.dto';
import { toVolumeView, VolumeView } from './volume.view';
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

const UNAUTHENTICATED = 'UNAUTHENTICATED: no bearer token, or one that is not configured.';
const UNAVAILABLE = 'SERVICE_UNAVAILABLE (the database) or PRICING_UNAVAILABLE: retry after `Retry-After` (30 s).';

@Controller('v1/volumes')
@ApiTags('volumes')
@ApiBearerAuth(BEARER_SCHEME)
export class VolumesController {
  constructor(private readonly volumes: VolumesService) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Order a volume', description: 'Nothing is stored when the request is refused.' })
  @ApiCreatedResponse({ description: 'The stored volume.', type: VolumeView })
  @ApiErrorResponses({
    400: 'INVALID_REQUEST: the body is not JSON, has unknown fields, or a field breaks its rule; `details.fields` names them.',
    401: UNAUTHENTICATED,
    409: 'PRODUCT_UNAVAILABLE: the storage class is priced but not on sale, or has no current price; `details.product_key` names it.',
    411: 'LENGTH_REQUIRED: the body came in chunks with no Content-Length.',
    413: 'PAYLOAD_TOO_LARGE: the body is over 100 kB.',
    503: UNAVAILABLE,
  })
  async create(@Body() request: CreateVolumeDto): Promise<VolumeView> {
    return toVolumeView(await this.volumes.create(request));
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a volume back' })
  @ApiParam({ name: 'id', format: 'uuid', description: 'The id the volume was created with.' })
  @ApiOkResponse({ description: 'The volume.', type: VolumeView })
  @ApiErrorResponses({ 401: UNAUTHENTICATED, 404: 'NOT_FOUND: no volume has that id.', 503: UNAVAILABLE })
  async get(@Param('id', VolumeIdPipe) id: string): Promise<VolumeView> {
    return toVolumeView(await this.volumes.get(id));
  }
}
