import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { runCommand, type CliResult } from '../support/cli-process';
import { useTestDatabase } from '../support/database';
import { CLI, FROM_SOURCE } from '../support/source';
import { useTempDir } from '../support/temp-dir';

// The CLI's entry point (cli.ts, through @app/pricing/cli) loads nothing of the HTTP side:
// Swagger, Redis and metrics cost its start-up and an operator runs it many times a day
// (libs/pricing/src/cli/README.md). The CLI runs in a process of its own with a preload that
// records every module it loads (test/support/loaded-modules.cjs).

const RECORDER = resolve(__dirname, '../support/loaded-modules.cjs');
const HTTP_SIDE = ['@nestjs/swagger', 'ioredis', 'prom-client'];

const dir = useTempDir('cli-modules');
const db = useTestDatabase();

/** Runs `node --require <recorder> ...args` from source: its result and the paths of the modules it loaded. */
async function recorded(name: string, args: readonly string[]): Promise<CliResult & { modules: string[] }> {
  const file = join(dir.path, `${name}.txt`);
  const result = await runCommand(process.execPath, ['--require', RECORDER, ...FROM_SOURCE, ...args], {
    DATABASE_URL: db.url,
    LOADED_MODULES_FILE: file,
  });
  return { ...result, modules: (await readFile(file, 'utf8')).split('\n') };
}

/** The packages of HTTP_SIDE among loaded modules' paths. */
const httpSide = (modules: readonly string[]): string[] =>
  HTTP_SIDE.filter((name) => modules.some((path) => path.includes(`/node_modules/${name}/`)));

describe('the CLI process', () => {
  it('--help loads neither @nestjs/swagger, ioredis nor prom-client', async () => {
    const result = await recorded('help', [CLI, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('usage: npm run -s pricing -- <command>');
    expect(result.modules).toContain(resolve(__dirname, '../../libs/pricing/src/cli/index.ts'));
    expect(httpSide(result.modules)).toEqual([]);
  });

  it('an import of an empty book, which connects to the database, loads none of them either', async () => {
    const book = join(dir.path, 'empty.json');
    await writeFile(book, '{}');
    const result = await recorded('import', [CLI, 'import', book]);
    expect(result.code).toBe(0);
    expect(result.modules).toContain(require.resolve('pg'));
    expect(httpSide(result.modules)).toEqual([]);
  });

  it('the recorder sees them where they are loaded: the app module', async () => {
    const appModule = resolve(CLI, '../app.module.ts');
    const result = await recorded('app-module', ['-e', `require(${JSON.stringify(appModule)})`]);
    expect(result.code).toBe(0);
    expect(httpSide(result.modules)).toEqual(HTTP_SIDE);
  });
});
