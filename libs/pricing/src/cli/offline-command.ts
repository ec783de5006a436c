import { quoteValue } from '../errors/bounded-text';
import { AuditFetchError, auditProblem, type AuditIo } from './audit';
import { auditWithState } from './audit-command';
import { generateCheckpointKey } from './checkpoint-keygen';
import type { OfflineCommand } from './command-line';
import { EXIT, type ExitCode } from './exit-codes';
import { PriceBookFileError } from './price-book-file';

// The commands that use no database (COMMANDS' `offline`): `keygen` makes the checkpoint's key,
// `audit` checks a service's public log (docs/price-history-api.md, "Auditing the log").

/** Where an offline command prints: its result (stdout), and a line for the person (stderr). */
export interface OfflineContext {
  readonly out: (text: string) => void;
  readonly note: (line: string) => void;
  /** HTTP and waiting, for `audit` (default: the global fetch and a timer). */
  readonly io?: AuditIo;
}

const REAL_IO: AuditIo = {
  fetch: (url, init) => fetch(url, init),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/**
 * Runs `keygen` or `audit`; resolves with the exit code: `audit` 0 when the checkpoint verifies
 * and extends the one kept, 1 when the log is not what it claims (said on stderr, as JSON with
 * --json), 5 when the service could not be asked or its copies do not agree yet (a cache behind:
 * run again). A state or key file that cannot be read or written throws PriceBookFileError (3).
 */
export async function runOfflineCommand(command: OfflineCommand, context: OfflineContext): Promise<ExitCode> {
  if (command.name === 'keygen') {
    let verifierKey: string;
    try {
      verifierKey = generateCheckpointKey(command.keyName, command.file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new PriceBookFileError(
        code === 'EEXIST'
          ? `${command.file} exists: keygen never replaces a key (every verifier key given out would fail); choose another file`
          : `cannot write ${quoteValue(command.file)}: ${code ?? (error as Error).message}`,
      );
    }
    context.out(
      command.json ? `${JSON.stringify({ verifier_key: verifierKey, file: command.file })}\n` : `${verifierKey}\n`,
    );
    if (!command.json)
      context.note(
        `the key is in ${command.file} (mode 0600): set PRICING_CHECKPOINT_KEY_FILE to it and PRICING_CHECKPOINT_ORIGIN=${command.keyName}; publish the verifier key above`,
      );
    return EXIT.ok;
  }
  let outcome;
  try {
    outcome = await auditWithState(command.url, command.key, command.stateFile, context.io ?? REAL_IO);
  } catch (error) {
    if (!(error instanceof AuditFetchError)) throw error;
    return said(context, command.json, EXIT.unreachable, 'AUDIT_UNREACHABLE', error.message);
  }
  if (outcome.kind === 'verified') {
    const { origin, size, head } = outcome.checkpoint;
    const result = { origin, size, head: head.toString('base64'), read: outcome.read, state: command.stateFile };
    context.out(
      command.json
        ? `${JSON.stringify(result)}\n`
        : `verified: ${origin} at ${size} changes (head ${result.head}); ${outcome.read} changes read; kept in ${command.stateFile}\n`,
    );
    return EXIT.ok;
  }
  const message = auditProblem(outcome);
  if (outcome.kind === 'behind' || outcome.kind === 'older')
    return said(context, command.json, EXIT.unreachable, 'AUDIT_INCONCLUSIVE', message);
  return said(
    context,
    command.json,
    EXIT.failed,
    outcome.kind === 'rewritten' ? 'HISTORY_REWRITTEN' : 'LOG_INCONSISTENT',
    message,
    {
      ...(outcome.kind === 'rewritten' && {
        position: outcome.position,
        was: { at: outcome.was.at, product_key: outcome.was.productKey, hash: outcome.was.hash },
        now: outcome.now ? { at: outcome.now.at, product_key: outcome.now.productKey, hash: outcome.now.hash } : null,
      }),
    },
  );
}

/** Says why an audit ends without a verified checkpoint, as the CLI's failures are said (cli-failure.ts). */
function said(
  context: OfflineContext,
  json: boolean,
  exit: ExitCode,
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): ExitCode {
  context.note(json ? JSON.stringify({ error: { code, exit_code: exit, message, ...details } }) : `audit: ${message}`);
  return exit;
}
