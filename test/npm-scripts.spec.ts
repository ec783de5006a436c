import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

// npm runs a script as `sh -c '<script>'`, and on SIGTERM or SIGINT signals that shell, which does
// not pass it on to a child it waits for: `npm start` stopped by a supervisor would leave the
// service running, its shutdown (docs/operations.md, "Shutdown") never started. A script that
// runs a process of ours `exec`s it, so that the process is npm's own child and gets the signal.

const ROOT = resolve(__dirname, '..');
const { scripts } = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

describe("package.json's long-running scripts", () => {
  it.each(['start', 'page', 'pricing', 'migrate'])('%s execs its process', (name) => {
    // `env` execs node in its place: the process is still npm's child.
    expect(scripts[name]).toMatch(/^exec (env (\w+=\S+ )+)?node /);
  });

  it('start fixes glibc\'s threshold for mapping large allocations (docs/operations.md, "Memory")', () => {
    expect(scripts.start).toMatch(/^exec env MALLOC_MMAP_THRESHOLD_=131072 node /);
  });

  it('start leaves a core to the event loop: V8\'s background threads one fewer than the cores (docs/operations.md, "Threads")', () => {
    expect(scripts.start).toMatch(/ node --v8-pool-size=0 scripts\/built\.mjs /);
  });

  it('a signal to `sh -c` reaches an exec’d process, and not one the shell waits for', async () => {
    /** Whether the process of `sh -c <script>` hears a SIGTERM sent to the shell (it says so, and its pid first). */
    const heard = async (script: string): Promise<boolean> => {
      const shell = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
      let output = '';
      shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      while (!output.includes('\n')) await new Promise((done) => setTimeout(done, 20));
      shell.kill('SIGTERM');
      // Up to 3 s for it to say so (a loaded machine took more than half a second).
      for (let waited = 0; waited < 3_000 && !output.includes('stopped'); waited += 20) {
        await new Promise((done) => setTimeout(done, 20));
      }
      const stopped = output.includes('stopped');
      if (!stopped) {
        // Left running: ended here, unless it has ended already (it did under load, ESRCH).
        try {
          process.kill(Number(/^pid (\d+)/.exec(output)![1]), 'SIGKILL');
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
        }
      }
      return stopped;
    };
    // The handler first, then the pid that says it may be signalled: printed before it, a SIGTERM
    // in between ended the process unheard (seen under CI's load).
    const node =
      `${process.execPath} -e "process.on('SIGTERM', () => { console.log('stopped'); process.exit(143); }); ` +
      `console.log('pid ' + process.pid); setTimeout(() => {}, 10000)"`;
    expect(await heard(`exec ${node}`)).toBe(true);
    expect(await heard(`${node}; true`)).toBe(false);
  });
});
