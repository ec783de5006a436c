import fc from 'fast-check';
import { expectLinearTime } from '../../../test/support/linear-time';
import { MAX_BODY_DEPTH, nestingDepth, RefuseDeepBodiesPipe } from './validation';
import { ApiError } from './errors/api-error';

/** The depth by recursion, for comparison: what nestingDepth counts without it. */
function depthByRecursion(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthByRecursion));
}

/** `[` n times, then `]` n times: a body nested n deep. */
const nested = (n: number): unknown => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`);

// Request bodies are JSON any client chooses (up to 100 kB): their depth is counted before
// class-transformer, which recurses, sees them (validation.ts).
describe('nestingDepth, on any JSON value', () => {
  it('is the depth, whatever the value, up to its limit', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, limit) => {
        const depth = depthByRecursion(value);
        const counted = nestingDepth(value, limit);
        if (depth <= limit) expect(counted).toBe(depth);
        else expect(counted).toBe(limit + 1); // given up as soon as past it
      }),
    );
  });

  it('counts 49,000 levels without a stack, and in time linear in the body', () => {
    expect(nestingDepth(nested(49_000), 100_000)).toBe(49_000);
    // As a body arrives: its text parsed, then counted.
    expectLinearTime(
      (text) => nestingDepth(JSON.parse(text), Number.MAX_SAFE_INTEGER),
      (n) => `${'['.repeat(Math.floor(n / 2))}${']'.repeat(Math.floor(n / 2))}`,
    );
  });
});

describe('RefuseDeepBodiesPipe', () => {
  const pipe = new RefuseDeepBodiesPipe();
  const body = { type: 'body' } as const;
  const refused = (value: unknown): unknown => {
    try {
      pipe.transform(value, body);
    } catch (error) {
      if (error instanceof ApiError) return error.details;
      throw error;
    }
    return 'passed';
  };

  it('passes bodies up to its depth, and any value that is not a body', () => {
    expect(refused({ name: nested(MAX_BODY_DEPTH - 1) })).toBe('passed');
    expect(refused(nested(MAX_BODY_DEPTH))).toBe('passed');
    expect(pipe.transform(nested(1_000), { type: 'param' })).toEqual(nested(1_000));
  });

  it('refuses deeper ones, naming the fields nested too deep, or the body for an array', () => {
    const message = [`nested more than ${MAX_BODY_DEPTH} levels deep`];
    expect(refused({ name: nested(MAX_BODY_DEPTH), size_gib: 10, tags: nested(49_000) })).toEqual({
      fields: { name: message, tags: message },
    });
    expect(refused(nested(MAX_BODY_DEPTH + 1))).toEqual({ fields: { body: message } });
  });
});
