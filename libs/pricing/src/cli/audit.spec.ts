import { generateKeyPairSync } from 'node:crypto';
import { canonicalJson, chainHash, EMPTY_CHAIN_HEAD } from '../core/feed-chain';
import { checkpointText, parseVerifierKey, signNote, verifierKeyText, type VerifierKey } from '../core/signed-note';
import { audit, auditProblem, type AuditIo, type AuditOutcome } from './audit';
import { auditStateText, parseAuditState, type AuditState } from './audit-state';

// The audit against a log served from memory: its changes, pages of them, and checkpoints signed
// with a key of the test's. What the service serves is checked end to end in test/audit-log.e2e-spec.ts.

const ORIGIN = 'pricing.example.test/v1/pricing';
const BASE = 'https://pricing.example.test/v1/pricing';
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const key = parseVerifierKey(verifierKeyText(ORIGIN, publicKey)) as VerifierKey;

interface Change {
  at: string;
  product_key: string;
  family: string;
  before: null;
  after: { amount: string };
}

const change = (i: number, amount = `0.${i}`): Change => ({
  at: `2027-01-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00Z`,
  product_key: `storage.gp${i}`,
  family: 'block_storage',
  before: null,
  after: { amount },
});

/** A log served from memory: `changes`, pages of `pageSize`, a checkpoint of `size` (all of them by default). */
class FakeLog {
  size: number | undefined;
  requests: string[] = [];
  answers: Response[] = [];
  headOverride: Buffer | undefined;

  constructor(
    public changes: Change[],
    private readonly pageSize = 3,
  ) {}

  served(): { position: number; hash: string }[] {
    let previous = EMPTY_CHAIN_HEAD;
    return this.changes.map((c, position) => {
      previous = chainHash(previous, canonicalJson(c)!);
      return { position, ...c, hash: previous.toString('base64') };
    });
  }

  readonly io: AuditIo = {
    sleep: () => Promise.resolve(),
    fetch: (url) => Promise.resolve(this.answer(url)),
  };

  /** The checkpoint of `size` changes (all of them by default), signed. */
  checkpoint(): Response {
    const served = this.served();
    const size = this.size ?? served.length;
    const head = this.headOverride ?? (size === 0 ? EMPTY_CHAIN_HEAD : Buffer.from(served[size - 1].hash, 'base64'));
    return new Response(signNote(checkpointText({ origin: ORIGIN, size, head }), ORIGIN, privateKey));
  }

  /** The page of changes from `start`. */
  page(start: number): { changes: unknown[]; next: string; has_more: boolean } {
    const served = this.served();
    const page = served.slice(start, start + this.pageSize);
    const next = page.length === 0 ? String(start - 1) : String(start + page.length - 1);
    return { changes: page, next, has_more: start + page.length < served.length };
  }

  private answer(url: string): Response {
    this.requests.push(url);
    const queued = this.answers.shift();
    if (queued) return queued;
    const served = this.served();
    if (url.endsWith('/checkpoint')) {
      const size = this.size ?? served.length;
      const head = this.headOverride ?? (size === 0 ? EMPTY_CHAIN_HEAD : Buffer.from(served[size - 1].hash, 'base64'));
      return new Response(signNote(checkpointText({ origin: ORIGIN, size, head }), ORIGIN, privateKey));
    }
    const after = new URL(url).searchParams.get('after');
    const start = after === null ? 0 : Number(after) + 1;
    const page = served.slice(start, start + this.pageSize);
    const next = page.length === 0 ? (after ?? '-1') : String(start + page.length - 1);
    return Response.json({ changes: page, next, has_more: start + page.length < served.length });
  }
}

async function verified(log: FakeLog, previous?: AuditState): Promise<AuditState> {
  const outcome = await audit(BASE, key, previous, log.io);
  if (outcome.kind !== 'verified') throw new Error(auditProblem(outcome));
  return outcome.state;
}

const problem = (outcome: AuditOutcome) => (outcome.kind === 'verified' ? 'verified' : auditProblem(outcome));

describe('audit', () => {
  it('verifies a log from its start, then only what was added since, page by page', async () => {
    const log = new FakeLog([0, 1, 2, 3, 4, 5, 6].map((i) => change(i)));
    const first = await verified(log);
    expect(first.checkpoint.size).toBe(7);
    expect(first.changes.map((c) => c.productKey)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `storage.gp${i}`));
    log.changes.push(change(7), change(8));
    log.requests = [];
    const second = await verified(log, first);
    expect(second.checkpoint.size).toBe(9);
    expect(log.requests).toEqual([`${BASE}/checkpoint`, `${BASE}/changes?after=6`]);
  });

  it('verifies an empty log, then one that grew from it', async () => {
    const log = new FakeLog([]);
    const empty = await verified(log);
    expect(empty.checkpoint.size).toBe(0);
    log.changes = [0, 1, 2, 3, 4].map((i) => change(i));
    expect((await verified(log, empty)).changes).toHaveLength(5);
  });

  it('reads up to the checkpoint’s size, and keeps nothing of a checkpoint older than the one kept (cached)', async () => {
    const log = new FakeLog([0, 1, 2, 3, 4].map((i) => change(i)));
    log.size = 3;
    const state = await verified(log);
    expect([state.checkpoint.size, state.changes.length]).toEqual([3, 3]); // reading stops with the page that reaches it
    log.size = 5;
    const later = await verified(log, state);
    log.size = 3;
    expect(await audit(BASE, key, later, log.io)).toEqual({ kind: 'older', size: 3, kept: 5 });
  });

  it('names the first change rewritten since the last run, as seen then', async () => {
    const log = new FakeLog([0, 1, 2, 3, 4, 5].map((i) => change(i)));
    const state = await verified(log);
    log.changes[2] = change(2, '0.99');
    log.changes.push(change(6));
    const outcome = await audit(BASE, key, state, log.io);
    expect(outcome).toMatchObject({ kind: 'rewritten', position: 2, was: { productKey: 'storage.gp2' } });
    expect(problem(outcome)).toBe(
      'history was rewritten: the change at position 2 (at "2027-01-03T00:00:00Z", "storage.gp2") shows other prices now',
    );
  });

  it('names the first change gone when the log shrinks', async () => {
    const log = new FakeLog([0, 1, 2, 3].map((i) => change(i)));
    const state = await verified(log);
    log.changes = log.changes.slice(0, 2);
    expect(problem(await audit(BASE, key, state, log.io))).toBe(
      'history was rewritten: the change at position 2 (at "2027-01-03T00:00:00Z", "storage.gp2") is no longer served',
    );
  });

  it('refuses a checkpoint the key did not sign, one the feed does not give, and a hash that is not its change’s', async () => {
    const log = new FakeLog([0, 1, 2].map((i) => change(i)));
    const other = generateKeyPairSync('ed25519').privateKey;
    log.answers.push(
      new Response(signNote(checkpointText({ origin: ORIGIN, size: 0, head: EMPTY_CHAIN_HEAD }), ORIGIN, other)),
    );
    expect(problem(await audit(BASE, key, undefined, log.io))).toMatch(
      /^the log is not what it signs: the checkpoint: no signature of/,
    );

    log.headOverride = Buffer.alloc(32, 1);
    expect(problem(await audit(BASE, key, undefined, log.io))).toMatch(
      /^the log is not what it signs: the checkpoint \(size 3, head AQEB.*\) is not the chain of the changes the feed serves \(3 read\)$/,
    );
    log.headOverride = undefined;

    const served = log.served();
    served[1] = { ...served[1], hash: served[0].hash };
    log.answers.push(
      new Response(
        signNote(
          checkpointText({ origin: ORIGIN, size: 3, head: Buffer.from(served[2].hash, 'base64') }),
          ORIGIN,
          privateKey,
        ),
      ),
      Response.json({ changes: served, next: '2', has_more: false }),
    );
    expect(problem(await audit(BASE, key, undefined, log.io))).toBe(
      'the log is not what it signs: the feed’s change at position 1: its hash is not the hash of the change and the one before it',
    );
  });

  it('says the feed is behind when it serves fewer changes than the checkpoint counts, and keeps nothing', async () => {
    const log = new FakeLog([0, 1].map((i) => change(i)));
    log.size = 3;
    log.headOverride = Buffer.alloc(32, 2);
    expect(await audit(BASE, key, undefined, log.io)).toEqual({ kind: 'behind', served: 2, size: 3 });
  });

  it('waits out a 429 or a 503 with Retry-After, and gives up on other statuses', async () => {
    const log = new FakeLog([change(0)]);
    const waits: number[] = [];
    const io: AuditIo = {
      ...log.io,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    };
    log.answers.push(
      new Response('slow down', { status: 429, headers: { 'retry-after': '7' } }),
      new Response('later', { status: 503, headers: { 'retry-after': '30' } }),
    );
    expect((await audit(BASE, key, undefined, io)).kind).toBe('verified');
    expect(waits).toEqual([7000, 30000]);
    log.answers.push(new Response('gone', { status: 404 }));
    await expect(audit(BASE, key, undefined, io)).rejects.toThrow(`GET ${BASE}/checkpoint answered 404`);
  });

  it('reads no answer past its bound', async () => {
    const log = new FakeLog([]);
    log.answers.push(new Response('x'.repeat(100 * 1024)));
    await expect(audit(BASE, key, undefined, log.io)).rejects.toThrow(
      `${BASE}/checkpoint answered more than 65536 bytes`,
    );
  });

  it('never keeps a state that its next run refuses: a cursor, an instant or a product key longer than a state holds', async () => {
    // A server that did would make every later run refuse the state file: the auditor could only
    // start again from nothing, forgetting the history it saw (what a rewrite needs).
    const hostile: [string, (log: FakeLog) => void, string][] = [
      [
        'a cursor',
        (log) => log.answers.push(log.checkpoint(), Response.json({ ...log.page(0), next: 'x'.repeat(5000) })),
        `${BASE}/changes answered a "next" of 5000 characters: no cursor`,
      ],
      [
        'an instant',
        (log) => (log.changes[1].at = `${'9'.repeat(100)}-01-01T00:00:00Z`),
        'the log is not what it signs: the feed’s change at position 1 has an at or product_key longer than any',
      ],
      [
        'a product key',
        (log) => (log.changes[2].product_key = `storage.${'g'.repeat(2000)}`),
        'the log is not what it signs: the feed’s change at position 2 has an at or product_key longer than any',
      ],
    ];
    for (const [what, serve, message] of hostile) {
      const log = new FakeLog([0, 1, 2].map((i) => change(i)));
      serve(log);
      const outcome = await audit(BASE, key, undefined, log.io).catch((error: Error) => error);
      const said = outcome instanceof Error ? outcome.message : problem(outcome);
      expect({ what, said }).toEqual({ what, said: message });
      if (outcome instanceof Error || outcome.kind !== 'verified') continue;
      expect(parseAuditState(auditStateText(outcome.state), BASE, key)).toEqual(outcome.state);
    }
  });

  it('refuses a page of changes with a name twice in one object: what the chain commits to must be one JSON value', async () => {
    // JSON.parse keeps the last "amount", a client reading the first sees another price: RFC 8785
    // canonicalizes I-JSON only (RFC 7493: names unique).
    const log = new FakeLog([change(0, '0.9')]);
    const [served] = log.served();
    const text = JSON.stringify({ changes: [served], next: '0', has_more: false }).replace(
      '"amount":"0.9"',
      '"amount":"0.1","amount":"0.9"',
    );
    log.answers.push(log.checkpoint(), new Response(text));
    await expect(audit(BASE, key, undefined, log.io)).rejects.toThrow(
      `${BASE}/changes answered JSON with "amount" twice in one object`,
    );
  });

  it('reads nothing for a checkpoint of more changes than an audit holds', async () => {
    const log = new FakeLog([]);
    log.size = 3_000_001;
    log.headOverride = Buffer.alloc(32, 3);
    await expect(audit(BASE, key, undefined, log.io)).rejects.toThrow(
      'the checkpoint counts 3000001 changes, more than an audit holds (3000000)',
    );
    expect(log.requests).toEqual([`${BASE}/checkpoint`]);
  });

  it('keeps the URL without a trailing slash: with or without one, one log', async () => {
    const log = new FakeLog([change(0)]);
    const outcome = await audit(`${BASE}//`, key, undefined, log.io);
    expect(outcome).toMatchObject({ kind: 'verified', state: { url: BASE } });
    expect(log.requests[0]).toBe(`${BASE}/checkpoint`);
  });
});
