import type { DataSource } from 'typeorm';
import { PriceBookCommittedError, type LockHolder } from '../errors/pricing-error';
import { escapeJson } from '../errors/bounded-text';
import type { ImportReport } from '../price-book/describe-import';
import { formatImportSummary, importChangeLines, importReportJsonParts } from './format-import';
import { changeLines, loggedChangeJson } from './format-changes';
import { formatHistory, historyJson } from './format-history';
import { priceBookParts, printableListBody } from './format-price-book';
import { PrettyJsonArray } from './text-parts';
import type { PriceBookService } from '../services/price-book.service';
import { NO_PROGRESS, type Progress } from '../price-book/progress';
import { formatInstant } from '../core/instant';
import { sortNatural } from '../catalogue/natural-order';
import { describeLockHolder } from '../errors/pricing-error';
import { writePlanFile } from './plan-file';
import { PriceBookReads } from '../database/price-book-reads';
import { DEFAULT_LOCK_TIMEOUT_MS } from '../database/price-book-writes';
import { runFocus } from './focus-command';
import { withPriceBook, withPriceBookContext } from './price-book-cli.module';
import { PriceBookUsageError, type OfflineCommand, type PriceBookCommand } from './command-line';
import { runOfflineCommand } from './offline-command';
import { EXIT, type ExitCode } from './exit-codes';

// The price book CLI's commands, run on a migrated database (docs/price-book-cli.md); their
// command line is read and checked before (command-line.ts).

/** The commands that need the database. */
export type DatabaseCommand = Exclude<
  PriceBookCommand,
  { readonly name: 'help' } | { readonly name: 'version' } | OfflineCommand
>;

/** Where a command prints, and what else its run is given. */
export interface CommandContext {
  /** The command's output: stdout. */
  readonly out: (text: string | Buffer) => void;
  /** A line for the person at the terminal: stderr (never the command's output). */
  readonly note?: (line: string) => void;
  /** Where reading, checking and writing a large book report. */
  readonly progress?: Progress;
  /** Stops a write: rolled back, nothing written (the CLI's Ctrl-C). */
  readonly signal?: AbortSignal;
  /** `import --dry-run` on a database without the price book schema: plan against a first migration's book. */
  readonly withoutSchema?: boolean;
  /** `migrate`: the migrations it ran. */
  readonly migrated?: readonly string[];
}

/**
 * Runs a prepared command on a migrated database at `now` (what `show` shows and `history`
 * calls in force), on an application context of PriceBookCliModule; what it prints goes to
 * `context.out`, progress to `context.progress`. Resolves with the exit code (2: a dry run with
 * `--detailed-exitcode` that would change something). Refusals throw PriceBookRefusedError, with
 * nothing written.
 */
export async function runPriceBookCommand(
  command: DatabaseCommand | OfflineCommand,
  dataSource: DataSource,
  context: CommandContext | ((text: string | Buffer) => void),
  now: Date,
  progress: Progress = NO_PROGRESS,
): Promise<ExitCode> {
  const given = typeof context === 'function' ? { out: context, progress } : context;
  if (command.name === 'keygen' || command.name === 'audit') {
    return runOfflineCommand(command, { out: given.out, note: given.note ?? (() => undefined) });
  }
  if (command.name === 'focus') {
    if (command.asRecordedAt !== null && command.asRecordedAt > now.getTime()) {
      throw new PriceBookUsageError(
        `--as-recorded-at ${formatInstant(command.asRecordedAt)} is later than now: the book as it will be recorded is not known yet`,
        'focus',
      );
    }
    await withPriceBookContext(dataSource, (app) =>
      runFocus(command.file, command.usage, command.billing, app.get(PriceBookReads), given.out, command.asRecordedAt),
    );
    return EXIT.ok;
  }
  return withPriceBook(dataSource, (priceBook) => runOn(priceBook, command, given, now));
}

async function runOn(
  priceBook: PriceBookService,
  command: Exclude<DatabaseCommand, { readonly name: 'focus' }>,
  context: CommandContext,
  now: Date,
): Promise<ExitCode> {
  const { out } = context;
  const note = context.note ?? (() => undefined);
  const progress = context.progress ?? NO_PROGRESS;
  // Said once, when the price book is found locked: who holds it, and how long this write waits.
  const waiting = (timeoutMs: number | undefined) => (holder: LockHolder | undefined) =>
    note(
      `the price book is locked by ${describeLockHolder(holder)}: waiting up to ${(timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS) / 1000} s ` +
        `for it (--lock-timeout)`,
    );
  switch (command.name) {
    case 'import': {
      const result = await priceBook.applyBook(command.book, {
        dryRun: command.dryRun,
        withoutSchema: context.withoutSchema,
        progress,
        signal: context.signal,
        onLocked: waiting(command.author.lockTimeoutMs),
        ...command.author,
      });
      if (command.planOut) await writePlanFile(command.planOut.path, result, command.planOut.bookSha256);
      const saved = command.planOut && !command.json ? `plan saved to ${command.planOut.path}\n` : '';
      printReport(result, command, out, saved);
      return command.detailedExitcode && result.changed ? EXIT.changes : EXIT.ok;
    }
    case 'apply': {
      const result = await priceBook.applyBook(command.book, {
        progress,
        reviewed: command.plan,
        signal: context.signal,
        onLocked: waiting(command.author.lockTimeoutMs),
        ...command.author,
      });
      printReport(result, command, out);
      return EXIT.ok;
    }
    case 'export': {
      // The book format is JSON already: --json prints the same.
      const { records, availability } = await priceBook.book();
      for (const part of priceBookParts(records, availability)) out(part);
      return EXIT.ok;
    }
    case 'show': {
      const [listed, availability] = await Promise.all([priceBook.priceListAt(now), priceBook.availability()]);
      // Control, format and bidirectional characters escaped, every value whole or refused.
      const list = printableListBody(listed);
      const products = sortNatural([...availability], ([key]) => key);
      if (command.json) {
        // The document's own bytes inside: `jq .price_list` gives what GET /v1/pricing serves.
        const rows = products.map(([product_key, on_sale]) => JSON.stringify({ product_key, on_sale }));
        out(`{"price_list":${list.toString('utf8')},"products":[${rows.join(',')}]}\n`);
        return EXIT.ok;
      }
      out(list);
      const off = products.filter(([, onSale]) => !onSale).map(([key]) => key);
      if (off.length > 0) {
        note(`not on sale (ordering them fails with PRODUCT_UNAVAILABLE): ${off.join(', ')}`);
      }
      return EXIT.ok;
    }
    case 'history': {
      const history = await priceBook.history(command.productKey, command.organizationId);
      const print = command.json ? historyJson : formatHistory;
      out(print(history, command.productKey, command.organizationId, now.getTime()));
      return EXIT.ok;
    }
    case 'changes': {
      const range = {
        since: command.since ?? undefined,
        until: command.until ?? undefined,
        productKey: command.productKey ?? undefined,
        last: command.limit ?? undefined,
      };
      if (!command.json) {
        await priceBook.changes(range, (page) => {
          if (page.length > 0) out(changeLines(page));
        });
        return EXIT.ok;
      }
      const document = new PrettyJsonArray(
        {
          since: command.since === null ? null : formatInstant(command.since),
          until: command.until === null ? null : formatInstant(command.until),
          product_key: command.productKey,
          limit: command.limit,
        },
        'changes',
      );
      // JSON escapes for what JSON.stringify leaves raw (U+2028, U+2029, C1, bidirectional controls).
      await priceBook.changes(range, (page) => {
        if (page.length > 0) out(escapeJson(document.add(page.map(loggedChangeJson))));
      });
      out(document.end());
      return EXIT.ok;
    }
    case 'withdraw': {
      const result = await priceBook.withdraw(command.withdrawal, {
        ...command.author,
        signal: context.signal,
        onLocked: waiting(command.author.lockTimeoutMs),
      });
      printCommitted(result, () =>
        out(
          command.json
            ? `${JSON.stringify({ withdrawn_at: result.instant.toISOString(), version: result.version })}\n`
            : `withdrawn at ${result.instant.toISOString()} (version ${result.version})\n`,
        ),
      );
      return EXIT.ok;
    }
    case 'verify': {
      const { entries, head } = await priceBook.verify(progress);
      out(command.json ? `${JSON.stringify({ entries, head })}\n` : `${entries} entries, chain head ${head}\n`);
      return EXIT.ok;
    }
    case 'migrate': {
      const migrated = context.migrated ?? [];
      if (command.json) out(`${JSON.stringify({ migrated })}\n`);
      else
        out(
          migrated.length === 0 ? 'database migrated: nothing to do\n' : `database migrated: ${migrated.join(', ')}\n`,
        );
      return EXIT.ok;
    }
  }
}

/**
 * What `import` and `apply` print: one line per change and a summary (`--quiet`: the summary only),
 * or `--json`; `after` last. Once a write committed, a failure to print says so (printCommitted).
 */
function printReport(
  result: ImportReport & { readonly changed: boolean },
  command: { readonly json: boolean; readonly quiet: boolean; readonly file: string },
  out: (text: string) => void,
  after = '',
): void {
  const summary = formatImportSummary(result, command.file) + after;
  const parts = command.json
    ? importReportJsonParts(result)
    : command.quiet
      ? [summary]
      : withSummary(importChangeLines(result.changes, result.dryRun), summary);
  const print = (): void => {
    for (const part of parts) out(part);
  };
  if (result.changed && !result.dryRun) return printCommitted(result, print);
  print();
}

/**
 * Prints what a committed write did: a failure to print says the change is in force, with its
 * instant and version (PriceBookCommittedError), never "nothing was written" (cli-failure.ts).
 */
function printCommitted(written: { readonly instant: Date; readonly version: string }, print: () => void): void {
  try {
    print();
  } catch (error) {
    throw new PriceBookCommittedError(written.instant, written.version, 'printing it', error);
  }
}

function* withSummary(lines: Iterable<string>, summary: string): Generator<string, void, void> {
  yield* lines;
  yield summary;
}
