import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Alone in its file so that unit specs can use it without loading the app (support/database.ts does).

export interface TempDir {
  readonly path: string;
  /** Writes `content` (text as it is, anything else as JSON) to `name` in it; resolves to its path. */
  write(name: string, content: unknown): Promise<string>;
}

/**
 * A new directory under the system's temporary one that other users may pass through but not list
 * (0711, as a home folder): as root, the embedded PostgreSQL runs as the postgres user, which must
 * pass through every folder above its data, and changes no folder it did not make itself.
 */
export async function passableTempDir(prefix: string): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), `${prefix}-`));
  await chmod(path, 0o711);
  return path;
}

/** A directory of the file's own under the system's temporary one (passableTempDir), removed in `afterAll`. */
export function useTempDir(prefix: string): TempDir {
  let path: string | undefined;
  beforeAll(async () => (path = await passableTempDir(prefix)));
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
