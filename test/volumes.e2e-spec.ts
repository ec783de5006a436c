import { Logger } from '@nestjs/common';
import { PricingService } from '@app/pricing';
import request from 'supertest';
import type { Response } from 'supertest';
import { ManualClock } from '@app/pricing/testing';
import { applyBook, dumpDatabase, useTestDatabase } from './support/database';

const TOKEN = 'volumes-e2e-token-0123456789';
const SECOND_TOKEN = 'second.token~with+chars/=-';
const NOW = '2026-07-01T12:00:00.000Z';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Like the sample price book: every storage class priced; the migration marks io1 and st1 not on sale. */
const BOOK = {
  prices: [
    {
      product_key: 'storage.gp1',
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0480',
      valid_from: '2026-01-01T00:00:00Z',
    },
    {
      product_key: 'storage.st1',
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0250',
      valid_from: '2026-01-01T00:00:00Z',
    },
    {
      product_key: 'storage.io1',
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.1250',
      valid_from: '2026-01-01T00:00:00Z',
    },
    {
      product_key: 'compute.g2.4',
      unit_type: 'seconds',
      unit_count: 3600,
      amount: '0.0610',
      valid_from: '2026-01-01T00:00:00Z',
    },
  ],
};

interface ApiErrorBody {
  readonly code: string;
  readonly message: string;
  readonly details: Record<string, unknown>;
}

const VALID = { name: 'data-1', size_gib: 100, storage_class: 'gp1' };

describe('volumes API', () => {
  const clock = new ManualClock(new Date(NOW));
  const t = useTestDatabase({ book: BOOK, app: { env: { API_TOKENS: `${TOKEN},${SECOND_TOKEN}` }, clock } });

  afterEach(() => {
    clock.set(NOW);
    jest.restoreAllMocks();
  });

  /** `authorization: null` sends no Authorization header. */
  const post = (body: unknown, authorization: string | null = `Bearer ${TOKEN}`) => {
    const req = request(t.app.server).post('/v1/volumes');
    if (authorization !== null) req.set('Authorization', authorization);
    return req.send(body as object);
  };

  const get = (id: string, authorization: string | null = `Bearer ${TOKEN}`) => {
    const req = request(t.app.server).get(`/v1/volumes/${id}`);
    if (authorization !== null) req.set('Authorization', authorization);
    return req;
  };

  /** Checks the one error envelope, exactly, and returns its `error` member. */
  function envelope(res: Response, status: number, code: string): ApiErrorBody {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(res.headers['content-type']).toMatch(/^application\/json\b/);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(Object.keys(res.body.error).sort()).toEqual(['code', 'details', 'message']);
    expect(typeof res.body.error.message).toBe('string');
    expect(res.body.error.message.length).toBeGreaterThan(0);
    expect(res.body.error.details).toEqual(expect.any(Object));
    expect(Array.isArray(res.body.error.details)).toBe(false);
    return (res.body as { error: ApiErrorBody }).error;
  }

  /** Runs `act` and checks that no row of any table changed. */
  async function nothingStored(act: () => Promise<void>): Promise<void> {
    const before = await dumpDatabase(t.dataSource);
    await act();
    expect(await dumpDatabase(t.dataSource)).toBe(before);
  }

  async function volumeCount(): Promise<number> {
    const rows: { n: number }[] = await t.dataSource.query('SELECT count(*)::int AS n FROM volume');
    return rows[0].n;
  }

  /** Waits (briefly, polling) until the app's in-memory prices say `key` is or is not on sale. */
  async function untilOnSale(key: string, onSale: boolean): Promise<void> {
    const pricing = t.app.app.get(PricingService);
    const deadline = Date.now() + 5_000;
    while (pricing.isOnSale(key) !== onSale) {
      if (Date.now() > deadline) throw new Error(`${key} did not become ${onSale ? 'on sale' : 'unavailable'}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  describe('POST /v1/volumes and GET /v1/volumes/:id', () => {
    it('creates a gp1 volume: 201 with the stored volume, which GET reads back', async () => {
      const before = await volumeCount();
      const res = await post(VALID).expect(201);
      expect(res.headers['content-type']).toMatch(/^application\/json\b/);
      expect(Object.keys(res.body).sort()).toEqual(['created_at', 'id', 'name', 'size_gib', 'storage_class']);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'data-1',
        size_gib: 100,
        storage_class: 'gp1',
        created_at: NOW,
      });
      expect(await volumeCount()).toBe(before + 1);

      const rows: unknown[] = await t.dataSource.query(
        `SELECT id::text, name, size_gib, storage_class, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
           FROM volume WHERE id = $1`,
        [res.body.id],
      );
      expect(rows).toEqual([res.body]);

      const read = await get(res.body.id).expect(200);
      expect(read.body).toEqual(res.body);
    });

    it('accepts the size limits 1 and 16384 and every valid name shape', async () => {
      const small = await post({ name: 'a', size_gib: 1, storage_class: 'gp1' }).expect(201);
      expect(small.body).toMatchObject({ name: 'a', size_gib: 1 });
      const name = `a${'-'.repeat(61)}9`;
      const large = await post({ name, size_gib: 16384, storage_class: 'gp1' }).expect(201);
      expect(large.body).toMatchObject({ name, size_gib: 16384 });
      expect((await get(large.body.id).expect(200)).body).toEqual(large.body);
    });

    it('gives each volume its own id', async () => {
      const a = await post({ ...VALID, name: 'twin' }).expect(201);
      const b = await post({ ...VALID, name: 'twin' }).expect(201);
      expect(a.body.id).not.toBe(b.body.id);
      expect((await get(a.body.id).expect(200)).body.id).toBe(a.body.id);
      expect((await get(b.body.id).expect(200)).body.id).toBe(b.body.id);
    });

    it('accepts every token of API_TOKENS', async () => {
      const res = await post({ ...VALID, name: 'second-token' }, `Bearer ${SECOND_TOKEN}`).expect(201);
      expect((await get(res.body.id, `Bearer ${SECOND_TOKEN}`).expect(200)).body.name).toBe('second-token');
    });
  });

  describe('409 PRODUCT_UNAVAILABLE', () => {
    it.each([
      ['io1', 'storage.io1'],
      ['st1', 'storage.st1'],
    ])('refuses storage class %s, priced but not on sale, and stores nothing', async (storageClass, productKey) => {
      await nothingStored(async () => {
        const res = await post({ ...VALID, storage_class: storageClass });
        expect(envelope(res, 409, 'PRODUCT_UNAVAILABLE')).toEqual({
          code: 'PRODUCT_UNAVAILABLE',
          message: `${productKey} cannot be ordered: it is not on sale`,
          details: { product_key: productKey },
        });
      });
    });

    it('refuses gp1 when it has no current list price (before its valid_from), and stores nothing', async () => {
      clock.set('2025-12-31T23:59:59.999Z');
      await nothingStored(async () => {
        const res = await post(VALID);
        expect(envelope(res, 409, 'PRODUCT_UNAVAILABLE')).toEqual({
          code: 'PRODUCT_UNAVAILABLE',
          message: 'storage.gp1 cannot be ordered: it has no current price',
          details: { product_key: 'storage.gp1' },
        });
      });
      clock.set('2026-01-01T00:00:00.000Z');
      await post(VALID).expect(201);
    });

    it('applies availability changed with a price book without a restart', async () => {
      const service = t.app.app.get(PricingService);
      await applyBook(t.dataSource, { products: [{ product_key: 'storage.gp1', on_sale: false }] });
      await untilOnSale('storage.gp1', false);
      expect(() => service.assertOrderable('storage.gp1')).toThrow('storage.gp1 cannot be ordered: it is not on sale');
      await nothingStored(async () => {
        const res = await post(VALID);
        expect(envelope(res, 409, 'PRODUCT_UNAVAILABLE').details).toEqual({ product_key: 'storage.gp1' });
      });

      await applyBook(t.dataSource, { products: [{ product_key: 'storage.gp1', on_sale: true }] });
      await untilOnSale('storage.gp1', true);
      const res = await post({ ...VALID, name: 'back-on-sale' }).expect(201);
      expect(res.body).toMatchObject({ name: 'back-on-sale', storage_class: 'gp1' });
    });

    it('lets io1 be ordered once a price book puts it on sale, and refuses it again once taken off', async () => {
      await applyBook(t.dataSource, { products: [{ product_key: 'storage.io1', on_sale: true }] });
      await untilOnSale('storage.io1', true);
      await post({ ...VALID, name: 'io1-volume', storage_class: 'io1' }).expect(201);

      await applyBook(t.dataSource, { products: [{ product_key: 'storage.io1', on_sale: false }] });
      await untilOnSale('storage.io1', false);
      await nothingStored(async () => {
        const res = await post({ ...VALID, storage_class: 'io1' });
        expect(envelope(res, 409, 'PRODUCT_UNAVAILABLE').details).toEqual({ product_key: 'storage.io1' });
      });
    });
  });

  describe('400 INVALID_REQUEST', () => {
    const NOT_A_CLASS = { storage_class: ['storage_class must be one of gp1, st1, io1'] };
    it.each<[string, unknown, Record<string, string[]>]>([
      ['an unknown field', { ...VALID, color: 'red' }, { color: ['unknown field'] }],
      [
        'an id chosen by the client',
        { ...VALID, id: '00000000-0000-4000-8000-000000000000' },
        { id: ['unknown field'] },
      ],
      ['a storage class other than gp1/st1/io1', { ...VALID, storage_class: 'gp2' }, NOT_A_CLASS],
      ['an upper-case storage class', { ...VALID, storage_class: 'GP1' }, NOT_A_CLASS],
      ['a product key as storage class', { ...VALID, storage_class: 'storage.gp1' }, NOT_A_CLASS],
      ['size_gib 0', { ...VALID, size_gib: 0 }, { size_gib: ['size_gib must be from 1 to 16384'] }],
      ['size_gib 16385', { ...VALID, size_gib: 16385 }, { size_gib: ['size_gib must be from 1 to 16384'] }],
      ['size_gib -1', { ...VALID, size_gib: -1 }, { size_gib: ['size_gib must be from 1 to 16384'] }],
      ['size_gib 1.5', { ...VALID, size_gib: 1.5 }, { size_gib: ['size_gib must be an integer'] }],
    ])('refuses %s, naming the field, and stores nothing', async (_label, body, fields) => {
      await nothingStored(async () => {
        const res = await post(body);
        const error = envelope(res, 400, 'INVALID_REQUEST');
        expect(error.details).toEqual({ fields });
        expect(error.message).toBe(`invalid request: ${Object.keys(fields).join(', ')}`);
      });
    });

    it.each<[string, unknown, string]>([
      ['size_gib "10" (a string)', { ...VALID, size_gib: '10' }, 'size_gib'],
      ['size_gib null', { ...VALID, size_gib: null }, 'size_gib'],
      ['size_gib true', { ...VALID, size_gib: true }, 'size_gib'],
      ['a missing size_gib', { name: 'data-1', storage_class: 'gp1' }, 'size_gib'],
      ['a missing name', { size_gib: 10, storage_class: 'gp1' }, 'name'],
      ['an empty name', { ...VALID, name: '' }, 'name'],
      ['a name with upper-case letters', { ...VALID, name: 'Data-1' }, 'name'],
      ['a name ending with "-"', { ...VALID, name: 'data-' }, 'name'],
      ['a name of 64 characters', { ...VALID, name: 'a'.repeat(64) }, 'name'],
      ['a numeric name', { ...VALID, name: 12 }, 'name'],
      ['a missing storage_class', { name: 'data-1', size_gib: 10 }, 'storage_class'],
    ])('refuses %s, naming the field, and stores nothing', async (_label, body, field) => {
      await nothingStored(async () => {
        const res = await post(body);
        const error = envelope(res, 400, 'INVALID_REQUEST');
        expect(Object.keys(error.details)).toEqual(['fields']);
        const fields = error.details.fields as Record<string, string[]>;
        expect(Object.keys(fields)).toEqual([field]);
        expect(fields[field].length).toBeGreaterThan(0);
        for (const message of fields[field]) expect(message).toContain(field);
        expect(error.message).toBe(`invalid request: ${field}`);
      });
    });

    it('names the integer rule for size_gib "10"', async () => {
      const res = await post({ ...VALID, size_gib: '10' });
      expect(envelope(res, 400, 'INVALID_REQUEST').details.fields).toEqual({
        size_gib: expect.arrayContaining(['size_gib must be an integer']),
      });
    });

    it('names every invalid field at once', async () => {
      await nothingStored(async () => {
        const res = await post({ name: 'Bad Name', size_gib: 0, storage_class: 'ssd', extra: 1 });
        const error = envelope(res, 400, 'INVALID_REQUEST');
        const fields = error.details.fields as Record<string, string[]>;
        expect(Object.keys(fields).sort()).toEqual(['extra', 'name', 'size_gib', 'storage_class']);
        expect(fields.extra).toEqual(['unknown field']);
        expect(fields.size_gib).toEqual(['size_gib must be from 1 to 16384']);
        expect(fields.storage_class).toEqual(['storage_class must be one of gp1, st1, io1']);
      });
    });

    it('validates before the availability guard: an invalid io1 request is a 400', async () => {
      await nothingStored(async () => {
        const res = await post({ ...VALID, storage_class: 'io1', size_gib: 0 });
        expect(envelope(res, 400, 'INVALID_REQUEST').details).toEqual({
          fields: { size_gib: ['size_gib must be from 1 to 16384'] },
        });
      });
    });

    it.each([
      ['truncated JSON', '{"name": "data-1", "size_gib": 10,'],
      ['a trailing comma', '{"name": "data-1", "size_gib": 10, "storage_class": "gp1",}'],
      ['single quotes', "{'name': 'data-1'}"],
      ['not JSON at all', 'name=data-1'],
    ])('refuses malformed JSON (%s) and stores nothing', async (_label, text) => {
      await nothingStored(async () => {
        const res = await request(t.app.server)
          .post('/v1/volumes')
          .set('Authorization', `Bearer ${TOKEN}`)
          .set('Content-Type', 'application/json')
          .send(text);
        const error = envelope(res, 400, 'INVALID_REQUEST');
        expect(res.text).not.toMatch(/\bat .*\(.*:\d+:\d+\)/);
        expect(res.text).not.toContain('node_modules');
        expect(error.message).toBe('invalid request: body');
        expect(error.details).toEqual({ fields: { body: [expect.stringMatching(/^is not valid JSON: /)] } });
      });
    });

    it.each(['__proto__', 'constructor', 'prototype'])(
      'refuses the unknown field %s and stores nothing',
      async (key) => {
        await nothingStored(async () => {
          const res = await request(t.app.server)
            .post('/v1/volumes')
            .set('Authorization', `Bearer ${TOKEN}`)
            .set('Content-Type', 'application/json')
            .send(`{"name":"data-1","size_gib":10,"storage_class":"gp1","${key}":{"x":1}}`);
          const error = envelope(res, 400, 'INVALID_REQUEST');
          expect(error.details).toEqual({ fields: { [key]: ['unknown field'] } });
        });
      },
    );

    it('refuses a body nested deeper than 32 levels, naming the field, and stores nothing', async () => {
      await nothingStored(async () => {
        const res = await request(t.app.server)
          .post('/v1/volumes')
          .set('Authorization', `Bearer ${TOKEN}`)
          .set('Content-Type', 'application/json')
          .send(`{"name":"data-1","size_gib":${'['.repeat(5_000)}${']'.repeat(5_000)},"storage_class":"gp1"}`);
        expect(envelope(res, 400, 'INVALID_REQUEST').details).toEqual({
          fields: { size_gib: ['nested more than 32 levels deep'] },
        });
      });
    });

    it.each([
      ['an empty body', undefined],
      ['a JSON array', []],
      ['an array of a valid volume', [VALID]],
    ])('refuses %s and stores nothing', async (_label, body) => {
      await nothingStored(async () => {
        const req = request(t.app.server).post('/v1/volumes').set('Authorization', `Bearer ${TOKEN}`);
        const res = body === undefined ? await req : await req.send(body);
        envelope(res, 400, 'INVALID_REQUEST');
      });
    });
  });

  describe('401 UNAUTHENTICATED', () => {
    const unauthenticated = {
      code: 'UNAUTHENTICATED',
      message: 'a valid bearer token is required',
      details: {},
    };

    it.each<[string, string | null]>([
      ['without an Authorization header', null],
      ['with a wrong token', 'Bearer volumes-e2e-token-0123456780'],
      ['with a token that is a prefix of a valid one', `Bearer ${TOKEN.slice(0, -1)}`],
      ['with a valid token plus a character', `Bearer ${TOKEN}x`],
      ['with both tokens joined', `Bearer ${TOKEN},${SECOND_TOKEN}`],
      ['with the token and no scheme', TOKEN],
      ['with the Basic scheme', `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`],
      ['with "Bearer" and no token', 'Bearer'],
      ['with "Bearer " and no token', 'Bearer '],
      ['with two spaces before the token', `Bearer  ${TOKEN}`],
      ['with a second word after the token', `Bearer ${TOKEN} extra`],
      ['with no space after Bearer', `Bearer${TOKEN}`],
    ])('refuses POST %s and stores nothing', async (_label, authorization) => {
      await nothingStored(async () => {
        const res = await post(VALID, authorization);
        expect(envelope(res, 401, 'UNAUTHENTICATED')).toEqual(unauthenticated);
      });
    });

    it('refuses GET without a valid token, even for a volume that exists', async () => {
      const created = await post({ ...VALID, name: 'secret' }).expect(201);
      expect(envelope(await get(created.body.id, null), 401, 'UNAUTHENTICATED')).toEqual(unauthenticated);
      expect(envelope(await get(created.body.id, 'Bearer not-the-right-token-at-all'), 401, 'UNAUTHENTICATED')).toEqual(
        unauthenticated,
      );
    });

    it('authenticates before validating: an invalid body without a token is a 401', async () => {
      await nothingStored(async () => {
        const res = await post({ size_gib: 0, storage_class: 'ssd', extra: true }, null);
        expect(envelope(res, 401, 'UNAUTHENTICATED')).toEqual(unauthenticated);
        const io1 = await post({ ...VALID, storage_class: 'io1' }, null);
        expect(envelope(io1, 401, 'UNAUTHENTICATED')).toEqual(unauthenticated);
      });
    });
  });

  describe('404 NOT_FOUND', () => {
    it('answers an unknown id with NOT_FOUND', async () => {
      const id = '3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b';
      await nothingStored(async () => {
        expect(envelope(await get(id), 404, 'NOT_FOUND')).toEqual({
          code: 'NOT_FOUND',
          message: `no volume ${id}`,
          details: { id },
        });
      });
    });

    it.each(['not-a-uuid', '12345', '3f1c2a4e5b6d4e7f8a9b0c1d2e3f4a5b', "x' OR '1'='1"])(
      'answers a non-uuid id (%s) with NOT_FOUND',
      async (id) => {
        await nothingStored(async () => {
          const error = envelope(await get(encodeURIComponent(id)), 404, 'NOT_FOUND');
          expect(error.details).toEqual({ id });
        });
      },
    );

    it('answers an unknown route with NOT_FOUND in the same envelope', async () => {
      const res = await request(t.app.server).get('/v1/nothing-here').set('Authorization', `Bearer ${TOKEN}`);
      envelope(res, 404, 'NOT_FOUND');
    });
  });

  describe('500 INTERNAL', () => {
    const internal = { code: 'INTERNAL', message: 'internal error', details: {} };

    function expectNoInternals(res: Response): void {
      expect(envelope(res, 500, 'INTERNAL')).toEqual(internal);
      for (const leak of [
        'INSERT',
        'SELECT',
        'volume_',
        'relation',
        'violates',
        'constraint',
        'Query',
        'stack',
        'node_modules',
      ]) {
        expect(res.text).not.toContain(leak);
      }
      expect(res.text).not.toMatch(/\bat .*:\d+:\d+/);
    }

    it('answers an unexpected database error with INTERNAL, no SQL and no stack, and stores nothing', async () => {
      const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      jest.spyOn(console, 'log').mockImplementation(() => undefined); // TypeORM logs the failed query
      await t.dataSource.query(`ALTER TABLE volume ADD CONSTRAINT volume_refuses_boom CHECK (name <> 'boom')`);
      try {
        await nothingStored(async () => {
          expectNoInternals(await post({ ...VALID, name: 'boom' }));
        });
      } finally {
        await t.dataSource.query(`ALTER TABLE volume DROP CONSTRAINT volume_refuses_boom`);
      }
      // The details go to the log, not to the client.
      expect(logged).toHaveBeenCalledWith(
        expect.objectContaining({
          err: expect.objectContaining({ message: expect.stringContaining('volume_refuses_boom') }),
        }),
        'unexpected error',
      );
      await post({ ...VALID, name: 'boom' }).expect(201);
    });

    it('answers a missing table with INTERNAL, no SQL and no stack, on POST and GET', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      jest.spyOn(console, 'log').mockImplementation(() => undefined); // TypeORM logs the failed query
      const existing = await post({ ...VALID, name: 'before-drop' }).expect(201);
      const before = await dumpDatabase(t.dataSource);
      await t.dataSource.query('ALTER TABLE volume RENAME TO volume_hidden_by_test');
      try {
        expectNoInternals(await post(VALID));
        expectNoInternals(await get(existing.body.id));
      } finally {
        await t.dataSource.query('ALTER TABLE volume_hidden_by_test RENAME TO volume');
      }
      expect(await dumpDatabase(t.dataSource)).toBe(before);
      expect((await get(existing.body.id).expect(200)).body).toEqual(existing.body);
    });
  });
});

describe('a database where nothing was ever priced', () => {
  const t = useTestDatabase({ app: { env: { API_TOKENS: TOKEN } } });

  it('refuses every storage class with 409 PRODUCT_UNAVAILABLE (no current price), not as unknown', async () => {
    for (const storageClass of ['gp1', 'st1', 'io1']) {
      const res = await request(t.app.server)
        .post('/v1/volumes')
        .set('Authorization', `Bearer ${TOKEN}`)
        .send({ ...VALID, storage_class: storageClass });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('PRODUCT_UNAVAILABLE');
      expect(res.body.error.details).toEqual({ product_key: `storage.${storageClass}` });
    }
  });
});
