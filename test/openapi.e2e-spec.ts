import { dereference, validate, compileErrors } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenAPIV3_1 } from 'openapi-types';
import request from 'supertest';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { useTestDatabase } from './support/database';
import { send } from './support/http';
import type { TestApp } from './support/test-app';
import { FAMILY_ORDER } from './support/contract';

const TOKEN = 'openapi-e2e-token-0123456789';

/** Families with and without dimensions, an open price and one with a scheduled end. */
const BOOK = {
  prices: [
    {
      product_key: 'compute.g2.4',
      unit_type: 'seconds',
      unit_count: 3600,
      amount: '0.0610',
      valid_from: '2026-01-01T00:00:00Z',
    },
    {
      product_key: 'storage.gp1',
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0480',
      valid_from: '2026-01-01T00:00:00Z',
      valid_until: '2099-01-01T00:00:00Z',
    },
    {
      product_key: 'network.vpc_egress',
      unit_type: 'gb',
      unit_count: 1,
      amount: '0.01',
      valid_from: '2026-01-01T00:00:00Z',
    },
  ],
};

type Document = OpenAPIV3_1.Document;
type Operation = OpenAPIV3_1.OperationObject;
type Response = OpenAPIV3_1.ResponseObject;
/** A price list body, to be spoilt field by field. */
interface SpoiltBody {
  currency: unknown;
  last_changed?: unknown;
  families: { family: unknown; prices: Record<string, unknown>[] }[];
}

describe('the OpenAPI document', () => {
  const t = useTestDatabase({ book: BOOK, app: { env: { API_TOKENS: TOKEN }, listen: true } });
  let app: TestApp;
  /** GET /openapi.json as served. */
  let document: Document;
  /** The same, every $ref resolved. */
  let resolved: Document;
  let ajv: Ajv2020;

  beforeAll(async () => {
    app = t.app;
    const res = await request(app.server).get('/openapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json\b/);
    document = res.body as Document;
    resolved = await dereference(structuredClone(document));
    ajv = new Ajv2020({ allErrors: true });
    addFormats(ajv);
    ajv.addKeyword('example'); // OpenAPI's annotation, not a JSON Schema keyword
  });

  const operation = (doc: Document, path: string, method: 'get' | 'post'): Operation => doc.paths![path]![method]!;
  const response = (doc: Document, path: string, method: 'get' | 'post', status: number): Response =>
    operation(doc, path, method).responses![String(status)] as Response;
  const bodySchema = (path: string, method: 'get' | 'post', status: number): ValidateFunction =>
    ajv.compile(response(resolved, path, method, status).content!['application/json'].schema!);

  it('is served with a weak ETag (304 on If-None-Match), revalidated every time, and in gzip or brotli as asked', async () => {
    const plain = await send(app, 'GET', {}, '/openapi.json');
    expect(plain.status).toBe(200);
    const etag = plain.headers.etag!;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{32}"$/);
    expect(plain.headers['cache-control']).toBe('private, no-cache');
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const body = plain.body;
    // The same tag for the same bytes: prepared once, not per request.
    expect((await request(app.server).get('/openapi.json')).headers.etag).toBe(etag);

    const revalidated = await request(app.server).get('/openapi.json').set('If-None-Match', etag).expect(304);
    expect(revalidated.headers.etag).toBe(etag);
    expect(revalidated.text ?? '').toBe('');
    await request(app.server).get('/openapi.json').set('If-None-Match', 'W/"other"').expect(200);
    await request(app.server).get('/openapi.json').set('If-Match', etag).expect(412);
    await request(app.server).head('/openapi.json').set('If-None-Match', etag).expect(304);

    for (const [coding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const encoded = await send(app, 'GET', { 'accept-encoding': coding }, '/openapi.json');
      expect([coding, encoded.headers['content-encoding'], encoded.headers.etag]).toEqual([coding, coding, etag]);
      expect(encoded.body.length).toBeLessThan(body.length / 4);
      expect(decode(encoded.body).equals(body)).toBe(true);
    }
  });

  it('is public, OpenAPI 3.1, and passes an OpenAPI validator', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document));
    if (!result.valid) throw new Error(compileErrors(result));
    expect(result.valid).toBe(true);
  });

  it('describes GET /v1/pricing: no security, its conditional headers, 200, 304, 412, 429 and 503 with their headers', () => {
    const get = operation(document, '/v1/pricing', 'get');
    expect(get.security).toBeUndefined();
    expect(document.security).toBeUndefined(); // no global requirement either
    expect(Object.keys(document.paths!['/v1/pricing']!)).toEqual(['get']); // 405 for the rest is described once, in text
    expect(
      get
        .parameters!.map((p) => [(p as OpenAPIV3_1.ParameterObject).in, (p as OpenAPIV3_1.ParameterObject).name])
        .sort(),
    ).toEqual([
      ['header', 'Accept-Encoding'],
      ['header', 'If-Match'],
      ['header', 'If-Modified-Since'],
      ['header', 'If-None-Match'],
      ['header', 'If-Unmodified-Since'],
    ]);
    expect(Object.keys(get.responses!).sort()).toEqual(['200', '304', '412', '429', '503']);
    const headers = (status: number) => Object.keys(response(document, '/v1/pricing', 'get', status).headers!).sort();
    const cached = ['Access-Control-Allow-Origin', 'Cache-Control', 'ETag', 'Last-Modified', 'Vary'];
    expect(headers(200)).toEqual([...cached, 'Content-Encoding'].sort());
    expect(headers(304)).toEqual(cached);
    const refused = ['Access-Control-Allow-Origin', 'Access-Control-Expose-Headers', 'Cache-Control', 'Retry-After'];
    expect(headers(429)).toEqual(refused);
    expect(headers(503)).toEqual(refused);
    expect(response(document, '/v1/pricing', 'get', 304).content).toBeUndefined();
    expect(Object.keys(response(document, '/v1/pricing', 'get', 503).content!)).toEqual(['text/plain; charset=utf-8']);
    const retryAfter = response(resolved, '/v1/pricing', 'get', 503).headers![
      'Retry-After'
    ] as OpenAPIV3_1.HeaderObject;
    expect(retryAfter.schema).toEqual({ type: 'integer', minimum: 1, enum: [30] });
  });

  it('gives the 200 body its full schema: every field, types, enums, nullability, required', () => {
    const schemas = document.components!.schemas!;
    const list = schemas.PriceList;
    expect(list.required!.sort()).toEqual(['amounts_exclude_vat', 'currency', 'families', 'last_changed']);
    expect(list.properties!.currency).toMatchObject({ type: 'string', enum: ['EUR'] });
    expect(list.properties!.amounts_exclude_vat).toMatchObject({ type: 'boolean', enum: [true] });
    expect(list.properties!.last_changed).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
    const family = schemas.PriceListFamily;
    expect(family.required!.sort()).toEqual(['family', 'prices']);
    expect((family.properties!.family as OpenAPIV3_1.SchemaObject).enum).toEqual(FAMILY_ORDER);
    const entry = schemas.PriceListEntry;
    // dimensions is not required: it is absent for families without dimensions.
    expect(entry.required!.sort()).toEqual([
      'amount',
      'product_key',
      'unit_count',
      'unit_type',
      'valid_from',
      'valid_until',
    ]);
    expect(Object.keys(entry.properties!).sort()).toEqual([
      'amount',
      'dimensions',
      'product_key',
      'unit_count',
      'unit_type',
      'valid_from',
      'valid_until',
    ]);
    expect(entry.properties!.unit_type).toMatchObject({
      type: 'string',
      enum: ['seconds', 'gib_hours', 'gb', 'metric_months', 'requests', 'samples'],
    });
    expect(entry.properties!.unit_count).toMatchObject({ type: 'integer' });
    expect(entry.properties!.amount).toMatchObject({ type: 'string' });
    expect(entry.properties!.valid_from).toMatchObject({ type: 'string', format: 'date-time' });
    expect(entry.properties!.valid_until).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
    expect((entry.properties!.dimensions as OpenAPIV3_1.SchemaObject).description).toMatch(/absent/i);
    expect(Object.keys(schemas.PriceListDimensions.properties!).sort()).toEqual(['instance_type', 'storage_class']);
  });

  it('the live 200 body validates against its own documented schema', async () => {
    const res = await request(app.server).get('/v1/pricing').expect(200);
    const body = JSON.parse(res.text) as { families: { family: string; prices: Record<string, unknown>[] }[] };
    // The body exercises what the schema allows: dimensions present and absent, valid_until null and set.
    const prices = body.families.flatMap((f) => f.prices);
    expect(prices.map((p) => 'dimensions' in p)).toEqual([true, false, true]);
    expect(prices.map((p) => p.valid_until)).toEqual([null, null, '2099-01-01T00:00:00Z']);
    const valid = bodySchema('/v1/pricing', 'get', 200);
    expect({ valid: valid(body), errors: valid.errors }).toEqual({ valid: true, errors: null });
  });

  it.each<[string, (body: SpoiltBody) => void]>([
    ['a numeric amount', (body) => (body.families[0].prices[0].amount = 0.061)],
    ['an amount in exponent form', (body) => (body.families[0].prices[0].amount = '6.1e-2')],
    ['a missing valid_until', (body) => delete body.families[0].prices[0].valid_until],
    ['a missing last_changed', (body) => delete body.last_changed],
    ['dimensions: null', (body) => (body.families[1].prices[0].dimensions = null)],
    ['an unknown family', (body) => (body.families[0].family = 'compute')],
    ['an unknown unit type', (body) => (body.families[0].prices[0].unit_type = 'hours')],
    ['a string unit count', (body) => (body.families[0].prices[0].unit_count = '3600')],
    ['currency USD', (body) => (body.currency = 'USD')],
    ['a timestamp that is not RFC 3339', (body) => (body.families[0].prices[0].valid_from = '2026-01-01')],
  ])('a body with %s does not validate', async (_what, spoil) => {
    const res = await request(app.server).get('/v1/pricing').expect(200);
    const body = JSON.parse(res.text) as SpoiltBody;
    const valid = bodySchema('/v1/pricing', 'get', 200);
    expect(valid(body)).toBe(true);
    spoil(body);
    expect(valid(body)).toBe(false);
  });

  it('describes the list at an instant and the change feed: public, their parameters, 200, 304, 400, 412, 429 and 503', () => {
    const at = operation(document, '/v1/pricing/at/{instant}', 'get');
    const changes = operation(document, '/v1/pricing/changes', 'get');
    for (const op of [at, changes]) {
      expect(op.security ?? []).toEqual([]);
      expect(Object.keys(op.responses!).sort()).toEqual(
        op === at ? ['200', '304', '400', '404', '412', '429', '503'] : ['200', '304', '400', '412', '429', '503'],
      );
    }
    const conditional = (dates: boolean) => [
      ['Accept-Encoding', 'header', false],
      ['If-Match', 'header', false],
      ...(dates ? [['If-Modified-Since', 'header', false]] : []),
      ['If-None-Match', 'header', false],
      ...(dates ? [['If-Unmodified-Since', 'header', false]] : []),
    ];
    const parameters = (op: Operation) =>
      (op.parameters as OpenAPIV3_1.ParameterObject[]).map((p) => [p.name, p.in, p.required]).sort();
    expect(parameters(at)).toEqual([...conditional(true), ['instant', 'path', true]]);
    // The change feed has no Last-Modified: no date to compare with.
    expect(parameters(changes)).toEqual([
      ...conditional(false),
      ['after', 'query', false],
      ['limit', 'query', false],
      ['since', 'query', false],
    ]);
    expect(response(document, '/v1/pricing/at/{instant}', 'get', 200).content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/PriceList',
    });
    expect(Object.keys(response(document, '/v1/pricing/changes', 'get', 400).content!)).toEqual([
      'text/plain; charset=utf-8',
    ]);
    expect(Object.keys(response(document, '/v1/pricing/changes', 'get', 200).headers!)).toContain('Cache-Control');
  });

  it('the live bodies of the list at an instant and of the change feed validate against their documented schemas', async () => {
    const now = new Date().toISOString();
    const past = await request(app.server).get(`/v1/pricing/at/${now}`).expect(200);
    const validList = bodySchema('/v1/pricing/at/{instant}', 'get', 200);
    expect({ valid: validList(JSON.parse(past.text)), errors: validList.errors }).toEqual({
      valid: true,
      errors: null,
    });
    const feed = await request(app.server).get('/v1/pricing/changes').expect(200);
    const body = JSON.parse(feed.text) as { changes: Record<string, unknown>[] };
    expect(body.changes.length).toBeGreaterThan(0);
    const validFeed = bodySchema('/v1/pricing/changes', 'get', 200);
    expect({ valid: validFeed(body), errors: validFeed.errors }).toEqual({ valid: true, errors: null });
    body.changes[0].at = 12;
    expect(validFeed(body)).toBe(false);
  });

  it('describes the volumes endpoints with the bearer scheme, their DTOs and the error envelope', async () => {
    expect(document.components!.securitySchemes!.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [path, method] of [
      ['/v1/volumes', 'post'],
      ['/v1/volumes/{id}', 'get'],
    ] as const) {
      expect(operation(document, path, method).security).toEqual([{ bearer: [] }]);
      const errors = Object.keys(operation(document, path, method).responses!).filter((status) => status >= '400');
      expect(errors).toEqual(expect.arrayContaining(['401', '503']));
      for (const status of errors) {
        expect(response(document, path, method, Number(status)).content!['application/json'].schema).toEqual({
          $ref: '#/components/schemas/ErrorEnvelope',
        });
      }
    }
    const create = operation(resolved, '/v1/volumes', 'post');
    const dto = (create.requestBody as OpenAPIV3_1.RequestBodyObject).content['application/json']
      .schema as OpenAPIV3_1.SchemaObject;
    expect(dto.required!.sort()).toEqual(['name', 'size_gib', 'storage_class']);
    expect(dto.properties!.storage_class).toMatchObject({ enum: ['gp1', 'st1', 'io1'] });
    expect(dto.properties!.size_gib).toMatchObject({ type: 'integer', minimum: 1, maximum: 16384 });
    expect(Object.keys(create.responses!).sort()).toEqual(['201', '400', '401', '409', '411', '413', '503']);

    // Live answers validate against what the document says about them.
    const created = await request(app.server)
      .post('/v1/volumes')
      .set('Authorization', `Bearer ${TOKEN}`)
      .send({ name: 'data-1', size_gib: 10, storage_class: 'gp1' })
      .expect(201);
    expect(bodySchema('/v1/volumes', 'post', 201)(created.body)).toBe(true);
    const read = await request(app.server)
      .get(`/v1/volumes/${created.body.id}`)
      .set('Authorization', `Bearer ${TOKEN}`)
      .expect(200);
    expect(bodySchema('/v1/volumes/{id}', 'get', 200)(read.body)).toBe(true);
    for (const [status, send] of [
      [401, () => request(app.server).post('/v1/volumes').send({})],
      [
        400,
        () => request(app.server).post('/v1/volumes').set('Authorization', `Bearer ${TOKEN}`).send({ size_gib: 0 }),
      ],
      [
        409,
        () =>
          request(app.server)
            .post('/v1/volumes')
            .set('Authorization', `Bearer ${TOKEN}`)
            .send({ name: 'x', size_gib: 1, storage_class: 'io1' }),
      ],
    ] as const) {
      const res = await send().expect(status);
      const valid = bodySchema('/v1/volumes', 'post', status);
      expect({ status, valid: valid(res.body), errors: valid.errors }).toEqual({ status, valid: true, errors: null });
    }
  });

  it('serves the explorer at /docs with its assets from this server, no CDN, without credentials', async () => {
    const page = await request(app.server).get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html\b/);
    const assets = [...page.text.matchAll(/(?:src|href)=["']([^"']+)["']/g)].map((m) => m[1]);
    expect(assets).toEqual(expect.arrayContaining(['./docs/swagger-ui-bundle.js', './docs/swagger-ui.css']));
    expect(page.text).not.toMatch(/https?:\/\/(?!www\.w3\.org\/)/); // nothing loaded from elsewhere
    for (const asset of assets) {
      const res = await request(app.server).get(new URL(asset, 'http://host/docs').pathname).expect(200);
      expect(res.body.length ?? res.text.length).toBeGreaterThan(0);
    }
    // The page's init script carries this very document.
    const init = await request(app.server).get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('"/v1/pricing"');
  });

  it('serves the explorer with a Content-Security-Policy that forbids framing, and only the files it needs', async () => {
    for (const path of ['/docs', '/docs/', '/docs/swagger-ui-init.js', '/docs/swagger-ui-bundle.js']) {
      const res = await request(app.server).get(path).expect(200);
      const csp = String(res.headers['content-security-policy']);
      expect([path, csp]).toEqual([path, expect.stringContaining("frame-ancestors 'none'")]);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    // swagger-ui-dist's other files: its package.json, source maps, a sample initializer, ...
    for (const path of [
      '/docs/package.json',
      '/docs/swagger-ui-bundle.js.map',
      '/docs/swagger-initializer.js',
      '/docs/index.css',
      '/docs/oauth2-redirect.html',
      '/docs/swagger-ui-es-bundle.js',
      '/docs/absolute-path.js',
      '/docs/LICENSE',
      '/docs/README.md',
      '/docs/%2e%2e/package.json',
    ]) {
      const res = await request(app.server).get(path);
      expect([path, res.status, res.body]).toEqual([
        path,
        404,
        { error: { code: 'NOT_FOUND', message: 'no such resource', details: {} } },
      ]);
    }
  });
});
