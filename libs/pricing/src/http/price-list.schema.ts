// The OpenAPI description of `GET /v1/pricing` (section 2 of the API document): classes for
// @nestjs/swagger to read, never instantiated. Enums and patterns come from the catalogue and
// the price list's own rules, so the description cannot drift from what is served.
import { ApiProperty, ApiPropertyOptional, ApiSchema, type ApiResponseOptions } from '@nestjs/swagger';
import { MAX_PRODUCT_KEY_LENGTH, PRODUCT_FAMILIES, STORAGE_CLASSES, UNIT_TYPES } from '../catalogue/catalogue';
import { PLAIN_DECIMAL } from '../core/quote';
import { PRICE_LIST_CACHE_CONTROL, RETRY_AFTER_UNAVAILABLE_S } from '../rendering/price-list-response';

type HeaderObjects = NonNullable<ApiResponseOptions['headers']>;

const FAMILIES = PRODUCT_FAMILIES.map((family) => family.family);
const INSTANCE_TYPE = PRODUCT_FAMILIES.find((family) => family.dimension?.name === 'instance_type')!.dimension!.value;
const RFC3339 = 'RFC 3339 timestamp in UTC (`Z`)';

@ApiSchema({ name: 'PriceListDimensions' })
export class PriceListDimensionsSchema {
  @ApiPropertyOptional({
    description: 'The instance type of a `compute_instance` price (`compute.<instance_type>`).',
    pattern: INSTANCE_TYPE.source,
    example: 'g2.4',
  })
  readonly instance_type?: string;

  @ApiPropertyOptional({
    description: 'The storage class of a `storage_volume` price (`storage.<storage_class>`).',
    enum: STORAGE_CLASSES,
    example: 'gp1',
  })
  readonly storage_class?: string;
}

@ApiSchema({ name: 'PriceListEntry' })
export class PriceListEntrySchema {
  @ApiProperty({
    description: 'What the price bills; usage and cost reports use the same key. Shape per family in section 2.4.',
    maxLength: MAX_PRODUCT_KEY_LENGTH,
    example: 'compute.g2.4',
  })
  readonly product_key!: string;

  @ApiPropertyOptional({
    type: PriceListDimensionsSchema,
    description:
      'The parts of the product key, already split out: `instance_type` for `compute_instance`, ' +
      '`storage_class` for `storage_volume`. Absent (not null) when the family has no dimensions.',
  })
  readonly dimensions?: PriceListDimensionsSchema;

  @ApiProperty({ enum: UNIT_TYPES, description: 'The unit the amount is for.', example: 'seconds' })
  readonly unit_type!: string;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'Number of units that `amount` is for: 3600 with `seconds` is an hourly rate.',
    example: 3600,
  })
  readonly unit_count!: number;

  @ApiProperty({
    pattern: PLAIN_DECIMAL.source,
    description:
      'Price in euro for `unit_count` units, net of VAT: a decimal string with the digits it was set with, never a number.',
    example: '0.0610',
  })
  readonly amount!: string;

  @ApiProperty({ format: 'date-time', description: `${RFC3339} from which the price applies.` })
  readonly valid_from!: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: `${RFC3339} at which the price is scheduled to end; null when no end is scheduled.`,
  })
  readonly valid_until!: string | null;
}

@ApiSchema({ name: 'PriceListFamily' })
export class PriceListFamilySchema {
  @ApiProperty({ enum: FAMILIES, description: 'Family identifier (section 2.4).', example: 'compute_instance' })
  readonly family!: string;

  @ApiProperty({
    type: [PriceListEntrySchema],
    description:
      'Current prices of the family, ordered by product key with numeric parts compared as numbers ' +
      '(`compute.g2.2` < `compute.g2.4` < `compute.g2.16`).',
  })
  readonly prices!: PriceListEntrySchema[];
}

@ApiSchema({ name: 'PriceList' })
export class PriceListDocumentSchema {
  @ApiProperty({ enum: ['EUR'], description: 'Always `EUR`.' })
  readonly currency!: 'EUR';

  @ApiProperty({
    type: 'boolean',
    enum: [true],
    description: 'Always true: every amount is net; VAT is added on the invoice and depends on the billing country.',
  })
  readonly amounts_exclude_vat!: true;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      `${RFC3339} of the most recent time a list price was set, changed, took effect or ended; ` +
      'null only if nothing has ever been priced.',
  })
  readonly last_changed!: string | null;

  @ApiProperty({
    type: [PriceListFamilySchema],
    description:
      'One entry per product family with at least one current price, in the order of section 2.4; ' +
      'a family without a current price is left out.',
  })
  readonly families!: PriceListFamilySchema[];
}

@ApiSchema({ name: 'PriceListChange' })
export class PriceListChangeSchema {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'The change’s place in the feed, from 0: the same for every client and every page.',
  })
  readonly position!: number;

  @ApiProperty({
    format: 'date-time',
    description: `${RFC3339} at which the list changed: a price took effect, changed, ended, or its valid_until was set or moved.`,
  })
  readonly at!: string;

  @ApiProperty({ maxLength: MAX_PRODUCT_KEY_LENGTH, example: 'compute.g2.4' })
  readonly product_key!: string;

  @ApiProperty({ enum: FAMILIES, example: 'compute_instance' })
  readonly family!: string;

  @ApiProperty({
    type: PriceListEntrySchema,
    nullable: true,
    description:
      'The product’s entry in the list just before `at`, exactly as the list showed it; null where not listed.',
  })
  readonly before!: PriceListEntrySchema | null;

  @ApiProperty({
    type: PriceListEntrySchema,
    nullable: true,
    description: 'The product’s entry in the list from `at` on, exactly as the list showed it; null where not listed.',
  })
  readonly after!: PriceListEntrySchema | null;

  @ApiProperty({
    format: 'byte',
    example: 'q1Zb3Rq0ZL3Y1cb0aWZJrk7HBpx4M4mQhHj9N0cWAzI=',
    description:
      'Base64 of SHA-256(the hash of the change before, or 32 zero bytes for the first ‖ this change without ' +
      '`position` and `hash` in the JSON Canonicalization Scheme, RFC 8785): the feed as a hash chain, whose ' +
      'head `GET /v1/pricing/checkpoint` signs.',
  })
  readonly hash!: string;
}

@ApiSchema({ name: 'PriceListChanges' })
export class PriceListChangesSchema {
  @ApiProperty({ enum: ['EUR'], description: 'Always `EUR`.' })
  readonly currency!: 'EUR';

  @ApiProperty({ type: 'boolean', enum: [true], description: 'Always true: every amount is net.' })
  readonly amounts_exclude_vat!: true;

  @ApiProperty({
    type: [PriceListChangeSchema],
    description: 'Changes of the public list, oldest first: by `at`, then product key in the list’s order.',
  })
  readonly changes!: PriceListChangeSchema[];

  @ApiProperty({
    description:
      'The cursor just after the last change returned (or the one given, when none is): ask again with `after=<next>`.',
  })
  readonly next!: string;

  @ApiProperty({ type: 'boolean', description: 'Whether more changes are ready now.' })
  readonly has_more!: boolean;
}

const string = { type: 'string' } as const;

// Each response declares exactly the headers the server sends with it (test/openapi-headers.e2e-spec.ts
// compares them); Content-Type is its `content`, and the transport's own (Content-Length, Date,
// Connection, Keep-Alive, Transfer-Encoding) are left out: any hop may set them.

/** Headers of the list's 304: the validators and caching rules of its 200, no coding (there is no body). */
export const PRICE_LIST_HEADERS: HeaderObjects = {
  ETag: { description: 'Weak tag of the body, `W/"<opaque_tag>"`; changes whenever the body changes.', schema: string },
  'Cache-Control': { description: `\`${PRICE_LIST_CACHE_CONTROL}\``, schema: string },
  'Access-Control-Allow-Origin': { description: '`*`: a page on any origin can read the list.', schema: string },
  'Last-Modified': {
    description: '`last_changed` as an HTTP date; absent when `last_changed` is null.',
    required: false,
    schema: string,
  },
  Vary: { description: '`Accept-Encoding`: the body may be sent in another coding.', schema: string },
};

const CONTENT_ENCODING: HeaderObjects = {
  'Content-Encoding': {
    description:
      '`br` or `gzip` when the body is sent in that coding (see Accept-Encoding); absent for the plain JSON.',
    required: false,
    schema: { type: 'string', enum: ['br', 'gzip'] },
  },
};

/** The list's 200: the headers of its 304, and the coding of the body sent. */
export const PRICE_LIST_200_HEADERS: HeaderObjects = { ...PRICE_LIST_HEADERS, ...CONTENT_ENCODING };

const PAST_LIST_CACHE_CONTROL: HeaderObjects = {
  'Cache-Control': {
    description:
      '`public, max-age=604800, immutable` for an instant more than 10 minutes old (its list can no longer change), ' +
      'else `public, max-age=300`.',
    schema: string,
  },
};

/** The list at an instant: 304, and 200 with the coding of its body. */
export const PAST_LIST_304_HEADERS: HeaderObjects = { ...PRICE_LIST_HEADERS, ...PAST_LIST_CACHE_CONTROL };
export const PAST_LIST_200_HEADERS: HeaderObjects = { ...PAST_LIST_304_HEADERS, ...CONTENT_ENCODING };

/** The change feed: the list's validators but Last-Modified (a page of changes has none), its own caching. */
export const CHANGES_304_HEADERS: HeaderObjects = {
  ETag: PRICE_LIST_HEADERS.ETag,
  'Cache-Control': {
    description:
      '`public, max-age=604800, immutable` for a page that more changes follow (`has_more: true`: it can never ' +
      'change), else `public, max-age=300`.',
    schema: string,
  },
  'Access-Control-Allow-Origin': PRICE_LIST_HEADERS['Access-Control-Allow-Origin'],
  Vary: PRICE_LIST_HEADERS.Vary,
};
export const CHANGES_200_HEADERS: HeaderObjects = { ...CHANGES_304_HEADERS, ...CONTENT_ENCODING };

/** Headers of the checkpoint's 200 and 304: never compressed (a few hundred bytes), so no Vary. */
export const CHECKPOINT_HEADERS: HeaderObjects = {
  ETag: PRICE_LIST_HEADERS.ETag,
  'Cache-Control': { description: '`public, max-age=10`', schema: string },
  'Access-Control-Allow-Origin': PRICE_LIST_HEADERS['Access-Control-Allow-Origin'],
};

/** Headers of 400, 404 and 412: nothing may cache the refusal. */
export const REFUSAL_HEADERS: HeaderObjects = {
  'Cache-Control': { description: '`no-store`', schema: string },
  'Access-Control-Allow-Origin': { description: '`*`', schema: string },
};

/** Headers of 429 and 503: when to retry, and that nothing may cache the refusal. */
export function retryHeaders(retryAfter: string, seconds?: number): HeaderObjects {
  return {
    'Retry-After': {
      description: retryAfter,
      schema: { type: 'integer', minimum: 1, ...(seconds !== undefined && { enum: [seconds] }) },
    },
    'Cache-Control': { description: '`no-store`', schema: string },
    'Access-Control-Allow-Origin': { description: '`*`', schema: string },
    'Access-Control-Expose-Headers': { description: '`Retry-After`, for a page on another origin.', schema: string },
  };
}

export const PLAIN_TEXT = { 'text/plain; charset=utf-8': { schema: string } };

/** 503's Retry-After is always the same. */
export const UNAVAILABLE_HEADERS = retryHeaders(
  `Seconds to wait: always ${RETRY_AFTER_UNAVAILABLE_S}.`,
  RETRY_AFTER_UNAVAILABLE_S,
);
