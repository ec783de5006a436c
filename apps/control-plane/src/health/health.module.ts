import { Module } from '@nestjs/common';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { HealthController } from './health.controller';

/**
 * The probes, and the state a stop signal turns (main.ts). A module of its own so that the app
 * imports it after PricingModule: Express walks the routes in the order Nest registers them, and
 * a root module's own controllers come before every import's.
 */
@Module({
  controllers: [HealthController],
  providers: [ShutdownState],
  exports: [ShutdownState],
})
export class HealthModule {}
