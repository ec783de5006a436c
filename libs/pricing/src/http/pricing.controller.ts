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
import {
  ApiExcludeEndpoint,
  ApiHeader,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { Public } from '@app/auth';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RateLimitedError } from '../errors/pricing-error';
import { PricingState } from '../snapshot/pricing-state';
import { answerPriceListRequest, METHOD_NOT_ALLOWED, tooManyRequests } from './answer-price-list-request';
import {
  PLAIN_TEXT,
  PRICE_LIST_200_HEADERS,
  PRICE_LIST_HEADERS,
  PriceListDocumentSchema,
  retryHeaders,
  UNAVAILABLE_HEADERS,
} from './price-list.schema';
import { PriceListAnswerCounts } from './price-list-answer-counts';
import { PriceListRateLimitGuard } from './price-list-rate-limit';

/** The path of the public price list. */
export const PRICE_LIST_PATH = '/v1/pricing';

/** 429 as section 7 says: plain text with Retry-After, not the host app's JSON envelope. */
@Catch(RateLimitedError)
export class PriceListExceptionFilter implements ExceptionFilter<RateLimitedError> {
  constructor(private readonly counts: PriceListAnswerCounts) {}

  catch(error: RateLimitedError, host: ArgumentsHost): void {
    this.counts.send(host.switchToHttp().getResponse<ServerResponse>(), tooManyRequests(error.retryAfterS));
  }
}

/**
 * `GET /v1/pricing` (section 4): public whatever guard the host app installs, every request
 * counted towards the per-address limit, every answer written from bytes and headers rendered
 * once per change of the list. No parameters: a query string is ignored, and `/v1/pricing/` is
 * the same resource. Methods other than GET and HEAD get 405, OPTIONS included (the endpoint
 * supports no CORS preflight).
 *
 * Every request goes through Nest's pipeline like any other route: the host's global guards,
 * interceptors and filters see it; the rate limit is a guard; the answer is bytes prepared once
 * per change of the list (PricingSnapshot), written here.
 */
@Public()
@Controller(PRICE_LIST_PATH)
@UseGuards(PriceListRateLimitGuard)
@UseFilters(PriceListExceptionFilter)
@ApiTags('pricing')
export class PricingController {
  constructor(
    private readonly prices: PricingState,
    private readonly counts: PriceListAnswerCounts,
  ) {}

  /** GET, and HEAD (Express routes HEAD here): 200, 304 or 503. */
  @Get()
  @ApiOperation({
    summary: 'The current list price of every billable product',
    description:
      'Public: no credentials. No parameters: a query string is ignored. HEAD answers as GET without a body. ' +
      'Other methods, OPTIONS included, get 405 with `Allow: GET, HEAD` (no CORS preflight). ' +
      'Responses may be cached for 5 minutes; revalidate with `If-None-Match`.',
  })
  @ApiHeader({
    name: 'If-None-Match',
    required: false,
    description: 'ETags from earlier responses (or `*`): 304 when one matches the current list (weak comparison).',
  })
  @ApiHeader({
    name: 'If-Modified-Since',
    required: false,
    description: 'An HTTP date; only evaluated without If-None-Match: 304 when the list is certainly unchanged since.',
  })
  @ApiHeader({
    name: 'Accept-Encoding',
    required: false,
    description:
      'Codings the client takes, with q-values: `br` (preferred at equal weight) or `gzip`; otherwise the plain JSON. The ETag is the same for every coding.',
  })
  @ApiOkResponse({
    description: 'The current price list.',
    type: PriceListDocumentSchema,
    headers: PRICE_LIST_200_HEADERS,
  })
  @ApiNotModifiedResponse({ description: 'The client’s copy is current: no body.', headers: PRICE_LIST_HEADERS })
  @ApiTooManyRequestsResponse({
    description:
      'Too many requests from this client address (every request to the endpoint counts). Plain text; retry after `Retry-After`.',
    headers: retryHeaders('Seconds until the window of this address ends.'),
    content: PLAIN_TEXT,
  })
  @ApiServiceUnavailableResponse({
    description: 'The price list is temporarily unavailable. Plain text; retry after `Retry-After`.',
    headers: UNAVAILABLE_HEADERS,
    content: PLAIN_TEXT,
  })
  priceList(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    this.counts.send(res, answerPriceListRequest(req.method!, req.headers, this.prices.priceList()));
  }

  /** Described once, in the description of GET. */
  @All()
  @ApiExcludeEndpoint()
  otherMethods(@Res() res: ServerResponse): void {
    this.counts.send(res, METHOD_NOT_ALLOWED);
  }
}
