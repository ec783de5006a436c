import type { DataSource } from 'typeorm';
import { cliFailure } from '../cli/cli-failure';
import { preparePriceBookCommand } from '../cli/command-line';
import { commandHelp, globalHelp } from '../cli/help';
import { runPriceBookCommand } from '../cli/price-book-command';
import type { PricingService } from '../services/pricing.service';

export interface CommandLineResult {
  /** The CLI's exit code (docs/price-book-cli.md, "Exit codes"): 0 done, 3 refused, 64 wrong usage, ... */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CommandLineOptions {
  /** Who a write is recorded as, when the command line has no --actor (as PRICING_ACTOR). */
  readonly actor?: string;
  /** The instant `show` and `history` answer at (default: now). */
  readonly now?: Date;
  /**
   * The PricingService of this process (a Nest app or TestingModule on the same database): when the
   * command line resolves, its answers include what the command wrote (it is refreshed first).
   * Without it, a write reaches that PricingService only through NOTIFY, some milliseconds later.
   */
  readonly pricing?: Pick<PricingService, 'refresh'>;
}

/**
 * Runs a price book command line (docs/price-book-cli.md) in this process on a migrated
 * DataSource, as the CLI would: the same checks, output and exit code, for a spec that sets
 * prices the way an operator does (`['import', file]`, `['withdraw', key, '--valid-from', t]`).
 * The database is the caller's; `migrate` has nothing left to do. A PricingService of this process
 * given as `pricing` answers with what the command wrote once this resolves.
 */
export async function runPriceBookCommandLine(
  dataSource: DataSource,
  argv: readonly string[],
  options: CommandLineOptions = {},
): Promise<CommandLineResult> {
  let stdout = '';
  try {
    const command = await preparePriceBookCommand(argv, { environmentActor: () => options.actor });
    if (command.name === 'help') {
      return { code: 0, stdout: command.topic === null ? globalHelp() : commandHelp(command.topic), stderr: '' };
    }
    // The version is the CLI's process's (its package); this command line runs in the caller's.
    if (command.name === 'version') return { code: 0, stdout: '@app/pricing/testing\n', stderr: '' };
    const code = await runPriceBookCommand(
      command,
      dataSource,
      (text) => (stdout += text.toString()),
      options.now ?? new Date(),
    );
    return { code, stdout, stderr: '' };
  } catch (error) {
    const writes =
      argv[0] === 'apply' || argv[0] === 'withdraw' || (argv[0] === 'import' && !argv.includes('--dry-run'));
    const { exit, message } = cliFailure(error, { writes });
    return { code: exit, stdout, stderr: `${message}\n` };
  } finally {
    // After a failure too: a write can commit and fail after (PriceBookCommittedError).
    await options.pricing?.refresh();
  }
}
