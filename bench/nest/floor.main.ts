// The Nest floor of the benchmark: the least a NestJS controller costs for GET /v1/pricing. One
// @Controller, one @Get writing the very bytes and headers the app served through @Req()/@Res()
// (304 with its 304 headers when If-None-Match equals the ETag), as bench/baseline-express.mjs
// does, on the same Express adapter; no body parsers, no guard, no filter, no interceptor, no
// logs or metrics. What PricingController costs beyond it is ours; what this costs beyond bare
// Express is Nest's request pipeline, which any controller pays.
// usage: node dist/bench/nest/floor.main.js <port> <response.json> <body file>   (prints `ready`)
import 'reflect-metadata';
import { Controller, Get, Logger, Module, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

export interface CapturedResponse {
  readonly etag: string;
  readonly headers200: OutgoingHttpHeaders;
  readonly headers304: OutgoingHttpHeaders;
}

export function floorModule({ etag, headers200, headers304 }: CapturedResponse, body: Buffer) {
  @Controller('v1/pricing')
  class FloorController {
    @Get()
    priceList(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
      if (req.headers['if-none-match'] === etag) res.writeHead(304, headers304).end();
      else res.writeHead(200, headers200).end(body);
    }
  }

  @Module({ controllers: [FloorController] })
  class FloorModule {}
  return FloorModule;
}

async function main(): Promise<void> {
  const [port, responseFile, bodyFile] = process.argv.slice(2);
  const response = JSON.parse(readFileSync(responseFile, 'utf8')) as CapturedResponse;
  Logger.overrideLogger(['warn', 'error', 'fatal']);
  const app = await NestFactory.create<NestExpressApplication>(floorModule(response, readFileSync(bodyFile)), {
    bodyParser: false,
  });
  app.disable('x-powered-by');
  app.disable('etag');
  await app.listen(Number(port), '127.0.0.1');
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    const server = app.getHttpServer();
    server.close(() => void app.close().then(() => process.exit(0)));
  });
}

// Imported by an in-process measurement for its module; started when run as a script.
if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
