import type { DataSource } from 'typeorm';
import { PriceBookCommittedError } from '../errors/pricing-error';
import { escapeJson } from '../errors/bounded-text';
import {
  formatImportSummary,
  importChangeLines,
  importReportJsonParts,
  type ImportReport,
} from '../price-book/describe-import';
import { changeLines, loggedChangeJson } from '../price-book/format-changes';
import { formatHistory, historyJson } from '../price-book/format-history';
import { printableListBody } from '../price-book/format-price-book';
import { PrettyJsonArray } from '../price-book/text-parts';
import type { PriceBookService } from '../services/price-book.service';
import { NO_PROGRESS, type Progress } from '../price-book/progress';
import { formatInstant } from '../core/instant';
import { writePlanFile } from './plan-file';
import { PriceBookReads } from '../database/price-book-reads';
import { runFocus } from './focus-command';
import { withPriceBook, withPriceBookContext } from './price-book-cli.module';
import type { PriceBookCommand } from './command-line';

// The price book CLI's commands, run on a migrated database (docs/price-book-cli.md); their
// command line is read and checked before (command-line.ts).

/** The commands that need the database. */
export type DatabaseCommand = Exclude<PriceBookCommand, { readonly name: 'help' }>;

/**
 * Runs a prepared command on a migrated database at `now` (what `show` shows and `history`
 * calls in force), on an application context of PriceBookCliModule; what it prints goes to `out`,
 * progress to `progress`. Refusals throw PriceBookRefusedError, with nothing written.
 */
export function runPriceBookCommand(
  command: DatabaseCommand,
  dataSource: DataSource,
  out: (text: string | Buffer) => void,
  now: Date,
  progress: Progress = NO_PROGRESS,
): Promise<void> {
  if (command.name === 'focus') {
    return withPriceBookContext(dataSource, (context) =>
      runFocus(command.file, command.usage, command.billing, context.get(PriceBookReads), out),
    );
  }
  return withPriceBook(dataSource, (priceBook) => runOn(priceBook, command, out, now, progress));
}

async function runOn(
  priceBook: PriceBookService,
  command: Exclude<DatabaseCommand, { readonly name: 'focus' }>,
  out: (text: string | Buffer) => void,
  now: Date,
  progress: Progress,
): Promise<void> {
  switch (command.name) {
    case 'import': {
      const result = await priceBook.applyBook(command.book, {
        dryRun: command.dryRun,
        progress,
        ...command.author,
      });
      if (command.planOut) await writePlanFile(command.planOut.path, result, command.planOut.bookSha256);
      const saved = command.planOut && !command.json ? `plan saved to ${command.planOut.path}\n` : '';
      return printReport(result, command, out, saved);
    }
    case 'apply': {
      const result = await priceBook.applyBook(command.book, { progress, reviewed: command.plan, ...command.author });
      return printReport(result, command, out);
    }
    case 'export':
      for (const part of await priceBook.exportInParts()) out(part);
      return;
    case 'show':
      // Control, format and bidirectional characters escaped, every value whole or refused.
      return out(printableListBody(await priceBook.priceListAt(now)));
    case 'history': {
      const history = await priceBook.history(command.productKey, command.organizationId);
      const print = command.json ? historyJson : formatHistory;
      return out(print(history, command.productKey, command.organizationId, now.getTime()));
    }
    case 'changes': {
      const range = { since: command.since ?? undefined, until: command.until ?? undefined };
      if (!command.json) {
        return priceBook.changes(range, (page) => {
          if (page.length > 0) out(changeLines(page));
        });
      }
      const document = new PrettyJsonArray(
        {
          since: command.since === null ? null : formatInstant(command.since),
          until: command.until === null ? null : formatInstant(command.until),
        },
        'changes',
      );
      // JSON escapes for what JSON.stringify leaves raw (U+2028, U+2029, C1, bidirectional controls).
      await priceBook.changes(range, (page) => {
        if (page.length > 0) out(escapeJson(document.add(page.map(loggedChangeJson))));
      });
      return out(document.end());
    }
    case 'withdraw': {
      const result = await priceBook.withdraw(command.withdrawal, command.author);
      return printCommitted(result, () =>
        out(`withdrawn at ${result.instant.toISOString()} (version ${result.version})\n`),
      );
    }
    case 'verify': {
      const { entries, head } = await priceBook.verify(progress);
      return out(command.json ? `${JSON.stringify({ entries, head })}\n` : `${entries} entries, chain head ${head}\n`);
    }
    case 'migrate':
      return out('database migrated\n');
  }
}

/**
 * What `import` and `apply` print: one line per change and a summary, or `--json`; `after` last.
 * Once a write committed, a failure to print says so (printCommitted).
 */
function printReport(
  result: ImportReport & { readonly changed: boolean },
  command: { readonly json: boolean; readonly file: string },
  out: (text: string) => void,
  after = '',
): void {
  const parts = command.json
    ? importReportJsonParts(result)
    : withSummary(importChangeLines(result.changes), formatImportSummary(result, command.file) + after);
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
