// The price book CLI's command line (docs/price-book-cli.md): every command and option checked, and a
// book or plan read, before the database is touched (price-book-command.ts runs the command).
import { lstat, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { explainProductKey } from '../catalogue/catalogue';
import { PricingError, PricingErrorCode } from '../errors/pricing-error';
import { cutText, hasUnprintable, quoteValue } from '../errors/bounded-text';
import { actorProblem, reasonProblem } from '../price-book/author';
import { ORGANIZATION_ID, type PriceBook } from '../price-book/price-book';
import { processUser, type LockOptions, type PublishOptions, type WriteOptions } from '../services/price-book.service';
import type { Withdrawal } from '../price-book/plan-withdrawal';
import { NO_PROGRESS, type Progress } from '../price-book/progress';
import { parseInstant } from '../core/instant';
import { isKeyName, parseVerifierKey, type VerifierKey } from '../core/signed-note';
import {
  COMMAND_NAMES,
  COMMANDS,
  INVOCATION,
  isCommandName,
  OPTIONS,
  type CommandName,
  type OptionName,
} from './commands';
import type { FocusCommandBilling } from './focus-command';
import { planTargetProblem, readPlanFile, type PlanFile } from './plan-file';
import { closest } from './suggest';
import { readUsageFile, type UsageFileRow } from './usage-file';
import {
  DEFAULT_PRICE_BOOK_MAX_BYTES,
  PriceBookFileError,
  readPriceBookFileAndDigest,
  STDIN,
  type ReadPriceBookOptions,
} from './price-book-file';

/**
 * A wrong command line: the CLI prints the message and where to read the usage (`hint`), and exits
 * 64 (exit-codes.ts).
 */
export class PriceBookUsageError extends PricingError {
  constructor(
    message: string,
    /** The command whose help the message points at; none: the list of commands. */
    readonly command?: CommandName,
  ) {
    super(PricingErrorCode.PriceBookUsage, message);
  }

  /** Where to read how it is used: `npm run -s pricing -- <command> --help`. */
  get hint(): string {
    return this.command === undefined
      ? `Run '${INVOCATION} help' for the commands.`
      : `Run '${INVOCATION} ${this.command} --help' for its options and examples.`;
  }
}

/**
 * Who makes a write and why, as the command line and PRICING_ACTOR give them (checked), when it
 * takes effect (`--publish-in`) and how long it waits for the price book (`--lock-timeout`).
 */
export type CommandAuthor = WriteOptions &
  PublishOptions &
  Pick<LockOptions, 'lockTimeoutMs'> & { readonly actor: string };

/** A command of the price book CLI, checked (and its book read) before any database is touched. */
export type PriceBookCommand =
  | { readonly name: 'help'; readonly topic: CommandName | null }
  | { readonly name: 'version' }
  | {
      readonly name: 'import';
      readonly file: string;
      readonly book: PriceBook;
      readonly dryRun: boolean;
      /** `--detailed-exitcode`: a dry run that would change something exits 2. */
      readonly detailedExitcode: boolean;
      readonly json: boolean;
      /** `--quiet`: the summary only. */
      readonly quiet: boolean;
      /** `--plan-out`: where to save the plan of a dry run (resolved), and the SHA-256 of the book's bytes. */
      readonly planOut: { readonly path: string; readonly bookSha256: string } | null;
      readonly author: CommandAuthor;
    }
  | {
      readonly name: 'apply';
      readonly file: string;
      readonly book: PriceBook;
      readonly plan: PlanFile;
      readonly json: boolean;
      readonly quiet: boolean;
      readonly author: CommandAuthor;
    }
  | { readonly name: 'export'; readonly json: boolean }
  | { readonly name: 'show'; readonly json: boolean }
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
      readonly productKey: string | null;
      /** The last `limit` changes of the selection; null: all. */
      readonly limit: number | null;
      readonly json: boolean;
    }
  | {
      readonly name: 'withdraw';
      readonly withdrawal: Withdrawal;
      readonly json: boolean;
      readonly author: CommandAuthor;
    }
  | { readonly name: 'verify'; readonly json: boolean }
  | {
      readonly name: 'focus';
      readonly file: string;
      readonly usage: readonly UsageFileRow[];
      readonly billing: FocusCommandBilling;
      /** `--as-recorded-at` (epoch ms): the book as recorded then; null: as it is now. */
      readonly asRecordedAt: number | null;
    }
  | { readonly name: 'migrate'; readonly json: boolean }
  | OfflineCommand;

/** A command that uses no database (COMMANDS' `offline`). */
export type OfflineCommand =
  | {
      readonly name: 'keygen';
      /** The key's name: the log's origin. */
      readonly keyName: string;
      /** Where the private key goes (resolved). */
      readonly file: string;
      readonly json: boolean;
    }
  | {
      readonly name: 'audit';
      readonly url: string;
      readonly key: VerifierKey;
      /** The state file (resolved). */
      readonly stateFile: string;
      readonly json: boolean;
    };

/** A command line read, before anything it names is read: the command, its arguments and options. */
export interface CommandLine {
  readonly command: Exclude<CommandName, 'help'>;
  readonly args: readonly string[];
  readonly values: Readonly<Partial<Record<OptionName, string | true>>>;
}

/** What reading a command line gives: a command to prepare, or help or the version to print. */
export type ReadCommandLine =
  CommandLine | { readonly command: 'help'; readonly topic: CommandName | null } | { readonly command: 'version' };

/** Every option's name, short aliases included, to what it stands for. */
const OPTION_NAMES: ReadonlyMap<string, OptionName> = new Map(
  (Object.entries(OPTIONS) as [OptionName, (typeof OPTIONS)[OptionName]][]).flatMap(([name, spec]) => [
    [`--${name}`, name] as const,
    ...(spec.short ? [[`-${spec.short}`, name] as const] : []),
  ]),
);

/** Whether `--json` is on the command line, whatever else is wrong with it: errors are JSON then too. */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * Reads a command line: the command (the first argument that is not an option), its arguments and
 * options, which may stand anywhere (`--` ends them). Throws PriceBookUsageError for an unknown
 * command or option (with the closest known one, if any is close), an option of another command,
 * an option given twice, a flag given a value or an option without one. Time linear in the
 * command line's length.
 */
export function readCommandLine(argv: readonly string[]): ReadCommandLine {
  const positionals: string[] = [];
  const values: Partial<Record<OptionName, string | true>> = {};
  const given: string[] = [];
  let optionsEnd = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (optionsEnd || arg === STDIN || !arg.startsWith('-')) {
      positionals.push(arg);
      continue;
    }
    if (arg === '--') {
      optionsEnd = true;
      continue;
    }
    const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const written = equals < 0 ? arg : arg.slice(0, equals);
    const name = OPTION_NAMES.get(written);
    if (name === undefined) {
      given.push(written);
      continue;
    }
    if (values[name] !== undefined) throw new PriceBookUsageError(`${written} is given twice`, commandOf(positionals));
    const spec = OPTIONS[name];
    if (spec.value === undefined) {
      if (equals >= 0) throw new PriceBookUsageError(`${written} takes no value`, commandOf(positionals));
      values[name] = true;
    } else if (equals >= 0) {
      values[name] = arg.slice(equals + 1);
    } else {
      const value = argv[i + 1];
      if (value === undefined || (value.startsWith('--') && value.length > 2)) {
        throw new PriceBookUsageError(
          `${written} needs a value (<${spec.value}>)${value === undefined ? '' : `, not ${quoteValue(value)}; write ${written}=${cutText(value)} if that is the value`}`,
          commandOf(positionals),
        );
      }
      values[name] = value;
      i++;
    }
  }
  const [first, ...args] = positionals;
  if (values.version === true) return { command: 'version' };
  if (first === 'help' || (values.help === true && first === undefined)) {
    const topic = first === 'help' ? args[0] : undefined;
    if (topic === undefined) return { command: 'help', topic: null };
    return { command: 'help', topic: knownCommand(topic) };
  }
  if (first === undefined) throw new PriceBookUsageError('a command is needed');
  const command = knownCommand(first) as Exclude<CommandName, 'help'>;
  if (values.help === true) return { command: 'help', topic: command };
  if (given.length > 0) throw unknownOption(given[0], command);
  for (const name of Object.keys(values) as OptionName[]) {
    if (!COMMANDS[command].options.includes(name) && name !== 'help') {
      const owners = COMMAND_NAMES.filter((other) => COMMANDS[other].options.includes(name));
      throw new PriceBookUsageError(
        `--${name} is not an option of ${command}${owners.length > 0 ? ` (it is one of ${owners.join(', ')})` : ''}`,
        command,
      );
    }
  }
  return { command, args, values };
}

/** The command named `name`, or a usage error that suggests the closest. */
function knownCommand(name: string): CommandName {
  if (isCommandName(name)) return name;
  const near = closest(name, COMMAND_NAMES);
  throw new PriceBookUsageError(`unknown command ${quoteValue(name)}${near ? `; did you mean ${near}?` : ''}`);
}

function commandOf(positionals: readonly string[]): CommandName | undefined {
  return positionals[0] !== undefined && isCommandName(positionals[0]) ? positionals[0] : undefined;
}

function unknownOption(written: string, command: CommandName): PriceBookUsageError {
  const own = COMMANDS[command].options.map((name) => `--${name}`).concat('--help');
  const near = closest(written.startsWith('--') ? written : `--${written.replace(/^-+/, '')}`, own);
  return new PriceBookUsageError(
    `unknown option ${quoteValue(written)} of ${command}${near ? `; did you mean ${near}?` : ''}`,
    command,
  );
}

/** What preparing a command asks of its host, once the command line is known to be right. */
export interface PrepareOptions {
  /** Where reading a book reports. */
  readonly progress?: Progress;
  /** The largest book (and plan) file read, in bytes (PRICE_BOOK_MAX_BYTES). */
  readonly maxBookBytes?: () => number;
  /** The actor of a write without --actor (PRICING_ACTOR); unset or empty: the process's user. */
  readonly environmentActor?: () => string | undefined;
  /** Where relative paths start: where the command was typed. Default: the process's directory. */
  readonly cwd?: string;
  /** What `-` reads: standard input. Absent: `-` is a file of that name. */
  readonly stdin?: NodeJS.ReadableStream;
}

/**
 * Reads the command line (readCommandLine) and what it names; throws PriceBookUsageError, or
 * PriceBookFileError for a bad book or plan. Reading a book reports to `progress`; a book larger
 * than `maxBookBytes()` bytes is refused unread. The host's values (`maxBookBytes`,
 * `environmentActor`) are asked for only once the command line is known to be right (the CLI
 * validates its configuration there: usage errors come first).
 */
export async function preparePriceBookCommand(
  argv: readonly string[],
  options: PrepareOptions = {},
): Promise<PriceBookCommand> {
  const read = readCommandLine(argv);
  if (read.command === 'help') return { name: 'help', topic: read.topic };
  if (read.command === 'version') return { name: 'version' };
  return prepareCommand(read, options);
}

/** The command of a command line that was read, with the files it names read and checked. */
export async function prepareCommand(line: CommandLine, options: PrepareOptions = {}): Promise<PriceBookCommand> {
  const { command, args, values } = line;
  const text = (name: OptionName): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const flag = (name: OptionName): boolean => values[name] === true;
  const usage = (message: string): PriceBookUsageError => new PriceBookUsageError(message, command);
  const json = flag('json');
  const cwd = options.cwd ?? process.cwd();
  const reading = (): ReadPriceBookOptions => ({
    progress: options.progress ?? NO_PROGRESS,
    maxBytes: options.maxBookBytes?.() ?? DEFAULT_PRICE_BOOK_MAX_BYTES,
    cwd,
    stdin: options.stdin,
  });
  const author = (): CommandAuthor => authorOf(values, options.environmentActor ?? (() => undefined), usage);
  switch (command) {
    case 'import': {
      if (args.length !== 1) throw usage('import takes one file (- for standard input)');
      const dryRun = flag('dry-run');
      const planPath = text('plan-out');
      if (planPath !== undefined && !dryRun) throw usage('--plan-out is an option of import --dry-run');
      if (flag('detailed-exitcode') && !dryRun) throw usage('--detailed-exitcode is an option of import --dry-run');
      if (planPath === '' || planPath === STDIN) {
        throw usage('--plan-out takes a file name (stdout carries the plan lines)');
      }
      const checkedAuthor = author();
      const planOut = planPath === undefined ? undefined : resolve(cwd, planPath);
      if (planOut !== undefined)
        await checkPlanTarget(planOut, args[0] === STDIN ? undefined : resolve(cwd, args[0]), usage);
      const { book, sha256 } = await readPriceBookFileAndDigest(args[0], reading());
      return {
        name: 'import',
        file: args[0],
        book,
        dryRun,
        detailedExitcode: flag('detailed-exitcode'),
        json,
        quiet: flag('quiet'),
        planOut: planOut === undefined ? null : { path: planOut, bookSha256: sha256 },
        author: checkedAuthor,
      };
    }
    case 'apply': {
      if (args.length !== 2) throw usage('apply takes a plan file and a book file');
      const [planPath, file] = args;
      if (planPath === STDIN && file === STDIN)
        throw usage('only one of the plan and the book can be - (standard input)');
      const checkedAuthor = author();
      const plan = await readPlanFile(planPath, reading());
      const { book, sha256 } = await readPriceBookFileAndDigest(file, reading());
      if (sha256 !== plan.bookSha256) {
        throw new PriceBookFileError(
          `${file} is not the book ${planPath} was planned from: its SHA-256 is ${sha256}, the plan's is ` +
            `${plan.bookSha256}; refused, nothing was written (plan this book: import --dry-run --plan-out)`,
        );
      }
      return { name: 'apply', file, book, plan, json, quiet: flag('quiet'), author: checkedAuthor };
    }
    case 'export':
    case 'show':
    case 'migrate':
    case 'verify':
      if (args.length > 0) throw usage(`${command} takes no arguments`);
      return { name: command, json };
    case 'history':
      return { name: 'history', ...scopeOf('history', args, text('organization'), usage), json };
    case 'changes': {
      if (args.length > 0) throw usage('changes takes no arguments (a product key is --product)');
      const since = optional(text('since'), (value) => instantOption('--since', value, usage));
      const until = optional(text('until'), (value) => instantOption('--until', value, usage));
      if (since !== null && until !== null && since >= until) throw usage('--since must be before --until');
      const productKey = optional(text('product'), (key) => {
        const problem = explainProductKey(key);
        if (problem) throw usage(`--product: ${problem}`);
        return key;
      });
      const limit = optional(text('limit'), (value) => {
        if (!/^[1-9]\d{0,8}$/.test(value)) throw usage(`--limit ${quoteValue(value)}: a whole number from 1`);
        return Number(value);
      });
      return { name: 'changes', since, until, productKey, limit, json };
    }
    case 'withdraw': {
      const withdrawal = withdrawalOf(args, values, usage);
      return { name: 'withdraw', withdrawal, json, author: author() };
    }
    case 'focus': {
      if (args.length !== 1) throw usage('focus takes one usage file (- for standard input)');
      const billing = focusBillingOf(values, usage);
      const asRecordedAt = optional(text('as-recorded-at'), (value) => instantOption('--as-recorded-at', value, usage));
      const usageRows = await readUsageFile(args[0], reading());
      return { name: 'focus', file: args[0], usage: usageRows, billing, asRecordedAt };
    }
    case 'keygen': {
      if (args.length !== 2) throw usage('keygen takes a key name and a file');
      const [keyName, file] = args;
      if (!isKeyName(keyName))
        throw usage(`${quoteValue(keyName)} is no key name: 1 to 256 printable characters, no space, no "+"`);
      if (file === STDIN) throw usage('keygen writes the key to a file of its own, not to standard output');
      return { name: 'keygen', keyName, file: resolve(cwd, file), json };
    }
    case 'audit': {
      if (args.length !== 1) throw usage('audit takes the URL of the price list (https://…/v1/pricing)');
      const url = args[0];
      if (!/^https?:\/\//.test(url) || !URL.canParse(url) || url.length > 2048)
        throw usage(`${quoteValue(url)} is not an http:// or https:// URL`);
      const keyText = text('key');
      if (keyText === undefined) throw usage("audit needs --key, the service's verifier key");
      const key = parseVerifierKey(keyText);
      if ('problem' in key) throw usage(`--key ${quoteValue(keyText)}: ${key.problem}`);
      const state = text('state');
      if (state === undefined || state === '' || state === STDIN)
        throw usage('audit needs --state, the file it keeps what it verified in');
      return { name: 'audit', url, key, stateFile: resolve(cwd, state), json };
    }
  }
}

function optional<T>(value: string | undefined, read: (value: string) => T): T | null {
  return value === undefined ? null : read(value);
}

/**
 * Where `--plan-out` may write: a new file, or a regular file its owner may read and write that is
 * not the book (planTargetProblem: a plan is renamed over its target with mode 0600, so a link, a
 * FIFO, a device, a narrower file or the book itself would be replaced).
 */
async function checkPlanTarget(
  planPath: string,
  bookPath: string | undefined,
  usage: (message: string) => PriceBookUsageError,
): Promise<void> {
  const [target, book] = await Promise.all([
    lstat(planPath).catch(() => undefined),
    bookPath === undefined ? undefined : stat(bookPath).catch(() => undefined),
  ]);
  const problem = planTargetProblem(target);
  if (problem) throw usage(`--plan-out ${quoteValue(planPath)}: ${problem}`);
  if (target && book && target.dev === book.dev && target.ino === book.ino) {
    throw usage(`--plan-out ${quoteValue(planPath)}: that is the book; the plan goes to a file of its own`);
  }
}

/** The longest --publish-in and --lock-timeout: a day, in whole seconds. */
const MAX_SECONDS = 86_400;

/** Whole seconds of an option, 0 to a day. */
function secondsOption(option: string, value: string, usage: (message: string) => PriceBookUsageError): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > MAX_SECONDS) {
    throw usage(`${option} ${quoteValue(value)}: a whole number of seconds, at most ${MAX_SECONDS}`);
  }
  return Number(value);
}

/**
 * The actor (--actor, else PRICING_ACTOR, else the process's user) and the reason of a write,
 * checked as the change log checks them (price-book/author.ts), with --publish-in and
 * --lock-timeout: a usage error names what is wrong.
 */
function authorOf(
  values: Partial<Record<OptionName, string | true>>,
  environmentActor: () => string | undefined,
  usage: (message: string) => PriceBookUsageError,
): CommandAuthor {
  const given = (name: OptionName): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const publish = given('publish-in');
  const lock = given('lock-timeout');
  const timing = {
    ...(publish === undefined ? {} : { publishInMs: secondsOption('--publish-in', publish, usage) * 1000 }),
    ...(lock === undefined ? {} : { lockTimeoutMs: secondsOption('--lock-timeout', lock, usage) * 1000 }),
  };
  const candidates: [string | undefined, string][] = [
    [given('actor'), '--actor'],
    [given('actor') === undefined ? environmentActor() || undefined : undefined, 'PRICING_ACTOR'],
  ];
  const [actor, source] = candidates.find(([value]) => value !== undefined) ?? [processUser(), 'the user name'];
  if (actor === undefined) {
    throw usage('a write needs an actor: give --actor or set PRICING_ACTOR (this user has no name)');
  }
  const actorWrong = actorProblem(actor);
  if (actorWrong) {
    const hint = source === 'the user name' ? '; give --actor or set PRICING_ACTOR' : '';
    throw usage(`${source} ${quoteValue(actor)}: ${actorWrong}${hint}`);
  }
  const reason = given('reason');
  const reasonWrong = reason === undefined ? undefined : reasonProblem(reason);
  if (reasonWrong) throw usage(`--reason ${quoteValue(reason!)}: ${reasonWrong}`);
  return reason === undefined ? { actor, ...timing } : { actor, reason, ...timing };
}

/** The longest provider name taken: a name, not a text. */
const MAX_PROVIDER_LENGTH = 200;

/** The billing details of `focus`, checked: a provider, a billing period of whole seconds, an account for list-price usage. */
function focusBillingOf(
  values: Partial<Record<OptionName, string | true>>,
  usage: (message: string) => PriceBookUsageError,
): FocusCommandBilling {
  const given = (name: OptionName): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const provider = given('provider');
  if (provider === undefined) throw usage('focus needs --provider, the ProviderName of its rows');
  if (provider === '' || provider.length > MAX_PROVIDER_LENGTH || hasUnprintable(provider)) {
    throw usage(`--provider ${quoteValue(provider)}: 1 to ${MAX_PROVIDER_LENGTH} printable characters`);
  }
  const period = (option: 'billing-period-start' | 'billing-period-end'): Date => {
    const text = given(option);
    if (text === undefined) throw usage(`focus needs --${option}`);
    const ms = instantOption(`--${option}`, text, usage);
    if (ms % 1000 !== 0) throw usage(`--${option} ${quoteValue(text)}: not a whole second`);
    return new Date(ms);
  };
  const start = period('billing-period-start');
  const end = period('billing-period-end');
  if (start >= end) throw usage('--billing-period-start must be before --billing-period-end');
  const account = given('billing-account');
  if (account !== undefined && !ORGANIZATION_ID.test(account)) {
    throw usage(
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
 * An instant of the command line (`changes --since/--until`, `focus`'s billing period), as epoch
 * milliseconds: it asks about the log, so a leap second is read as the millisecond before the next
 * UTC day, as the change feed reads it.
 */
function instantOption(option: string, text: string, usage: (message: string) => PriceBookUsageError): number {
  const instant = parseInstant(text, { leapSecond: true });
  if (!instant) throw usage(`${option} ${quoteValue(text)}: not an RFC 3339 timestamp with an offset`);
  return instant.getTime();
}

/** The product key and scope of `history` and `withdraw`, checked as the price book checks them. */
function scopeOf(
  command: 'history' | 'withdraw',
  args: readonly string[],
  organization: string | undefined,
  usage: (message: string) => PriceBookUsageError,
): { productKey: string; organizationId: string | null } {
  if (args.length !== 1) throw usage(`${command} takes one product key`);
  const [productKey] = args;
  const problem = explainProductKey(productKey);
  if (problem) throw usage(problem);
  if (organization !== undefined && !ORGANIZATION_ID.test(organization)) {
    throw usage(
      `--organization ${quoteValue(organization)}: 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`,
    );
  }
  return { productKey, organizationId: organization ?? null };
}

function withdrawalOf(
  args: readonly string[],
  values: Partial<Record<OptionName, string | true>>,
  usage: (message: string) => PriceBookUsageError,
): Withdrawal {
  const given = (name: OptionName): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const { productKey, organizationId } = scopeOf('withdraw', args, given('organization'), usage);
  const from = given('valid-from');
  const until = given('valid-until');
  const text = from ?? until;
  if (text === undefined || (from !== undefined && until !== undefined)) {
    throw usage('withdraw takes --valid-from or --valid-until');
  }
  const instant = parseInstant(text)?.getTime();
  if (instant === undefined) throw usage(`${quoteValue(text)} is not an RFC 3339 timestamp with an offset`);
  return from !== undefined
    ? { productKey, organizationId, validFrom: instant }
    : { productKey, organizationId, validUntil: instant };
}
