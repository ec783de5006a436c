import { Logger } from '@nestjs/common';
import type { Logger as TypeOrmLoggerInterface } from 'typeorm';

/**
 * TypeORM's messages through Nest's logger, so that they come out as the app's log lines rather
 * than as console text. Queries are not logged, failed ones neither: the code that ran a query
 * decides what its failure means and logs that (the price cache logs an outage once, not every
 * failed retry; an unexpected error is logged with its QueryFailedError, which names the query).
 */
export class TypeOrmLogger implements TypeOrmLoggerInterface {
  private readonly logger = new Logger('TypeORM');

  logQuery(): void {}

  logQueryError(): void {}

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`slow query (${time} ms): ${query}`);
  }

  logSchemaBuild(message: string): void {
    this.logger.debug(message);
  }

  logMigration(message: string): void {
    this.logger.debug(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
    else this.logger.debug(String(message));
  }
}
