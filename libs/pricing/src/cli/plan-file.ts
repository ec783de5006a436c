import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parseInstant } from '../core/instant';
import { quoteValue } from '../errors/bounded-text';
import type { ImportReport } from '../price-book/describe-import';
import { parsePlanChange, planChangeJson, planChangeOf, type PlanChange } from '../price-book/reviewed-plan';
import { prettyJsonParts } from './text-parts';
import type { ReviewedPlan } from '../services/price-book.service';
import { PriceBookFileError, parseJsonText, readFileBytes, textOf, type ReadPriceBookOptions } from './price-book-file';

/**
 * The format of a plan file (docs/price-book-cli.md, "Reviewed plans"); a later format gets a new
 * name. pricing-plan/1 wrote the apply's own instants as the dry run's and found them by matching
 * text: it is refused.
 */
export const PLAN_FORMAT = 'pricing-plan/2';

/** Who may read and write a plan file: its owner only (it holds organizations' prices). */
export const PLAN_FILE_MODE = 0o600;

/** A plan file as `apply` reads it: what the service checks, and the book it was made from. */
export interface PlanFile extends ReviewedPlan {
  /** SHA-256 of the book file's bytes, in lowercase hex. */
  readonly bookSha256: string;
}

/**
 * Writes the plan of a dry run of the book whose bytes have SHA-256 `bookSha256`:
 * `{ "format", "book_sha256", "planned_at", "version", "changes" }`, `changes` as `import --json`
 * prints them but for the apply's own instants, written "at apply" (reviewed-plan.ts). Into a new
 * file of mode 0600 beside `path`, renamed over it when complete: `path` is never half written, a
 * failure leaves it as it was, and nothing is ever written through a link or into a FIFO there.
 * What stands at `path` must be nothing or a file a plan may replace (planTargetProblem).
 */
export async function writePlanFile(path: string, report: ImportReport, bookSha256: string): Promise<void> {
  const head = {
    format: PLAN_FORMAT,
    book_sha256: bookSha256,
    planned_at: report.instant.toISOString(),
    version: report.version,
  };
  const partial = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.partial`);
  try {
    // 'wx': a new file, never one that exists (nor a link's target). The umask may only take
    // permissions away: chmod makes the mode 0600 whatever it is.
    const file = await open(partial, 'wx', PLAN_FILE_MODE);
    try {
      await file.chmod(PLAN_FILE_MODE);
      for (const part of prettyJsonParts(head, 'changes', changesJson(report))) {
        await file.write(part);
      }
      await file.sync();
    } finally {
      await file.close();
    }
    // Checked again just before the rename, which replaces what stands at `path` (a link is
    // replaced, not followed): the dry run took a while since the command line was checked.
    const problem = planTargetProblem(await lstat(path).catch(() => undefined));
    if (problem) throw new Error(problem);
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw new PriceBookFileError(`cannot write the plan to ${path}: ${(error as Error).message}`);
  }
}

/**
 * Why a plan may not replace what stands at its path (`lstat` of it; `undefined`: nothing
 * there), or `undefined` when it may: only a regular file, which its owner may read and write. A
 * plan is renamed over it with mode 0600: a link, a FIFO or a device would be replaced rather
 * than written through, and a file of a narrower mode (0400) would be made more open.
 */
export function planTargetProblem(target: Stats | undefined): string | undefined {
  if (target === undefined) return undefined;
  if (!target.isFile()) return 'not a regular file; a plan replaces one or makes a new one';
  const mode = target.mode & 0o777;
  if ((mode & PLAN_FILE_MODE) !== PLAN_FILE_MODE) {
    return (
      `a file of mode ${mode.toString(8).padStart(4, '0')}, which a plan (mode 0600) would make more open; ` +
      'remove it, or write the plan to another file'
    );
  }
  return undefined;
}

function* changesJson(report: ImportReport): Generator<Record<string, unknown>, void, void> {
  for (const change of report.changes) yield planChangeJson(planChangeOf(change));
}

/** The fields of a plan file, as writePlanFile writes them. */
const PLAN_FIELDS: ReadonlySet<string> = new Set(['format', 'book_sha256', 'planned_at', 'version', 'changes']);
const SHA256 = /^[0-9a-f]{64}$/;
const VERSION = /^[1-9][0-9]{0,18}$/;

/** Reads and checks a plan file, bounded as a book is (at most `maxBytes`, a regular file, or `-`: stdin). */
export async function readPlanFile(path: string, options: ReadPriceBookOptions): Promise<PlanFile> {
  return parsePlanFile(parseJsonText(textOf(path, await readFileBytes(path, options)), path), path);
}

/**
 * Checks the JSON of a plan file named `path`: PriceBookFileError naming the first problem, in one
 * line, never another error. Time linear in the size of the JSON.
 */
export function parsePlanFile(json: unknown, path: string): PlanFile {
  const refuse = (problem: string): never => {
    throw new PriceBookFileError(`${path} is not a plan file (${PLAN_FORMAT}): ${problem}; nothing was written`);
  };
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return refuse('it is not a JSON object');
  const plan = json as Record<string, unknown>;
  if (plan.format === 'pricing-plan/1') {
    return refuse(
      `"format" is "pricing-plan/1", which gave the apply's instant as the dry run's; plan again (import --dry-run --plan-out)`,
    );
  }
  if (plan.format !== PLAN_FORMAT) {
    const given = typeof plan.format === 'string' ? quoteValue(plan.format) : 'missing or not a string';
    return refuse(`"format" is ${given}, not "${PLAN_FORMAT}"`);
  }
  // apply reads these fields only: another would be read by a reviewer and ignored by apply.
  const unknown = Object.keys(plan).find((key) => !PLAN_FIELDS.has(key));
  if (unknown !== undefined) {
    return refuse(`it has the field ${quoteValue(unknown)}, which a plan file has not (apply would ignore it)`);
  }
  const { book_sha256: bookSha256, planned_at: plannedAt, version, changes } = plan;
  if (typeof bookSha256 !== 'string' || !SHA256.test(bookSha256)) {
    return refuse('"book_sha256" is not a SHA-256 in lowercase hex');
  }
  const instant = typeof plannedAt === 'string' ? parseInstant(plannedAt) : undefined;
  if (instant === undefined) return refuse('"planned_at" is not an RFC 3339 timestamp with an offset');
  if (typeof version !== 'string' || !VERSION.test(version))
    return refuse('"version" is not a version of the price book');
  if (!Array.isArray(changes)) return refuse('"changes" is not an array');
  const odd = changes.findIndex((change) => typeof change !== 'object' || change === null || Array.isArray(change));
  if (odd >= 0) return refuse(`"changes"[${odd}] is not an object`);
  const read: PlanChange[] = [];
  for (const [index, change] of changes.entries()) {
    const parsed = parsePlanChange(change);
    if ('problem' in parsed) return refuse(`"changes"[${index}]${parsed.problem}`);
    read.push(parsed.change);
  }
  return { bookSha256, plannedAt: instant, version, changes: read };
}
