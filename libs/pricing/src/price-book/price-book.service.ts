import { Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  PriceBookRepository,
  type ApplyOptions,
  type ImportResult,
  type WithdrawalResult,
} from '../database/price-book.repository';
import { PriceBookRefusedError } from '../errors/pricing-error';
import { renderPriceList } from '../http/price-list-response';
import type { PriceHistory } from './format-history';
import { parsePriceBook, type PriceBook } from './price-book';
import type { Withdrawal } from './plan-withdrawal';

/**
 * Operators' changes of the price book, from code: the CLI, seeding and tests all go through
 * here. A book is the price book file's JSON (README, "Price book CLI"); a refused one throws
 * PRICE_BOOK_REFUSED naming every entry at fault, and nothing is written.
 */
@Injectable()
export class PriceBookService {
  constructor(private readonly repository: PriceBookRepository) {}

  /** The service on a DataSource of its own, outside Nest (the CLI, scripts, tests). */
  static on(dataSource: DataSource): PriceBookService {
    return new PriceBookService(new PriceBookRepository(dataSource));
  }

  /**
   * Checks and applies a price book given as parsed JSON, all of it or nothing; the result lists
   * every change. With `dryRun`, the book is checked and written as an import would, then
   * rolled back: the result is what the import would do now, and nothing is kept.
   */
  apply(json: unknown, options?: ApplyOptions): Promise<ImportResult> {
    return this.repository.apply(checkedBook(json), options);
  }

  /** Applies (or dry-runs) a price book already checked (parsePriceBook, readPriceBookFile). */
  applyBook(book: PriceBook, options?: ApplyOptions): Promise<ImportResult> {
    return this.repository.apply(book, options);
  }

  /** Applies a price book only when nothing was ever priced; `undefined` when prices exist. */
  async applyIfEmpty(json: unknown): Promise<ImportResult | undefined> {
    const book = checkedBook(json);
    return (await this.repository.isEmpty()) ? this.repository.apply(book) : undefined;
  }

  /** Withdraws a scheduled price or a scheduled end. */
  withdraw(withdrawal: Withdrawal): Promise<WithdrawalResult> {
    return this.repository.withdraw(withdrawal);
  }

  /** Every record of one key and scope (`organizationId` null: list prices), with the change log. */
  history(productKey: string, organizationId: string | null): Promise<PriceHistory> {
    return this.repository.history(productKey, organizationId);
  }

  /** The whole price book, history included, in the import format (stable bytes). */
  export(): Promise<string> {
    return this.repository.exportBook();
  }

  /** The body `GET /v1/pricing` serves at `instant`, read from the database now. */
  async priceListAt(instant: Date): Promise<Buffer> {
    const data = await this.repository.loadPricingData();
    return renderPriceList({ records: data.records, writes: data.listWrites }, instant).body;
  }
}

function checkedBook(json: unknown): PriceBook {
  const parsed = parsePriceBook(json);
  if ('errors' in parsed) throw new PriceBookRefusedError(parsed.errors);
  return parsed.book;
}
