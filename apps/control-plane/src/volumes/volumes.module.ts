import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BearerAuthMiddleware } from '@app/auth';
import { json } from 'express';
import { MAX_BODY_BYTES, refuseUnboundedBodies } from '../validation';
import { VolumeEntity } from './volume.entity';
import { VolumesController } from './volumes.controller';
import { VolumesService } from './volumes.service';

@Module({
  imports: [TypeOrmModule.forFeature([VolumeEntity])],
  controllers: [VolumesController],
  providers: [VolumesService],
})
export class VolumesModule implements NestModule {
  /**
   * The app parses bodies only on the routes that take one (main.ts: bodyParser false), and only
   * once the request is authenticated: a client without a token never has its body read, nor a
   * body of no declared length or one declared too large.
   */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(BearerAuthMiddleware, refuseUnboundedBodies, json({ limit: MAX_BODY_BYTES }))
      .forRoutes(VolumesController);
  }
}
