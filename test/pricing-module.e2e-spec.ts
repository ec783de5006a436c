import {
  Controller,
  Get,
  Injectable,
  Module,
  type CallHandler,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  type INestApplication,
  type MiddlewareConsumer,
  type NestInterceptor,
  type NestMiddleware,
  type NestModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, NestFactory, Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { isPublic } from '@app/auth';
import { appDatabaseOptions, freePort } from '@app/control-plane';
import { DatabaseConnection, DatabaseModule } from '@app/database';
import { PriceBookService, PricingModule, PricingService, PricingUnavailableError } from '@app/pricing';
import { listPrice } from '@app/pricing/testing';
import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { filter, firstValueFrom, tap, type Observable } from 'rxjs';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { useTestDatabase } from './support/database';
import { waitFor } from './support/http';
import { FROM_SOURCE } from './support/source';
import { TcpProxy } from './support/tcp-proxy';

// PricingModule as another team wires it into a host of its own (docs/using-pricing.md, "Wiring
// PricingModule"): forRoot in the root module and nothing else for pricing; feature modules import
// the class or nothing; an application context without HTTP uses PricingService alone.

const BOOK = {
  products: [{ product_key: 'storage.io1', on_sale: false }],
  prices: [
    listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2025-01-01T00:00:00Z'),
    listPrice('storage.io1', 'gib_hours', 730, '0.1250', '2025-01-01T00:00:00Z'),
  ],
};

/** A feature module of another team: it imports the class PricingModule, as Nest habits go. */
@Injectable()
class InstanceOrders {
  constructor(private readonly pricing: PricingService) {}

  canOrder(productKey: string): boolean {
    try {
      this.pricing.assertOrderable(productKey);
      return true;
    } catch {
      return false;
    }
  }
}

@Controller('orders')
class OrdersController {
  constructor(private readonly orders: InstanceOrders) {}

  @Get('gp1')
  gp1(): { orderable: boolean } {
    return { orderable: this.orders.canOrder('storage.gp1') };
  }
}

@Module({
  imports: [PricingModule],
  providers: [InstanceOrders],
  controllers: [OrdersController],
  exports: [InstanceOrders],
})
class OrdersModule {}

@Module({})
class HostModule {}

/** What the host's own global guard, interceptor and middleware saw: `METHOD path (status)`. */
const seen: { guard: string[]; interceptor: string[]; middleware: string[] } = {
  guard: [],
  interceptor: [],
  middleware: [],
};
// Express gives a mounted middleware the path below its mount point in `url`: `originalUrl` is the request's.
const line = (req: IncomingMessage & { originalUrl?: string }): string => `${req.method} ${req.originalUrl ?? req.url}`;

@Injectable()
class TracingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    seen.guard.push(line(context.switchToHttp().getRequest<IncomingMessage>()));
    return true;
  }
}

@Injectable()
class TracingInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<IncomingMessage>();
    return next.handle().pipe(tap({ complete: () => seen.interceptor.push(line(req)) }));
  }
}

@Injectable()
class TracingMiddleware implements NestMiddleware {
  use(req: IncomingMessage, _res: unknown, next: () => void): void {
    seen.middleware.push(line(req));
    next();
  }
}

/**
 * A host's own global guard, which refuses every request (403) but for routes marked @Public():
 * the one line docs/using-pricing.md asks of it, `isPublic(context, reflector)` from @app/auth.
 */
@Injectable()
class DenyByDefaultGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    return isPublic(context, this.reflector);
  }
}

/** A host with tracing of its own: a global guard, a global interceptor and a middleware on every route. */
@Module({})
class TracedHostModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(TracingMiddleware).forRoutes('*');
  }
}

/** A provider that needs prices at bootstrap: with the database not ready in 300 ms, the start fails. */
@Injectable()
class AwaitsPricesAtBootstrap implements OnApplicationBootstrap {
  constructor(private readonly pricing: PricingService) {}

  onApplicationBootstrap(): Promise<void> {
    return this.pricing.whenReady(300);
  }
}

/** The other team's root module: its database, pricing with its defaults, and its feature module. */
function hostModule(url: string): DynamicModule {
  return {
    module: HostModule,
    imports: [DatabaseModule.forRoot(appDatabaseOptions(url)), PricingModule.forRoot(), OrdersModule],
  };
}

/** Starts `root` as an HTTP app, waits for its prices, hands it to `use`, and closes it whatever happens. */
async function withHttpApp(
  root: DynamicModule,
  use: (app: INestApplication, server: Server) => Promise<void>,
): Promise<void> {
  const moduleRef = await Test.createTestingModule({ imports: [root] }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  await app.init();
  try {
    await app.get(PricingService).whenReady(10_000);
    await use(app, app.getHttpServer() as Server);
  } finally {
    await app.close();
  }
}

/**
 * The head of a host script on the database named by its first argument: a root module with
 * DatabaseModule and PricingModule, and `pricesAndListen(app)`, which waits until prices are
 * loaded and the LISTEN connection is open, then says so.
 */
const HOST_ON_DATABASE = `
  require('reflect-metadata');
  const { Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const { DataSource } = require('typeorm');
  const { DatabaseModule } = require('@app/database');
  const { PricingModule, PricingService } = require('@app/pricing');
  const { appDatabaseOptions } = require('${resolve(__dirname, '..')}/apps/control-plane/src/database/app-database.ts');
  class Root {}
  Module({ imports: [DatabaseModule.forRoot(appDatabaseOptions(process.argv[1])), PricingModule.forRoot()] })(Root);
  const listening = "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '% listener' AND query <> ''";
  async function pricesAndListen(app) {
    await app.get(PricingService).whenReady(10000);
    for (let tries = 0; (await app.get(DataSource).query(listening))[0].n === 0; tries++) {
      if (tries === 100) throw new Error('no LISTEN connection');
      await new Promise((wait) => setTimeout(wait, 50));
    }
    console.log('prices loaded, LISTEN open');
  }`;

/**
 * Runs `script` (CommonJS, from source) in a process of its own with `args`; resolves with its
 * exit code, or 'running' if it has not exited after `waitMs` (then it is killed), and its output.
 */
async function runHost(
  script: string,
  args: readonly string[],
  waitMs: number,
): Promise<{ exited: number | null | 'running'; output: string }> {
  const child = spawn(process.execPath, [...FROM_SOURCE, '-e', script, ...args], {
    cwd: resolve(__dirname, '..'),
    stdio: 'pipe',
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    const exited = await new Promise<number | null | 'running'>((done) => {
      const timer = setTimeout(() => done('running'), waitMs);
      child.once('exit', (code) => {
        clearTimeout(timer);
        done(code);
      });
    });
    return { exited, output: output.trim() };
  } finally {
    child.kill('SIGKILL');
  }
}

describe('PricingModule in a host of its own', () => {
  const db = useTestDatabase({ book: BOOK });

  it('serves GET /v1/pricing with no other set-up step, and its feature modules use PricingService', async () => {
    await withHttpApp(hostModule(db.url), async (app, server) => {
      const list = await request(server).get('/v1/pricing');
      expect(list.status).toBe(200);
      expect(list.headers['content-type']).toBe('application/json');
      expect(list.headers.etag).toMatch(/^W\/"/);
      const families = (list.body as { families: { family: string }[] }).families;
      expect(families.map((f) => f.family)).toEqual(['storage_volume']);
      expect((await request(server).post('/v1/pricing')).status).toBe(405);
      expect((await request(server).get('/orders/gp1')).body).toEqual({ orderable: true });
      expect(app.get(InstanceOrders).canOrder('storage.io1')).toBe(false);
    });
  });

  it("a host's global guard, interceptor and middleware see GET and HEAD /v1/pricing like every other route", async () => {
    const traced: DynamicModule = {
      module: TracedHostModule,
      imports: [DatabaseModule.forRoot(appDatabaseOptions(db.url)), PricingModule.forRoot(), OrdersModule],
      providers: [
        { provide: APP_GUARD, useClass: TracingGuard },
        { provide: APP_INTERCEPTOR, useClass: TracingInterceptor },
      ],
    };
    await withHttpApp(traced, async (_app, server) => {
      const got = await request(server).get('/v1/pricing');
      expect(got.status).toBe(200);
      expect((await request(server).get('/v1/pricing').set('if-none-match', got.headers.etag)).status).toBe(304);
      expect((await request(server).head('/v1/pricing')).status).toBe(200);
      expect((await request(server).get('/orders/gp1')).status).toBe(200);
      const expected = ['GET /v1/pricing', 'GET /v1/pricing', 'HEAD /v1/pricing', 'GET /orders/gp1'];
      expect(seen).toEqual({ guard: expected, interceptor: expected, middleware: expected });
    });
  });

  it("a host's own deny-by-default global guard serves the public list when it asks isPublic(), and refuses the rest", async () => {
    const guarded: DynamicModule = {
      module: HostModule,
      imports: [DatabaseModule.forRoot(appDatabaseOptions(db.url)), PricingModule.forRoot(), OrdersModule],
      providers: [{ provide: APP_GUARD, useClass: DenyByDefaultGuard }],
    };
    await withHttpApp(guarded, async (_app, server) => {
      const list = await request(server).get('/v1/pricing');
      expect(list.status).toBe(200);
      expect((list.body as { currency: string }).currency).toBe('EUR');
      expect((await request(server).get('/v1/pricing/changes')).status).toBe(200);
      expect((await request(server).get('/orders/gp1')).status).toBe(403);
    });
  });

  it('an application context without HTTP (a worker) uses PricingService alone', async () => {
    const context = await NestFactory.createApplicationContext(
      { module: HostModule, imports: [DatabaseModule.forRoot(appDatabaseOptions(db.url)), PricingModule.forRoot()] },
      { logger: ['error'] },
    );
    try {
      const pricing = context.get(PricingService);
      await pricing.whenReady(10_000);
      const lookup = pricing.priceAt('storage.gp1', { at: new Date('2026-01-01T00:00:00Z') });
      expect(lookup).toMatchObject({ found: true, price: { amount: '0.0480', unitCount: 730 } });
      expect(pricing.quote('storage.gp1', '730')).toMatchObject({ found: true, cost: '0.048' });
    } finally {
      await context.close();
    }
  });

  it('PriceBookService.apply() right after start waits for the database, and PricingService answers with its prices when it resolves', async () => {
    const empty = await db.create();
    const context = await NestFactory.createApplicationContext(
      { module: HostModule, imports: [DatabaseModule.forRoot(appDatabaseOptions(empty.url)), PricingModule.forRoot()] },
      { logger: ['error'] },
    );
    try {
      const priceBook = context.get(PriceBookService);
      const pricing = context.get(PricingService);
      const at = { at: new Date('2026-01-01T00:00:00Z') };
      // No whenReady(), no refresh(): the database is still connecting when apply() is called.
      await priceBook.apply({ prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2025-01-01T00:00:00Z')] });
      expect(pricing.priceAt('storage.gp1', at)).toMatchObject({ found: true, price: { amount: '0.0480' } });
      await priceBook.apply({ prices: [listPrice('compute.g2.4', 'seconds', 3600, '0.0610', '2025-01-01T00:00:00Z')] });
      expect(pricing.quote('compute.g2.4', '5400', at)).toMatchObject({ found: true, cost: '0.0915' });
    } finally {
      await context.close();
      await empty.close();
    }
  });

  it('an application context whose start failed, and which nothing can close, never keeps the process alive', async () => {
    const nowhere = `postgres://nobody:nothing@127.0.0.1:${await freePort()}/nothing`;
    const root = resolve(__dirname, '..');
    // A job that needs prices at start, against a database that is not there: its start fails,
    // and createApplicationContext gives back no context to close (docs/using-pricing.md, "A job
    // or a worker"); the database retries go on, unref'd, and the process exits by itself.
    const script = `
      require('reflect-metadata');
      const { Injectable, Module } = require('@nestjs/common');
      const { NestFactory } = require('@nestjs/core');
      const { DatabaseModule } = require('@app/database');
      const { PricingModule, PricingService } = require('@app/pricing');
      const { appDatabaseOptions } = require('${root}/apps/control-plane/src/database/app-database.ts');
      class Job {
        constructor(pricing) { this.pricing = pricing; }
        onApplicationBootstrap() { return this.pricing.whenReady(300); }
      }
      Injectable()(Job);
      Reflect.defineMetadata('design:paramtypes', [PricingService], Job);
      class Root {}
      Module({ imports: [DatabaseModule.forRoot(appDatabaseOptions(process.argv[1])), PricingModule.forRoot()], providers: [Job] })(Root);
      NestFactory.createApplicationContext(Root, { logger: false, abortOnError: false }).then(
        () => process.exit(3),
        (error) => console.log('start failed: ' + error.code),
      );`;
    expect(await runHost(script, [nowhere], 8_000)).toEqual({
      exited: 0,
      output: 'start failed: PRICING_UNAVAILABLE',
    });
  }, 15_000);

  it('a host whose listen() fails and which never closes its app still exits: neither the pool nor the LISTEN connection holds it', async () => {
    const taken = createServer();
    await new Promise<void>((listening) => taken.listen(0, '127.0.0.1', listening));
    const port = (taken.address() as AddressInfo).port;
    // Another team's main.ts: the database is up, prices are loaded and the LISTEN connection is
    // open when listen() fails on a port already taken; it logs, sets the exit code, and forgets
    // app.close() (docs/using-pricing.md, "A web app": close it).
    const script = `
      ${HOST_ON_DATABASE}
      (async () => {
        const app = await NestFactory.create(Root, { logger: false });
        await app.init();
        await pricesAndListen(app);
        await app.listen(Number(process.argv[2]), '127.0.0.1');
      })().catch((error) => {
        console.log('start failed: ' + (error.code ?? error.message));
        process.exitCode = 1;
      });`;
    try {
      expect(await runHost(script, [db.url, String(port)], 15_000)).toEqual({
        exited: 1,
        output: 'prices loaded, LISTEN open\nstart failed: EADDRINUSE',
      });
    } finally {
      taken.close();
    }
  }, 30_000);

  it("a host that closes its app with nothing else to do sees close() finish: the pool and the LISTEN connection end, unref'd or not", async () => {
    // A script's last step is \`await app.close()\`: the pool's idle connections and the LISTEN
    // connection hold no reference on the event loop (above), but their goodbyes must still be
    // waited for, or the loop empties and close() never resolves.
    const script = `
      ${HOST_ON_DATABASE}
      (async () => {
        const app = await NestFactory.createApplicationContext(Root, { logger: false });
        await pricesAndListen(app);
        await app.close();
        console.log('closed');
      })().catch((error) => {
        console.log('failed: ' + (error.code ?? error.message));
        process.exitCode = 1;
      });`;
    expect(await runHost(script, [db.url], 15_000)).toEqual({
      exited: 0,
      output: 'prices loaded, LISTEN open\nclosed',
    });
  }, 30_000);

  it('close() after a failed start leaves nothing open, even a connection still in flight', async () => {
    // The database answers slowly: its first connection is held, unread, by a proxy. A provider
    // awaiting prices at bootstrap fails the init; Nest runs the shutdown hooks after a failed
    // init, and the connection is let through once close() has begun.
    const target = new URL(db.url);
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    proxy.hold();
    const moduleRef = await Test.createTestingModule({
      imports: [DatabaseModule.forRoot(appDatabaseOptions(proxy.urlOf(db.url))), PricingModule.forRoot()],
      providers: [AwaitsPricesAtBootstrap],
    }).compile();
    try {
      await expect(moduleRef.init()).rejects.toBeInstanceOf(PricingUnavailableError);
      const connection = moduleRef.get(DatabaseConnection);
      const stopped = firstValueFrom(connection.state$.pipe(filter((state) => state === 'stopped')));
      const closing = moduleRef.close();
      await stopped;
      proxy.release();
      await closing;
      expect(moduleRef.get(DataSource).isInitialized).toBe(false);
      await waitFor(
        'no socket to the database',
        () => proxy.socketsHeldByThisProcess(),
        (n) => n === 0,
        2_000,
      );
    } finally {
      await proxy.close();
    }
  });

  it('whenReady() rejects with PRICING_UNAVAILABLE when no prices load in time', async () => {
    const nowhere = `postgres://nobody:nothing@127.0.0.1:${await freePort()}/nothing`;
    const context = await NestFactory.createApplicationContext(
      { module: HostModule, imports: [DatabaseModule.forRoot(appDatabaseOptions(nowhere)), PricingModule.forRoot()] },
      { logger: false },
    );
    try {
      const pricing = context.get(PricingService);
      await expect(pricing.whenReady(300)).rejects.toBeInstanceOf(PricingUnavailableError);
      expect(() => pricing.priceAt('storage.gp1')).toThrow(PricingUnavailableError);
    } finally {
      await context.close();
    }
  });
});
