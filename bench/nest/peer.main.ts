// The conventional peer of the benchmark (docs/benchmarks.md): GET /v1/pricing as a typical NestJS
// team writes it. The handler returns the price list document, an object, so Nest serializes it
// on every request (res.json); the ETag is a weak tag of the serialized body, hashed on every
// request; the rate limit is @nestjs/throttler with its default in-memory storage as a global
// guard; Express's body parsers are on, as NestFactory's default. The same content and headers
// as the app (Cache-Control, CORS, Last-Modified); the throttler adds its X-RateLimit-* headers.
// usage: node dist/bench/nest/peer.main.js <port> <document.json>   (prints `ready`)
import 'reflect-metadata';
import { Controller, Get, Headers, Inject, Logger, Module, Res } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import type { PriceListDocument } from '@app/pricing';
import type { Response } from 'express';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';

const PRICE_LIST_DOCUMENT = Symbol('PRICE_LIST_DOCUMENT');

@Controller('v1/pricing')
class PriceListController {
  constructor(@Inject(PRICE_LIST_DOCUMENT) private readonly document: PriceListDocument) {}

  @Get()
  getPriceList(
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): PriceListDocument | undefined {
    const etag = `W/"${createHash('sha256').update(JSON.stringify(this.document)).digest('base64url').slice(0, 32)}"`;
    res.set({
      ETag: etag,
      'Cache-Control': 'public, max-age=300',
      'Access-Control-Allow-Origin': '*',
      ...(this.document.last_changed && { 'Last-Modified': new Date(this.document.last_changed).toUTCString() }),
    });
    if (ifNoneMatch === etag) {
      res.status(304);
      return undefined;
    }
    return this.document;
  }
}

function peerModule(document: PriceListDocument, rateLimit: number, rateWindowS: number) {
  @Module({
    imports: [ThrottlerModule.forRoot([{ ttl: rateWindowS * 1000, limit: rateLimit }])],
    controllers: [PriceListController],
    providers: [
      { provide: PRICE_LIST_DOCUMENT, useValue: document },
      { provide: APP_GUARD, useClass: ThrottlerGuard },
    ],
  })
  class PeerModule {}
  return PeerModule;
}

async function main(): Promise<void> {
  const [port, documentFile] = process.argv.slice(2);
  const document = JSON.parse(readFileSync(documentFile, 'utf8')) as PriceListDocument;
  const rateLimit = Number(process.env.PRICING_RATE_LIMIT ?? 120);
  const rateWindowS = Number(process.env.PRICING_RATE_WINDOW_S ?? 60);
  Logger.overrideLogger(['warn', 'error', 'fatal']);
  const app = await NestFactory.create(peerModule(document, rateLimit, rateWindowS));
  await app.listen(Number(port), '127.0.0.1');
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    const server = app.getHttpServer() as Server;
    server.close(() => void app.close().then(() => process.exit(0)));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
