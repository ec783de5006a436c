import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMANDS, EXIT, type CommandName, type OptionName } from '@app/pricing/cli';

// docs/price-book-cli.md is the reference of every command, option and exit code: each of the
// CLI's (cli/commands.ts, cli/exit-codes.ts) is in it, and its exit codes' table is theirs.

const doc = readFileSync(join(__dirname, '../docs/price-book-cli.md'), 'utf8');

describe('docs/price-book-cli.md, the reference of the CLI', () => {
  it.each(Object.keys(COMMANDS) as CommandName[])('has the command %s in its table of commands', (command) => {
    expect(doc).toMatch(new RegExp(`^\\| \`${command}[ \`]`, 'm'));
  });

  const options = [...new Set(Object.values(COMMANDS).flatMap((spec) => spec.options))] as OptionName[];
  it.each(options)('documents the option --%s', (option) => {
    expect(doc).toContain(`\`--${option}`);
  });

  it('has every exit code, and only those, in its table of exit codes', () => {
    const section = doc.slice(doc.indexOf('## Exit codes'), doc.indexOf('### JSON'));
    const documented = [...section.matchAll(/^\| `(\d+)` +\|/gm)].map((match) => Number(match[1]));
    expect(documented).toEqual(Object.values(EXIT).sort((a, b) => a - b));
  });
});
