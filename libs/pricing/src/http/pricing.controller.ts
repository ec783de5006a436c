import {
  All,
  Catch,
  Controller,
  Get,
  Req,
  Res,
  UseFilters,
  UseGuards,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { Public } from '@app/auth';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RateLimitedError } from '../errors/pricing-error';
import { PriceBookCache } from '../snapshot/price-book-cache';
import { answerPriceListRequest, METHOD_NOT_ALLOWED, tooManyRequests } from './answer-price-list-request';
import { PriceListRateLimitGuard } from './price-list-rate-limit';
import type { PlainResponse } from './price-list-response';

/** The path of the public price list. */
export const PRICE_LIST_PATH = '/v1/pricing';

/** 429 as section 7 says: plain text with Retry-After, not the host app's JSON envelope. */
@Catch(RateLimitedError)
export class PriceListExceptionFilter implements ExceptionFilter<RateLimitedError> {
  catch(error: RateLimitedError, host: ArgumentsHost): void {
    write(host.switchToHttp().getResponse<ServerResponse>(), tooManyRequests(error.retryAfterS));
  }
}

/**
 * `GET /v1/pricing` (section 4): public whatever guard the host app installs, every request
 * counted towards the per-address limit, every answer written from bytes and headers rendered
 * once per change of the list. No parameters: a query string is ignored, and `/v1/pricing/` is
 * the same resource. Methods other than GET and HEAD get 405, OPTIONS included (the endpoint
 * supports no CORS preflight).
 */
@Public()
@Controller(PRICE_LIST_PATH)
@UseGuards(PriceListRateLimitGuard)
@UseFilters(PriceListExceptionFilter)
export class PricingController {
  constructor(private readonly cache: PriceBookCache) {}

  /** GET, and HEAD (Express routes HEAD here): 200, 304 or 503. */
  @Get()
  priceList(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    write(res, answerPriceListRequest(req.method!, req.headers, this.cache.current()?.priceList));
  }

  @All()
  otherMethods(@Res() res: ServerResponse): void {
    write(res, METHOD_NOT_ALLOWED);
  }
}

function write(res: ServerResponse, answer: PlainResponse): void {
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}
