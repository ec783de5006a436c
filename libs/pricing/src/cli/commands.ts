import { EXIT, type ExitCode } from './exit-codes';

// Every command of the price book CLI and every option, once: what the command line accepts
// (command-line.ts), what `help` prints (help.ts), and what docs/price-book-cli.md documents
// (test/cli/help.e2e-spec.ts checks that the two agree).

/** How an operator runs the CLI: the prefix of every example. */
export const INVOCATION = 'npm run -s pricing --';

export type OptionName =
  | 'dry-run'
  | 'plan-out'
  | 'detailed-exitcode'
  | 'json'
  | 'quiet'
  | 'actor'
  | 'reason'
  | 'publish-in'
  | 'lock-timeout'
  | 'organization'
  | 'valid-from'
  | 'valid-until'
  | 'since'
  | 'until'
  | 'product'
  | 'limit'
  | 'provider'
  | 'billing-account'
  | 'billing-period-start'
  | 'billing-period-end'
  | 'as-recorded-at'
  | 'key'
  | 'state'
  | 'help'
  | 'version';

export interface OptionSpec {
  /** The value's name in the usage (`--since <timestamp>`); absent for a flag. */
  readonly value?: string;
  /** A one-letter alias (`-q`). */
  readonly short?: string;
  readonly description: string;
}

/** Every option of every command; a command takes those its spec names, and --help. */
export const OPTIONS: Readonly<Record<OptionName, OptionSpec>> = {
  'dry-run': {
    description:
      'plan only: check the book against the price book in a read-only snapshot and print what would change; nothing is written, no migration is run',
  },
  'plan-out': {
    value: 'plan',
    description: 'with --dry-run: also save the plan to this file (mode 0600), for apply',
  },
  'detailed-exitcode': {
    description: 'with --dry-run: exit 0 when nothing would change, 2 when something would (as terraform plan)',
  },
  json: { description: 'print the result as JSON on stdout, and errors (and the target) as JSON on stderr' },
  quiet: {
    short: 'q',
    description: 'print the summary only, not a line per change, and no progress (large books)',
  },
  actor: {
    value: 'name',
    description: 'who makes the write (1 to 100 of A-Z a-z 0-9 . _ @ + -); default PRICING_ACTOR, else the user name',
  },
  reason: { value: 'text', description: 'why: one line of at most 500 printable characters, kept in the change log' },
  'publish-in': {
    value: 'seconds',
    description:
      "take effect this long after the write begins, instead of the database's default delay plus what a write of this size takes",
  },
  'lock-timeout': {
    value: 'seconds',
    description:
      'how long to wait for the price book while another writer holds it (default 60); the holder is named while waiting',
  },
  organization: { value: 'id', description: "an organization's agreed prices instead of the list price" },
  'valid-from': { value: 'timestamp', description: 'the scheduled price that starts at this instant' },
  'valid-until': { value: 'timestamp', description: 'the scheduled end at this instant' },
  since: { value: 'timestamp', description: 'changes at or after this instant (RFC 3339 with an offset)' },
  until: { value: 'timestamp', description: 'changes before this instant' },
  product: { value: 'product_key', description: 'changes of this product key only' },
  limit: { value: 'n', description: 'the last n changes of the selection (still printed oldest first)' },
  provider: { value: 'name', description: 'ProviderName, PublisherName and InvoiceIssuerName of every row' },
  'billing-account': { value: 'id', description: 'BillingAccountId of usage without an organization' },
  'billing-period-start': { value: 'timestamp', description: 'BillingPeriodStart, in whole seconds' },
  'billing-period-end': { value: 'timestamp', description: 'BillingPeriodEnd, in whole seconds' },
  'as-recorded-at': {
    value: 'timestamp',
    description:
      'price with the book as it was recorded at this instant (not later than now): the same rows after any later write',
  },
  key: {
    value: 'verifier_key',
    description: "the service's verifier key, as its operator publishes it: <name>+<key ID>+<base64 key>",
  },
  state: {
    value: 'file',
    description: 'what the last run verified, kept for the next (made on a first run; mode 0600)',
  },
  help: { short: 'h', description: "print a command's help (or, alone, the list of commands)" },
  version: { description: "print the CLI's version and the schema it migrates to" },
};

export type CommandName =
  | 'import'
  | 'apply'
  | 'export'
  | 'show'
  | 'history'
  | 'changes'
  | 'withdraw'
  | 'verify'
  | 'focus'
  | 'migrate'
  | 'keygen'
  | 'audit'
  | 'help';

export interface CommandSpec {
  /** The arguments after the command's name, as the usage shows them. */
  readonly synopsis: string;
  /** One line, for the list of commands. */
  readonly summary: string;
  /** What it does, a few lines. */
  readonly description: string;
  readonly options: readonly OptionName[];
  readonly examples: readonly string[];
  /** The exit codes it may end with, beside those of every command (64, 130, 143). */
  readonly exits: readonly ExitCode[];
  /** It writes the price book, or plans a write (`import`'s dry run): it says where, and is refused on the embedded PostgreSQL in production. */
  readonly writes: boolean;
  /** It uses no database (`keygen`, `audit`): no target, no configuration of one, no migration. */
  readonly offline?: true;
}

const WRITE_OPTIONS: readonly OptionName[] = ['actor', 'reason', 'publish-in', 'lock-timeout'];
/** What a command that connects may end with: a configuration or a database it cannot use. */
const CONNECTS: readonly ExitCode[] = [EXIT.failed, EXIT.unreachable, EXIT.configuration];

export const COMMANDS: Readonly<Record<CommandName, CommandSpec>> = {
  import: {
    synopsis: '<file> [--dry-run [--plan-out <plan>] [--detailed-exitcode]]',
    summary: 'apply a price book (all of it or nothing), or plan it with --dry-run',
    description:
      'Checks the book, then applies it in one transaction and prints one line per change and a summary. ' +
      '<file> is a path (relative to where the command was typed) or - for stdin. With --dry-run it plans ' +
      'in a read-only snapshot instead: nothing is written, the database is not migrated, and an instant ' +
      'that only the apply gives is shown as "when applied".',
    options: ['dry-run', 'plan-out', 'detailed-exitcode', 'json', 'quiet', ...WRITE_OPTIONS],
    examples: [
      'import --dry-run book.json',
      'import --dry-run --detailed-exitcode book.json   # exit 2 when it would change something',
      'import --dry-run --plan-out plan.json book.json',
      'import book.json --reason "Q1 list-price review"',
      'cat book.json | npm run -s pricing -- import - --quiet',
    ],
    exits: [EXIT.ok, EXIT.changes, EXIT.refused, EXIT.locked, EXIT.notMigrated, ...CONNECTS],
    writes: true,
  },
  apply: {
    synopsis: '<plan> <file>',
    summary: 'apply a book exactly as a reviewed plan says, or nothing',
    description:
      'Applies the book only if it makes exactly the changes of the plan (import --dry-run --plan-out), ' +
      "the price book is still at the plan's version and the book's SHA-256 is the plan's; else refused, " +
      'nothing written. Prints what import prints.',
    options: ['json', 'quiet', ...WRITE_OPTIONS],
    examples: ['apply plan.json book.json --actor ana@example.com --reason "PRC-1234"'],
    exits: [EXIT.ok, EXIT.refused, EXIT.locked, EXIT.notMigrated, ...CONNECTS],
    writes: true,
  },
  export: {
    synopsis: '',
    summary: 'print the whole price book, history included, in the book format',
    description:
      'Prints every record (ended ones too) and the availability of products as a price book file, in a ' +
      'stable order: the same state gives the same bytes, and importing it changes nothing. It is JSON ' +
      'already: --json prints the same.',
    options: ['json'],
    examples: ['export > book.json'],
    exits: [EXIT.ok, EXIT.notMigrated, ...CONNECTS],
    writes: false,
  },
  show: {
    synopsis: '',
    summary: 'print the public price list as GET /v1/pricing serves it now',
    description:
      'Prints the exact body bytes GET /v1/pricing serves now; the products that are priced but not on sale ' +
      'are named on stderr. --json prints { "price_list": <that document>, "products": [...] } instead.',
    options: ['json'],
    examples: ['show', 'show --json | jq .products'],
    exits: [EXIT.ok, EXIT.notMigrated, ...CONNECTS],
    writes: false,
  },
  history: {
    synopsis: '<product_key> [--organization <id>]',
    summary: 'print every record of a price, its availability and its change log',
    description:
      'Prints every record of the list price (or of an organization\u2019s price) of one product key, oldest ' +
      'first, with its status now, whether the product is on sale, then each change with who made it and why.',
    options: ['organization', 'json'],
    examples: ['history compute.g2.4', 'history storage.gp1 --organization org_42 --json'],
    exits: [EXIT.ok, EXIT.notMigrated, ...CONNECTS],
    writes: false,
  },
  changes: {
    synopsis: '[--since <timestamp>] [--until <timestamp>] [--product <product_key>] [--limit <n>]',
    summary: 'print the change log of every price: when, what, who and why',
    description:
      'Prints the change log, oldest first, one line per change: instant, kind, product key, scope, the ' +
      'price as the write left it, actor and reason. --since is inclusive, --until exclusive; --limit keeps ' +
      'the last n. A reader that stops reading (| head) ends it quietly.',
    options: ['since', 'until', 'product', 'limit', 'json'],
    examples: [
      'changes --since 2026-07-01T00:00:00Z --until 2026-10-01T00:00:00Z',
      'changes --product compute.g2.4 --limit 10',
      'changes | head -1',
    ],
    exits: [EXIT.ok, EXIT.notMigrated, ...CONNECTS],
    writes: false,
  },
  withdraw: {
    synopsis: '<product_key> (--valid-from <timestamp> | --valid-until <timestamp>) [--organization <id>]',
    summary: 'withdraw a scheduled price or a scheduled end',
    description:
      'Withdraws what has not taken effect: --valid-from the scheduled price starting then (the price it ' +
      'would have ended gets its end back), --valid-until the scheduled end then (the price is open again).',
    options: ['valid-from', 'valid-until', 'organization', 'json', ...WRITE_OPTIONS],
    examples: [
      'withdraw compute.g2.4 --valid-from 2027-01-01T00:00:00Z --reason "sold as planned"',
      'withdraw storage.gp1 --valid-until 2027-06-01T00:00:00Z --organization org_42',
    ],
    exits: [EXIT.ok, EXIT.refused, EXIT.locked, EXIT.notMigrated, ...CONNECTS],
    writes: true,
  },
  verify: {
    synopsis: '',
    summary: "check the change log's hash chain, and the book against it",
    description:
      'Checks every link of the change log\u2019s hash chain and that the stored prices and availability are ' +
      'what the log says; prints the number of entries and the chain\u2019s head (record it elsewhere).',
    options: ['json'],
    examples: ['verify', 'verify --json >> heads.jsonl'],
    exits: [EXIT.ok, EXIT.notProven, EXIT.notMigrated, ...CONNECTS],
    writes: false,
  },
  focus: {
    synopsis: '<usage.csv> --provider <name> --billing-period-start <timestamp> --billing-period-end <timestamp>',
    summary: 'price a usage file and print FOCUS 1.2 cost rows as CSV',
    description:
      'Prices a usage file (CSV; - for stdin) with the price book as it is now (or as it was recorded at ' +
      '--as-recorded-at: an invoice priced again) and prints FOCUS 1.2 cost rows as CSV (FOCUS\u2019s own ' +
      'format: no --json); all of them, or none when any usage has no price.',
    options: ['provider', 'billing-account', 'billing-period-start', 'billing-period-end', 'as-recorded-at'],
    examples: [
      'focus usage.csv --provider "Example Cloud" --billing-account acct_1 --billing-period-start 2026-03-01T00:00:00Z --billing-period-end 2026-04-01T00:00:00Z > focus.csv',
      'focus usage.csv --provider "Example Cloud" --billing-account acct_1 --billing-period-start 2026-03-01T00:00:00Z --billing-period-end 2026-04-01T00:00:00Z --as-recorded-at 2026-04-02T06:00:00Z',
    ],
    exits: [EXIT.ok, EXIT.refused, EXIT.notMigrated, ...CONNECTS],
    writes: false,
  },
  migrate: {
    synopsis: '',
    summary: 'migrate the database',
    description: 'Runs the pending migrations (as DATABASE_MIGRATION_URL\u2019s role when set) and prints their names.',
    options: ['json'],
    examples: ['migrate', 'migrate --json'],
    // 8: a role that may not migrate a schema behind the code (DATABASE_MIGRATION_URL is the owner's).
    exits: [EXIT.ok, EXIT.notMigrated, ...CONNECTS],
    writes: true,
  },
  keygen: {
    synopsis: '<name> <file>',
    summary: 'make the key that signs the public checkpoint, and print its verifier key',
    description:
      'Makes an Ed25519 key named <name> (the log\u2019s origin, e.g. pricing.example.com/v1/pricing), writes ' +
      'it to <file> (PKCS#8 PEM, mode 0600; an existing file is never replaced) for PRICING_CHECKPOINT_KEY_FILE, ' +
      'and prints its verifier key (<name>+<key ID>+<base64 key>) to publish. Uses no database.',
    options: ['json'],
    examples: ['keygen pricing.example.com/v1/pricing /etc/pricing/checkpoint.pem'],
    exits: [EXIT.ok, EXIT.refused, EXIT.failed],
    writes: false,
    offline: true,
  },
  audit: {
    synopsis: '<url> --key <verifier_key> --state <file>',
    summary: 'check the public change feed against its signed checkpoint, and against what was seen before',
    description:
      'Fetches <url>/checkpoint and verifies its signature, fetches <url>/changes since the last run, ' +
      'recomputes every hash, and keeps the checkpoint when it extends the one kept. Exit 1 when the log ' +
      'is not what it claims: history seen before rewritten (the first change that differs is named), a ' +
      'signature that does not verify, a chain that is not its changes\u2019. Uses no database.',
    options: ['key', 'state', 'json'],
    examples: [
      "audit https://api.example.com/v1/pricing --key 'pricing.example.com/v1/pricing+9a1e124b+AQWHFTXGdTe2rYX4J7c2CtGWLd2+a4AVT6U9bcy0eNiA' --state audit.json",
    ],
    // 1: the log is not what it claims; 5: the service could not be asked, or its copies disagree for now.
    exits: [EXIT.ok, EXIT.failed, EXIT.refused, EXIT.unreachable],
    writes: false,
    offline: true,
  },
  help: {
    synopsis: '[<command>]',
    summary: "print the list of commands, or a command's options, examples and exit codes",
    description: 'The same as <command> --help.',
    options: [],
    examples: ['help', 'help import'],
    exits: [EXIT.ok],
    writes: false,
  },
};

export const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[];

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** The exit codes every command may end with. */
export const EVERY_COMMAND_EXITS: readonly ExitCode[] = [EXIT.usage, EXIT.interrupted, EXIT.terminated];
