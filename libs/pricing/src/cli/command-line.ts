// The price book CLI's command line (docs/price-book-cli.md): every command and option checked, and a
// book or plan read, before the database is touched (price-book-command.ts runs the command).
import { lstat, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { explainProductKey } from '../catalogue/catalogue';
import { PricingError, PricingErrorCode } from '../errors/pricing-error';
import { cutText, hasUnprintable, MAX_QUOTED_CHARACTERS, quoteValue } from '../errors/bounded-text';
import { actorProblem, reasonProblem } from '../price-book/author';
import { ORGANIZATION_ID, type PriceBook } from '../price-book/price-book';
import { processUser, type PublishOptions, type WriteOptions } from '../services/price-book.service';
import type { Withdrawal } from '../price-book/plan-withdrawal';
import { NO_PROGRESS, type Progress } from '../price-book/progress';
import { parseInstant } from '../core/instant';
import type { FocusCommandBilling } from './focus-command';
import { planTargetProblem, readPlanFile, type PlanFile } from './plan-file';
import { readUsageFile, type UsageFileRow } from './usage-file';
import { DEFAULT_PRICE_BOOK_MAX_BYTES, PriceBookFileError, readPriceBookFileAndDigest } from './price-book-file';

export const PRICE_BOOK_USAGE = `usage: npm run -s pricing -- <command>

  import <file> [--dry-run [--plan-out <plan>]] [--json] [--actor <name>] [--reason <text>] [--publish-in <seconds>]
                       apply a price book (all of it or nothing) and print what changed, one
                       line per change, then a summary; --dry-run checks and writes it exactly
                       as import does, prints the same, then rolls back (nothing is written);
                       --plan-out also saves that plan for apply (mode 0600); --json prints
                       it as JSON
  apply <plan> <file> [--json] [--actor <name>] [--reason <text>] [--publish-in <seconds>]
                       apply a book exactly as planned: refused, nothing written, when the
                       book, the price book's version or the changes differ from the plan's,
                       or the plan says it was made after the apply
  export               print the whole price book (history included) in the import format
  show                 print the public price list as GET /v1/pricing serves it now
  history <product_key> [--organization <id>] [--json]
                       print every record of a list price (or an organization's price), oldest
                       first, with its status now, then each change with who made it and why
  changes [--since <timestamp>] [--until <timestamp>] [--json]
                       print the change log of every price, oldest first: when, what, which
                       price, who and why (--since inclusive, --until exclusive)
  withdraw <product_key> --valid-from <timestamp> [--organization <id>] [--actor <name>] [--reason <text>]
                       withdraw a scheduled price (reopens the price it would have ended)
  withdraw <product_key> --valid-until <timestamp> [--organization <id>] [--actor <name>] [--reason <text>]
                       withdraw a scheduled end
                       (withdraw takes --publish-in too)
  focus <usage.csv> --provider <name> --billing-period-start <timestamp>
        --billing-period-end <timestamp> [--billing-account <id>]
                       price a usage file (CSV: product_key, start, end, and organization_id,
                       quantity or size_gib as its families need) with the price book as it is
                       now, and print FOCUS 1.2 cost rows as CSV: one per usage and price
                       window; refused, no rows printed, when any usage has no price.
                       --billing-account: the account of usage without an organization
  verify [--json]      check every link of the change log's hash chain, and that the stored prices
                       and availability are what the log says; print the number of entries and the
                       chain's head (record it elsewhere to compare later); exit 1 naming the first
                       entry or product key that does not match
  migrate              migrate the database

A write records who made it: --actor, else PRICING_ACTOR, else the operating system's user name
(1 to 100 of A-Z a-z 0-9 . _ @ + -), and why: --reason (optional; one line of at most 500
characters). A write takes effect at its publication instant, after it commits: the database's
default delay (about a second) plus what a book of its size takes to write, or --publish-in
seconds after it begins (a write that cannot commit in time is refused, nothing written).
Options may stand before or after the arguments. On a terminal, reading, checking
and writing a large book show progress on stderr. The database is DATABASE_URL, else the
embedded PostgreSQL in DATA_DIR (default .data/).`;

/** A wrong command line: the CLI prints it with the usage and exits 2. */
export class PriceBookUsageError extends PricingError {
  constructor(message: string) {
    super(PricingErrorCode.PriceBookUsage, message);
  }
}

/**
 * Who makes a write and why, as the command line and PRICING_ACTOR give them (checked), and when it
 * takes effect (`--publish-in`).
 */
export type CommandAuthor = WriteOptions & PublishOptions & { readonly actor: string };

/** A command of the price book CLI, checked (and its book read) before any database is touched. */
export type PriceBookCommand =
  | { readonly name: 'help' }
  | {
      readonly name: 'import';
      readonly file: string;
      readonly book: PriceBook;
      readonly dryRun: boolean;
      readonly json: boolean;
      /** `--plan-out`: where to save the plan of a dry run, and the SHA-256 of the book's bytes. */
      readonly planOut: { readonly path: string; readonly bookSha256: string } | null;
      readonly author: CommandAuthor;
    }
  | {
      readonly name: 'apply';
      readonly file: string;
      readonly book: PriceBook;
      readonly plan: PlanFile;
      readonly json: boolean;
      readonly author: CommandAuthor;
    }
  | { readonly name: 'export' }
  | { readonly name: 'show' }
  | {
      readonly name: 'history';
      readonly productKey: string;
      readonly organizationId: string | null;
      readonly json: boolean;
    }
  | {
      readonly name: 'changes';
      /** Epoch milliseconds. */
      readonly since: number | null;
      readonly until: number | null;
      readonly json: boolean;
    }
  | { readonly name: 'withdraw'; readonly withdrawal: Withdrawal; readonly author: CommandAuthor }
  | { readonly name: 'verify'; readonly json: boolean }
  | {
      readonly name: 'focus';
      readonly file: string;
      readonly usage: readonly UsageFileRow[];
      readonly billing: FocusCommandBilling;
    }
  | { readonly name: 'migrate' };

type OptionName =
  | 'valid-from'
  | 'valid-until'
  | 'organization'
  | 'dry-run'
  | 'json'
  | 'plan-out'
  | 'actor'
  | 'reason'
  | 'since'
  | 'until'
  | 'publish-in'
  | 'provider'
  | 'billing-account'
  | 'billing-period-start'
  | 'billing-period-end';

/** The options each command takes; any other is a usage error. */
const OPTIONS_OF: Readonly<Record<string, readonly OptionName[]>> = {
  import: ['dry-run', 'json', 'plan-out', 'actor', 'reason', 'publish-in'],
  apply: ['json', 'actor', 'reason', 'publish-in'],
  history: ['organization', 'json'],
  changes: ['since', 'until', 'json'],
  withdraw: ['valid-from', 'valid-until', 'organization', 'actor', 'reason', 'publish-in'],
  verify: ['json'],
  focus: ['provider', 'billing-account', 'billing-period-start', 'billing-period-end'],
};
const COMMANDS: ReadonlySet<string> = new Set(Object.keys(OPTIONS_OF).concat('export', 'show', 'migrate'));

/** What preparing a command asks of its host, once the command line is known to be right. */
export interface PrepareOptions {
  /** Where reading a book reports. */
  readonly progress?: Progress;
  /** The largest book (and plan) file read, in bytes (PRICE_BOOK_MAX_BYTES). */
  readonly maxBookBytes?: () => number;
  /** The actor of a write without --actor (PRICING_ACTOR); unset or empty: the process's user. */
  readonly environmentActor?: () => string | undefined;
}

/**
 * Reads the command line; throws PriceBookUsageError, or PriceBookFileError for a bad book or
 * plan. Reading a book reports to `progress`; a book larger than `maxBookBytes()` bytes is refused
 * unread. The host's values (`maxBookBytes`, `environmentActor`) are asked for only once the
 * command line is known to be right (the CLI validates its configuration there: usage errors come
 * first).
 */
export async function preparePriceBookCommand(
  argv: readonly string[],
  options: PrepareOptions = {},
): Promise<PriceBookCommand> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        'valid-from': { type: 'string' },
        'valid-until': { type: 'string' },
        organization: { type: 'string' },
        'dry-run': { type: 'boolean' },
        json: { type: 'boolean' },
        'plan-out': { type: 'string' },
        actor: { type: 'string' },
        reason: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        'publish-in': { type: 'string' },
        provider: { type: 'string' },
        'billing-account': { type: 'string' },
        'billing-period-start': { type: 'string' },
        'billing-period-end': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new PriceBookUsageError(boundArguments((error as Error).message, argv));
  }
  const { positionals, values } = parsed;
  const [command, ...args] = positionals;
  if (values.help) return { name: 'help' };
  if (command === undefined) throw new PriceBookUsageError('a command is needed');
  if (!COMMANDS.has(command)) throw new PriceBookUsageError(`unknown command ${quoteValue(command)}`);
  const allowed = OPTIONS_OF[command] ?? [];
  for (const option of Object.keys(values) as OptionName[]) {
    if (!allowed.includes(option)) throw new PriceBookUsageError(`--${option} is not an option of ${command}`);
  }
  const json = values.json === true;
  const reading = { progress: options.progress ?? NO_PROGRESS, maxBytes: 0 };
  const maxBytes = (): number => options.maxBookBytes?.() ?? DEFAULT_PRICE_BOOK_MAX_BYTES;
  const author = (): CommandAuthor => authorOf(values, options.environmentActor ?? (() => undefined));
  switch (command) {
    case 'import': {
      if (args.length !== 1) throw new PriceBookUsageError('import takes one file');
      const dryRun = values['dry-run'] === true;
      const planPath = values['plan-out'];
      if (planPath !== undefined && !dryRun)
        throw new PriceBookUsageError('--plan-out is an option of import --dry-run');
      if (planPath === '') throw new PriceBookUsageError('--plan-out takes a file name');
      const checkedAuthor = author();
      if (planPath !== undefined) await checkPlanTarget(planPath, args[0]);
      const { book, sha256 } = await readPriceBookFileAndDigest(args[0], { ...reading, maxBytes: maxBytes() });
      const planOut = planPath === undefined ? null : { path: planPath, bookSha256: sha256 };
      return { name: 'import', file: args[0], book, dryRun, json, planOut, author: checkedAuthor };
    }
    case 'apply': {
      if (args.length !== 2) throw new PriceBookUsageError('apply takes a plan file and a book file');
      const checkedAuthor = author();
      const [planPath, file] = args;
      const plan = await readPlanFile(planPath, maxBytes());
      const { book, sha256 } = await readPriceBookFileAndDigest(file, { ...reading, maxBytes: maxBytes() });
      if (sha256 !== plan.bookSha256) {
        throw new PriceBookFileError(
          `${file} is not the book ${planPath} was planned from: its SHA-256 is ${sha256}, the plan's is ` +
            `${plan.bookSha256}; refused, nothing was written (plan this book: import --dry-run --plan-out)`,
        );
      }
      return { name: 'apply', file, book, plan, json, author: checkedAuthor };
    }
    case 'export':
    case 'show':
    case 'migrate':
      if (args.length > 0) throw new PriceBookUsageError(`${command} takes no arguments`);
      return { name: command };
    case 'history':
      return { name: 'history', ...scopeOf('history', args, values.organization), json };
    case 'changes': {
      if (args.length > 0) throw new PriceBookUsageError('changes takes no arguments');
      const since = values.since === undefined ? null : instantOption('--since', values.since);
      const until = values.until === undefined ? null : instantOption('--until', values.until);
      if (since !== null && until !== null && since >= until) {
        throw new PriceBookUsageError('--since must be before --until');
      }
      return { name: 'changes', since, until, json };
    }
    case 'withdraw': {
      const withdrawal = withdrawalOf(args, values);
      return { name: 'withdraw', withdrawal, author: author() };
    }
    case 'verify':
      if (args.length > 0) throw new PriceBookUsageError('verify takes no arguments');
      return { name: 'verify', json };
    case 'focus': {
      if (args.length !== 1) throw new PriceBookUsageError('focus takes one usage file');
      const billing = focusBillingOf(values);
      const usage = await readUsageFile(args[0], { ...reading, maxBytes: maxBytes() });
      return { name: 'focus', file: args[0], usage, billing };
    }
    default:
      throw new PriceBookUsageError(`unknown command ${quoteValue(command)}`);
  }
}

/**
 * Where `--plan-out` may write: a new file, or a regular file its owner may read and write that is
 * not the book (planTargetProblem: a plan is renamed over its target with mode 0600, so a link, a
 * FIFO, a device, a narrower file or the book itself would be replaced).
 */
async function checkPlanTarget(planPath: string, bookPath: string): Promise<void> {
  const [target, book] = await Promise.all([
    lstat(planPath).catch(() => undefined),
    stat(bookPath).catch(() => undefined),
  ]);
  const problem = planTargetProblem(target);
  if (problem) throw new PriceBookUsageError(`--plan-out ${quoteValue(planPath)}: ${problem}`);
  if (target && book && target.dev === book.dev && target.ino === book.ino) {
    throw new PriceBookUsageError(
      `--plan-out ${quoteValue(planPath)}: that is the book; the plan goes to a file of its own`,
    );
  }
}

/**
 * The actor (--actor, else PRICING_ACTOR, else the process's user) and the reason of a write,
 * checked as the change log checks them (price-book/author.ts): a usage error names what is wrong.
 */
function authorOf(
  values: { readonly actor?: string; readonly reason?: string; readonly 'publish-in'?: string },
  environmentActor: () => string | undefined,
): CommandAuthor {
  const publish = values['publish-in'];
  if (publish !== undefined && !/^\d{1,5}$/.test(publish)) {
    throw new PriceBookUsageError(`--publish-in ${quoteValue(publish)}: a whole number of seconds`);
  }
  const publishIn = publish === undefined ? {} : { publishInMs: Number(publish) * 1000 };
  const candidates: [string | undefined, string][] = [
    [values.actor, '--actor'],
    [values.actor === undefined ? environmentActor() || undefined : undefined, 'PRICING_ACTOR'],
  ];
  const [actor, source] = candidates.find(([value]) => value !== undefined) ?? [processUser(), 'the user name'];
  if (actor === undefined) {
    throw new PriceBookUsageError('a write needs an actor: give --actor or set PRICING_ACTOR (this user has no name)');
  }
  const actorWrong = actorProblem(actor);
  if (actorWrong) {
    const hint = source === 'the user name' ? '; give --actor or set PRICING_ACTOR' : '';
    throw new PriceBookUsageError(`${source} ${quoteValue(actor)}: ${actorWrong}${hint}`);
  }
  const reason = values.reason;
  const reasonWrong = reason === undefined ? undefined : reasonProblem(reason);
  if (reasonWrong) throw new PriceBookUsageError(`--reason ${quoteValue(reason!)}: ${reasonWrong}`);
  return reason === undefined ? { actor, ...publishIn } : { actor, reason, ...publishIn };
}

/** The longest provider name taken: a name, not a text. */
const MAX_PROVIDER_LENGTH = 200;

/** The billing details of `focus`, checked: a provider, a billing period of whole seconds, an account for list-price usage. */
function focusBillingOf(values: {
  readonly provider?: string;
  readonly 'billing-account'?: string;
  readonly 'billing-period-start'?: string;
  readonly 'billing-period-end'?: string;
}): FocusCommandBilling {
  const provider = values.provider;
  if (provider === undefined) throw new PriceBookUsageError('focus needs --provider, the ProviderName of its rows');
  if (provider === '' || provider.length > MAX_PROVIDER_LENGTH || hasUnprintable(provider)) {
    throw new PriceBookUsageError(
      `--provider ${quoteValue(provider)}: 1 to ${MAX_PROVIDER_LENGTH} printable characters`,
    );
  }
  const period = (option: 'billing-period-start' | 'billing-period-end'): Date => {
    const text = values[option];
    if (text === undefined) throw new PriceBookUsageError(`focus needs --${option}`);
    const ms = instantOption(`--${option}`, text);
    if (ms % 1000 !== 0) throw new PriceBookUsageError(`--${option} ${quoteValue(text)}: not a whole second`);
    return new Date(ms);
  };
  const start = period('billing-period-start');
  const end = period('billing-period-end');
  if (start >= end) throw new PriceBookUsageError('--billing-period-start must be before --billing-period-end');
  const account = values['billing-account'];
  if (account !== undefined && !ORGANIZATION_ID.test(account)) {
    throw new PriceBookUsageError(
      `--billing-account ${quoteValue(account)}: 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`,
    );
  }
  return {
    providerName: provider,
    billingPeriodStart: start,
    billingPeriodEnd: end,
    listBillingAccountId: account ?? null,
  };
}

/**
 * An instant of `changes --since/--until`, as epoch milliseconds: it asks about the log, so a
 * leap second is read as the millisecond before the next UTC day, as the change feed reads it.
 */
function instantOption(option: string, text: string): number {
  const instant = parseInstant(text, { leapSecond: true });
  if (!instant)
    throw new PriceBookUsageError(`${option} ${quoteValue(text)}: not an RFC 3339 timestamp with an offset`);
  return instant.getTime();
}

/** The product key and scope of `history` and `withdraw`, checked as the price book checks them. */
function scopeOf(
  command: 'history' | 'withdraw',
  args: readonly string[],
  organization: string | undefined,
): { productKey: string; organizationId: string | null } {
  if (args.length !== 1) throw new PriceBookUsageError(`${command} takes one product key`);
  const [productKey] = args;
  const problem = explainProductKey(productKey);
  if (problem) throw new PriceBookUsageError(problem);
  if (organization !== undefined && !ORGANIZATION_ID.test(organization)) {
    throw new PriceBookUsageError(
      `--organization ${quoteValue(organization)}: 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`,
    );
  }
  return { productKey, organizationId: organization ?? null };
}

function withdrawalOf(
  args: readonly string[],
  values: { 'valid-from'?: string; 'valid-until'?: string; organization?: string },
): Withdrawal {
  const { productKey, organizationId } = scopeOf('withdraw', args, values.organization);
  const from = values['valid-from'];
  const until = values['valid-until'];
  const text = from ?? until;
  if (text === undefined || (from !== undefined && until !== undefined)) {
    throw new PriceBookUsageError('withdraw takes --valid-from or --valid-until');
  }
  const instant = parseInstant(text)?.getTime();
  if (instant === undefined) {
    throw new PriceBookUsageError(`${quoteValue(text)} is not an RFC 3339 timestamp with an offset`);
  }
  return from !== undefined
    ? { productKey, organizationId, validFrom: instant }
    : { productKey, organizationId, validUntil: instant };
}

/**
 * parseArgs's message with every long argument it repeats cut (bounded-text.ts): it quotes an
 * unknown option whole, twice, and an option's name before its `=value`.
 */
function boundArguments(message: string, argv: readonly string[]): string {
  const long = argv
    .flatMap((arg) => [arg, arg.split('=')[0]])
    .filter((text) => text.length > MAX_QUOTED_CHARACTERS)
    .sort((a, b) => b.length - a.length);
  for (const text of new Set(long)) message = message.split(text).join(cutText(text));
  return message;
}
