import { Controller, Get, HttpCode, HttpStatus, Res } from '@nestjs/common';
import { Public } from '@app/auth';
import { DatabaseConnection } from '@app/database';
import { PricingService } from '@app/pricing';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { ReadinessView } from './readiness.view';

/** What readiness says to run while the schema is behind the code (docs/operations.md, "Readers and writers"). */
export const MIGRATE =
  "DATABASE_MIGRATION_URL=<the schema owner's URL> npm run migrate (a deploy step: this instance's role may not migrate)";

@Public()
@Controller('health')
@ApiTags('health')
export class HealthController {
  constructor(
    private readonly pricing: PricingService,
    private readonly database: DatabaseConnection,
    private readonly shutdown: ShutdownState,
  ) {}

  /** 200 while the process runs. */
  @Get('live')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ description: 'The process runs.' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * 200 while the price list can be served (prices confirmed within PRICING_MAX_STALENESS_S),
   * else 503; 503 too from a stop signal on, while the requests in flight finish, and while the
   * schema lacks migrations this role may not run (the body names them, and what to run). Losing the
   * database alone does not make an instance unready: that would take every instance out of
   * rotation at once.
   */
  @Get('ready')
  @ApiOkResponse({ description: 'The price list can be served.', type: ReadinessView })
  @ApiServiceUnavailableResponse({ description: 'The price list cannot be served.', type: ReadinessView })
  ready(@Res({ passthrough: true }) res: Response): Record<string, unknown> {
    const pricing = this.pricing.health();
    const stopping = this.shutdown.stopping;
    // A schema behind the code that this role may not migrate (DatabaseConnection: `behind`).
    const pending = this.database.pendingMigrations;
    const ready = pricing.servable && !stopping && pending.length === 0;
    res.status(ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    res.setHeader('Cache-Control', 'no-store');
    return {
      status: stopping ? 'stopping' : ready ? 'ready' : 'unavailable',
      price_list: {
        servable: pricing.servable,
        version: pricing.version,
        confirmed_seconds_ago: pricing.confirmedAgoS,
      },
      database: {
        reachable: pricing.databaseReachable,
        migrated: this.database.isReady,
        ...(pending.length > 0 ? { pending_migrations: pending, migrate: MIGRATE } : {}),
      },
    };
  }
}
