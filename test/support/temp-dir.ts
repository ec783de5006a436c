import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Alone in its file so that unit specs can use it without loading the app (support/database.ts does).

export interface TempDir {
  readonly path: string;
  /** Writes `content` (text as it is, anything else as JSON) to `name` in it; resolves to its path. */
  write(name: string, content: unknown): Promise<string>;
}

/** A directory of the file's own under the system's temporary one, removed in `afterAll`. */
export function useTempDir(prefix: string): TempDir {
  let path: string | undefined;
  beforeAll(async () => (path = await mkdtemp(join(tmpdir(), `${prefix}-`))));
  afterAll(() => (path ? rm(path, { recursive: true, force: true }) : undefined));
  const dir = {
    get path() {
      if (!path) throw new Error('the directory is made in beforeAll');
      return path;
    },
    async write(name: string, content: unknown): Promise<string> {
      const file = join(dir.path, name);
      await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
      return file;
    },
  };
  return dir;
}
