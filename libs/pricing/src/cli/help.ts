import { COMMAND_NAMES, COMMANDS, EVERY_COMMAND_EXITS, INVOCATION, OPTIONS, type CommandName } from './commands';
import { EXIT, type ExitCode } from './exit-codes';

// What `help`, `--help` and `<command> --help` print (docs/price-book-cli.md is the full reference):
// the commands, or one command's synopsis, options, examples and exit codes, from commands.ts.

/** What each exit code means, in a few words. */
export const EXIT_MEANINGS: Readonly<Record<ExitCode, string>> = {
  [EXIT.ok]: 'done (a dry run: nothing would change, with --detailed-exitcode)',
  [EXIT.failed]: 'failed for another reason; the message says whether anything was written',
  [EXIT.changes]: 'import --dry-run --detailed-exitcode: the book would change the price book',
  [EXIT.refused]: 'refused: the book, plan or usage file, or the change it asks for; nothing written',
  [EXIT.notProven]: 'verify: the change log does not prove the book',
  [EXIT.unreachable]: 'the database cannot be reached, or refused the connection; nothing written',
  [EXIT.locked]: 'another writer held the price book longer than --lock-timeout; nothing written',
  [EXIT.configuration]:
    'the configuration is refused (DATABASE_URL unset with NODE_ENV=production, a bad value, a role that may not write)',
  [EXIT.notMigrated]: 'the database lacks migrations this command does not run (npm run migrate)',
  [EXIT.usage]: 'wrong usage: the message, and where to read the usage',
  [EXIT.interrupted]: 'interrupted (Ctrl-C): the write rolled back, nothing written',
  [EXIT.terminated]: 'terminated (SIGTERM): the write rolled back, nothing written',
};

/** The list of commands, and what every command shares. */
export function globalHelp(): string {
  const width = Math.max(...COMMAND_NAMES.map((name) => name.length));
  const commands = COMMAND_NAMES.map((name) => `  ${name.padEnd(width)}  ${COMMANDS[name].summary}`);
  return [
    `usage: ${INVOCATION} <command> [<args>] [<options>]`,
    '',
    'The price book CLI: set prices, schedule changes and ends, agree organization prices, withdraw',
    'what has not taken effect, and read the change log that proves the book.',
    '',
    'Commands:',
    ...commands,
    '',
    'Options may stand anywhere after the command; -- ends them. A file argument is a path relative to',
    'where the command was typed, or - for standard input.',
    '',
    'Every command that connects prints its target first on stderr (host, port, database, role,',
    'PostgreSQL version, price book version). The database is DATABASE_URL, else the embedded PostgreSQL',
    'under DATA_DIR (default .data), which NODE_ENV=production refuses.',
    '',
    `Run '${INVOCATION} help <command>' (or <command> --help) for its options, examples and exit codes;`,
    `'${INVOCATION} --version' for the version. Exit codes: ${exitList(allExits())}.`,
    'The reference: docs/price-book-cli.md.',
    '',
  ].join('\n');
}

/** One command's help: synopsis, what it does, its options, examples and exit codes. */
export function commandHelp(name: CommandName): string {
  const spec = COMMANDS[name];
  const options = [...spec.options, 'help' as const].map((option) => {
    const { value, short, description } = OPTIONS[option];
    return { left: `${short ? `-${short}, ` : '    '}--${option}${value ? ` <${value}>` : ''}`, description };
  });
  const width = Math.max(...options.map((option) => option.left.length));
  const exits = [...new Set([...spec.exits, ...EVERY_COMMAND_EXITS])].sort((a, b) => a - b);
  return [
    `usage: ${INVOCATION} ${name}${spec.synopsis ? ` ${spec.synopsis}` : ''}${spec.options.length > 0 ? ' [<options>]' : ''}`,
    '',
    ...wrap(spec.description, 100),
    ...(spec.writes
      ? [
          '',
          'It writes the price book: its target is printed first on stderr, and with DATABASE_URL unset it',
          'says it uses the embedded PostgreSQL under DATA_DIR (refused with NODE_ENV=production).',
        ]
      : []),
    '',
    'Options:',
    ...options.map(({ left, description }) => `  ${left.padEnd(width)}  ${description}`),
    '',
    'Examples:',
    ...spec.examples.map((example) => `  ${example.startsWith('cat ') ? example : `${INVOCATION} ${example}`}`),
    '',
    'Exit codes:',
    ...exits.map((code) => `  ${String(code).padStart(3)}  ${EXIT_MEANINGS[code]}`),
    '',
  ].join('\n');
}

function allExits(): ExitCode[] {
  return (Object.values(EXIT) as ExitCode[]).sort((a, b) => a - b);
}

function exitList(codes: readonly ExitCode[]): string {
  return codes.join(', ');
}

/** `text` in lines of at most `width` characters, broken at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}
