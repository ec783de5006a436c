import { ApiProperty } from '@nestjs/swagger';

// The body of GET /health/ready, for the OpenAPI document.

class PriceListReadiness {
  @ApiProperty({ description: 'Whether GET /v1/pricing can answer 200 now.' })
  readonly servable!: boolean;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The price book version held; null before the first load.',
  })
  readonly version!: string | null;

  @ApiProperty({
    type: 'number',
    nullable: true,
    description: 'Seconds since the database last confirmed the prices held; null before the first load.',
  })
  readonly confirmed_seconds_ago!: number | null;
}

class DatabaseReadiness {
  @ApiProperty({ description: 'Whether the last read of the database succeeded.' })
  readonly reachable!: boolean;

  @ApiProperty({ description: 'Whether the database was connected and migrated since the start.' })
  readonly migrated!: boolean;

  @ApiProperty({
    type: [String],
    required: false,
    description: 'Only while the schema lacks migrations that this instance’s role may not run: their names, in order.',
  })
  readonly pending_migrations?: string[];

  @ApiProperty({
    required: false,
    description: 'Only with `pending_migrations`: the deploy step that runs them.',
  })
  readonly migrate?: string;
}

export class ReadinessView {
  @ApiProperty({ description: '`ready` with 200, else why not.', example: 'ready' })
  readonly status!: string;

  @ApiProperty({ type: PriceListReadiness })
  readonly price_list!: PriceListReadiness;

  @ApiProperty({
    type: DatabaseReadiness,
    description: 'Reported, not required: losing the database alone does not make an instance unready.',
  })
  readonly database!: DatabaseReadiness;
}
