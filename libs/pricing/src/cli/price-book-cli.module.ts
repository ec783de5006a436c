import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DatabaseModule } from '@app/database';
import type { DataSource } from 'typeorm';
import { PriceBookReads } from '../database/price-book-reads';
import { PriceBookWrites } from '../database/price-book-writes';
import { PriceSnapshotReads } from '../database/price-snapshot-reads';
import { PriceBookHost, StandaloneHost } from '../services/price-book-host';
import { PriceBookService } from '../services/price-book.service';

/**
 * PriceBookService and the price book's SQL on a DataSource its caller opened and migrated, and
 * closes: what the price book CLI's commands run on (and scripts, and tests that write prices).
 * Nothing of the HTTP side (no controller, Redis, Swagger or metrics) and no prices in memory, so
 * that a command starts fast.
 */
@Module({})
export class PriceBookCliModule {
  static on(dataSource: DataSource): DynamicModule {
    return {
      module: PriceBookCliModule,
      imports: [DatabaseModule.forDataSource(dataSource)],
      providers: [
        PriceSnapshotReads,
        PriceBookWrites,
        PriceBookReads,
        { provide: PriceBookHost, useClass: StandaloneHost },
        PriceBookService,
      ],
      exports: [PriceBookService, PriceBookReads],
    };
  }
}

/**
 * Runs `work` with the PriceBookService of an application context of PriceBookCliModule on
 * `dataSource`, and closes the context after (the DataSource stays open: it is the caller's).
 */
export function withPriceBook<T>(
  dataSource: DataSource,
  work: (priceBook: PriceBookService) => Promise<T>,
): Promise<T> {
  return withPriceBookContext(dataSource, (context) => work(context.get(PriceBookService)));
}

/** As withPriceBook, with the application context itself: for a command that reads with PriceBookReads (`focus`). */
export async function withPriceBookContext<T>(
  dataSource: DataSource,
  work: (context: INestApplicationContext) => Promise<T>,
): Promise<T> {
  // A failed start throws here rather than aborting the process. No `logger`: Nest's is global,
  // and the caller's (the CLI's, on stderr) stays in place.
  const context = await NestFactory.createApplicationContext(PriceBookCliModule.on(dataSource), {
    abortOnError: false,
  });
  try {
    return await work(context);
  } finally {
    await context.close();
  }
}
