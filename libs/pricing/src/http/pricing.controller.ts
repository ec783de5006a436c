import {
  All,
  applyDecorators,
  Catch,
  Controller,
  Get,
  Param,
  Req,
  Res,
  UseFilters,
  UseGuards,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiExcludeEndpoint,
  ApiHeader,
  ApiNotFoundResponse,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPreconditionFailedResponse,
  ApiQuery,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  type ApiResponseOptions,
} from '@nestjs/swagger';
import { Public } from '@app/auth';
import { Clock } from '@app/clock';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseInstant } from '../core/instant';
import { RateLimitedError } from '../errors/pricing-error';
import { FEED_START, IMMUTABLE, MAX_CHANGES_PER_PAGE } from '../rendering/changes-page';
import { CheckpointAnswers } from '../snapshot/checkpoint-answers';
import { PastAnswers } from '../snapshot/past-answers';
import { PricingState } from '../snapshot/pricing-state';
import {
  answerPriceListRequest,
  METHOD_NOT_ALLOWED,
  PRICE_LIST_UNAVAILABLE,
  refusal,
  tooManyRequests,
  withCacheControl,
} from './answer-price-list-request';
import { parseFeedQuery, positionBefore } from './feed-query';
import {
  CHANGES_200_HEADERS,
  CHANGES_304_HEADERS,
  CHECKPOINT_HEADERS,
  PAST_LIST_200_HEADERS,
  PAST_LIST_304_HEADERS,
  PLAIN_TEXT,
  PriceListChangesSchema,
  REFUSAL_HEADERS,
  PRICE_LIST_200_HEADERS,
  PRICE_LIST_HEADERS,
  PriceListDocumentSchema,
  retryHeaders,
  UNAVAILABLE_HEADERS,
} from './price-list.schema';
import { PriceListAnswerCounts } from './price-list-answer-counts';
import { PriceListRateLimitGuard } from './price-list-rate-limit';

/**
 * The conditional request headers of the three resources and their 412 (RFC 9110 13.2.2;
 * docs/decisions.md, "ETag and conditional requests"). The dates only where the resource has a
 * Last-Modified: the change feed has none, so it ignores them.
 */
function ConditionalRequests(withDates: boolean): MethodDecorator {
  const dates = [
    ApiHeader({
      name: 'If-Unmodified-Since',
      required: false,
      description:
        'An HTTP date; only evaluated without If-Match: 412 when the resource changed after it (its Last-Modified is later).',
    }),
    ApiHeader({
      name: 'If-Modified-Since',
      required: false,
      description:
        'An HTTP date; only evaluated without If-None-Match: 304 when the resource is certainly unchanged since.',
    }),
  ];
  return applyDecorators(
    ApiHeader({
      name: 'If-Match',
      required: false,
      description:
        '`*`, or ETags: strong comparison, and the ETag is weak, so only `*` passes; anything else gets 412. ' +
        'Evaluated before If-None-Match.',
    }),
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'ETags from earlier responses (or `*`): 304 when one matches (weak comparison).',
    }),
    ...(withDates ? dates : []),
    ApiHeader({
      name: 'Accept-Encoding',
      required: false,
      description:
        'Codings the client takes, with q-values: `br` (preferred at equal weight) or `gzip`; otherwise the plain JSON. The ETag is the same for every coding.',
    }),
    ApiPreconditionFailedResponse({
      description: 'If-Match or If-Unmodified-Since is false. Plain text.',
      headers: REFUSAL_HEADERS,
      content: PLAIN_TEXT,
    }),
  );
}

/** What the list at an instant and the change feed answer beside their 200 and 400, as GET /v1/pricing does. */
function PastResponses(notModifiedHeaders: NonNullable<ApiResponseOptions['headers']>): MethodDecorator {
  return applyDecorators(
    ApiNotModifiedResponse({ description: 'The client’s copy is current: no body.', headers: notModifiedHeaders }),
    ApiTooManyRequestsResponse({
      description: 'As `GET /v1/pricing`.',
      headers: retryHeaders('Seconds until the window of this address ends.'),
      content: PLAIN_TEXT,
    }),
    ApiServiceUnavailableResponse({
      description: 'As `GET /v1/pricing`.',
      headers: UNAVAILABLE_HEADERS,
      content: PLAIN_TEXT,
    }),
  );
}

/** The path of the public price list. */
export const PRICE_LIST_PATH = '/v1/pricing';
/**
 * The clock-skew bound: the list at an instant older than this, and settled (every write that could
 * change it was seen: PriceBookLoader.settledBefore), can no longer change, on any instance whose
 * clock is within it of the database's (docs/decisions.md, "One clock"): cached for good.
 */
export const CLOCK_SKEW_MS = 60_000;

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
    private readonly past: PastAnswers,
    private readonly checkpoints: CheckpointAnswers,
    private readonly counts: PriceListAnswerCounts,
    private readonly clock: Clock,
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
  @ConditionalRequests(true)
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

  /** The list as it was served at a past instant (docs/decisions.md, "Prices as they were"). */
  @Get('at/:instant')
  @ApiOperation({
    summary: 'The public price list as it was served at an instant',
    description:
      'The document `GET /v1/pricing` served at that instant, byte for byte and with the same ETag: the prices in ' +
      'effect then, as recorded by then (a price recorded later is not in it; an end set later is not shown), and ' +
      '`last_changed` as of then. Organizations’ prices never appear, nor a price before it takes effect. Public; ' +
      'the same per-address limit as `GET /v1/pricing`, counted together. HEAD answers as GET without a body.',
  })
  @ApiParam({
    name: 'instant',
    description:
      'An RFC 3339 date-time with an offset (`2026-03-01T00:00:00Z`, `2026-03-01T01:00:00.250+01:00`); ' +
      'fractions beyond milliseconds are cut. Not later than now.',
  })
  @ConditionalRequests(true)
  @ApiOkResponse({
    description: 'The list as served then.',
    type: PriceListDocumentSchema,
    headers: PAST_LIST_200_HEADERS,
  })
  @ApiBadRequestResponse({ description: 'Not an RFC 3339 date-time.', headers: REFUSAL_HEADERS, content: PLAIN_TEXT })
  @ApiNotFoundResponse({ description: 'An instant later than now.', headers: REFUSAL_HEADERS, content: PLAIN_TEXT })
  @PastResponses(PAST_LIST_304_HEADERS)
  async pastList(
    @Param('instant') text: string,
    @Req() req: IncomingMessage,
    @Res() res: ServerResponse,
  ): Promise<void> {
    const instant = parseInstant(text, { cutFraction: true, leapSecond: true })?.getTime();
    const now = this.clock.nowMs();
    if (instant === undefined) {
      const message = 'The instant must be an RFC 3339 date-time with an offset, e.g. 2026-03-01T00:00:00Z.';
      return this.counts.send(res, refusal(400, message));
    }
    if (instant > now)
      return this.counts.send(res, refusal(404, 'That instant is later than now: its list is not known yet.'));
    const list = await this.past.listAt(instant);
    const answer = answerPriceListRequest(req.method!, req.headers, list);
    const final = answer.status < 400 && now - instant > CLOCK_SKEW_MS && instant < this.prices.settledBefore();
    this.counts.send(res, final ? withCacheControl(answer, IMMUTABLE) : answer);
  }

  /** Every change of the public list, oldest first (docs/decisions.md, "Prices as they were"). */
  @Get('changes')
  @ApiOperation({
    summary: 'Every change of the public price list, oldest first',
    description:
      'Each change: the instant the list changed, the product, and its entry just before and from then on, exactly ' +
      'as the list showed it (null where not listed). A client that keeps asking with `after=<next>` sees every ' +
      'change exactly once, in order; a change appears once no write in progress can precede it, within minutes ' +
      'of its instant. Organizations’ prices never appear, nor a price before it takes effect. Public; the same ' +
      'per-address limit as `GET /v1/pricing`, counted together. HEAD answers as GET without a body.',
  })
  @ApiQuery({ name: 'after', required: false, description: 'A cursor: `next` of an earlier answer.' })
  @ApiQuery({
    name: 'since',
    required: false,
    description: 'An RFC 3339 date-time: changes at or after it. Not with `after`.',
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: MAX_CHANGES_PER_PAGE, default: MAX_CHANGES_PER_PAGE },
  })
  @ConditionalRequests(false)
  @ApiOkResponse({ description: 'A page of changes.', type: PriceListChangesSchema, headers: CHANGES_200_HEADERS })
  @ApiBadRequestResponse({
    description: 'An unknown parameter, `after` with `since`, or a bad value.',
    headers: REFUSAL_HEADERS,
    content: PLAIN_TEXT,
  })
  @PastResponses(CHANGES_304_HEADERS)
  async changes(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    const url = req.url ?? '';
    const question = url.indexOf('?');
    const parsed = parseFeedQuery(question < 0 ? '' : url.slice(question + 1));
    if ('error' in parsed) return this.counts.send(res, refusal(400, `${parsed.error}.`));
    const snapshot = await this.past.wholeSnapshot();
    if (!snapshot) return this.counts.send(res, PRICE_LIST_UNAVAILABLE);
    const { after, since, limit } = parsed.query;
    const position = after ?? (since === undefined ? FEED_START : positionBefore(since));
    const answers = await this.past.changes(snapshot, position, limit, this.clock.nowMs());
    this.counts.send(res, answerPriceListRequest(req.method!, req.headers, answers));
  }

  /** The feed's chain head, signed (docs/price-history-api.md, "The checkpoint"). */
  @Get('checkpoint')
  @ApiOperation({
    summary: 'A signed checkpoint of the change feed',
    description:
      'The changes `GET /v1/pricing/changes` serves, as a hash chain (each change’s `hash`), up to those at least ' +
      'six minutes old (every cached copy of the feed holds them): its origin, its ' +
      'size (the number of changes) and its head (the hash of the last change; 32 zero bytes for none), each on ' +
      'its own line, in base64 for the head, signed with Ed25519 as a C2SP signed note (c2sp.org/tlog-checkpoint). ' +
      'Verify it with the service’s verifier key; `npm run -s pricing -- audit` does, and checks the feed against ' +
      'it. Public; the same per-address limit as `GET /v1/pricing`, counted together. HEAD answers as GET without a body.',
  })
  @ConditionalRequests(false)
  @ApiOkResponse({
    description: 'The checkpoint, signed.',
    headers: CHECKPOINT_HEADERS,
    content: {
      'text/plain; charset=utf-8': {
        schema: { type: 'string' },
        example:
          'pricing.example.com/v1/pricing\n42\nq1Zb3Rq0ZL3Y1cb0aWZJrk7HBpx4M4mQhHj9N0cWAzI=\n\n' +
          '— pricing.example.com/v1/pricing 6V3qCw…\n',
      },
    },
  })
  @ApiNotFoundResponse({
    description: 'This service signs no checkpoint: no key is configured.',
    headers: REFUSAL_HEADERS,
    content: PLAIN_TEXT,
  })
  @PastResponses(CHECKPOINT_HEADERS)
  checkpoint(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    if (!this.checkpoints.signed)
      return this.counts.send(res, refusal(404, 'This service signs no checkpoint: no checkpoint key is configured.'));
    this.counts.send(res, answerPriceListRequest(req.method!, req.headers, this.checkpoints.answers()));
  }

  /** Described once, in the description of GET. */
  @All(['/', 'at/:instant', 'changes', 'checkpoint'])
  @ApiExcludeEndpoint()
  otherMethods(@Res() res: ServerResponse): void {
    this.counts.send(res, METHOD_NOT_ALLOWED);
  }
}
