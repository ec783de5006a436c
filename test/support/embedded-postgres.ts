import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { FROM_SOURCE } from './source';

/** startEmbeddedPostgres, run from source in the child. */
const EMBEDDED_POSTGRES = resolve(__dirname, '../../apps/control-plane/src/database/embedded-postgres.ts');
const RESULT_LINE = 'EMBEDDED_POSTGRES ';

export interface ChildEmbeddedDatabase {
  readonly url: string;
  readonly writerUrl: string;
  readonly migrationUrl: string | undefined;
  readonly superuserUrl: string;
  /** What the prelude left in `globalThis.report`, or null. */
  readonly report: unknown;
  /** What the child wrote to stdout and stderr (its log). */
  output(): string;
  /** Stops the server and the child. */
  stop(): Promise<void>;
  /** Ends the child at once (SIGKILL), its server left as it is: for a server that is gone already. */
  kill(): Promise<void>;
}

/**
 * Runs startEmbeddedPostgres in a child process: under Jest, embedded-postgres (ESM-only)
 * cannot be required in-process (Jest's require refuses ES modules; only the global setup,
 * outside the sandbox, can load it). `prelude` is CommonJS run in the child first; it may leave
 * a JSON value in `globalThis.report`. The child stops the server when its stdin ends.
 */
export function startEmbeddedPostgresInChild(
  dir: string,
  options: { port?: number; prelude?: string; onOutput?: (text: string) => void } = {},
): Promise<ChildEmbeddedDatabase> {
  const script = `
${options.prelude ?? ''}
const { startEmbeddedPostgres } = require(process.argv[1]);
startEmbeddedPostgres(process.argv[2], process.argv[3] ? { port: Number(process.argv[3]) } : {}).then(
  (db) => {
    const result = { url: db.url, writerUrl: db.writerUrl, migrationUrl: db.migrationUrl, superuserUrl: db.superuserUrl, report: globalThis.report ?? null };
    process.stdout.write('${RESULT_LINE}' + JSON.stringify(result) + '\\n');
    process.stdin.on('end', () => db.stop().then(() => process.exit(0)));
    process.stdin.resume();
  },
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
`;
  return new Promise((resolveStart, reject) => {
    const child = spawn(
      process.execPath,
      [...FROM_SOURCE, '-e', script, EMBEDDED_POSTGRES, dir, String(options.port ?? '')],
      {
        cwd: resolve(__dirname, '../..'),
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    let output = '';
    let started = false;
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      options.onOutput?.(chunk.toString());
    });
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      options.onOutput?.(chunk.toString());
      const found = new RegExp(`^${RESULT_LINE}(.+)\\n`, 'm').exec(output);
      if (started || !found) return;
      started = true;
      const result = JSON.parse(found[1]) as Pick<
        ChildEmbeddedDatabase,
        'url' | 'writerUrl' | 'migrationUrl' | 'superuserUrl' | 'report'
      >;
      resolveStart({
        ...result,
        output: () => output,
        stop: () => (child.stdin.end(), exited),
        kill: () => (child.kill('SIGKILL'), exited),
      });
    });
    child.once('exit', (code) => reject(new Error(`embedded PostgreSQL exited (${code}): ${output}`)));
  });
}
