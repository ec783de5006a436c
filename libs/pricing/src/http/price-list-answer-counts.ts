import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { PlainResponse } from '../rendering/price-list-response';

/** The statuses `GET /v1/pricing` answers with: each counted from the start, at 0. */
export const PRICE_LIST_STATUSES: readonly number[] = [200, 304, 405, 429, 503];

/**
 * Answers of `GET /v1/pricing` by status, counted on the request path with one Map update;
 * PricingMetrics hands them to prom-client when scraped (its Counter hashes the label set on
 * every increment: a few hundred ns on the hot path).
 */
@Injectable()
export class PriceListAnswerCounts {
  private readonly counts = new Map<number, number>(PRICE_LIST_STATUSES.map((status) => [status, 0]));

  count(status: number): void {
    this.counts.set(status, (this.counts.get(status) ?? 0) + 1);
  }

  /** Counts `answer` and writes it, as it is. */
  send(res: ServerResponse, answer: PlainResponse): void {
    this.count(answer.status);
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }

  /** Each status and how many answers had it, in the order of PRICE_LIST_STATUSES. */
  byStatus(): ReadonlyMap<number, number> {
    return this.counts;
  }
}
