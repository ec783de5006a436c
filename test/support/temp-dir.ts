import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Alone in its file so that unit specs can use it without loading the app (support/database.ts does).

/** A directory of the file's own under the system's temporary one, removed in `afterAll`. */
export function useTempDir(prefix: string): { readonly path: string } {
  let path: string | undefined;
  beforeAll(async () => (path = await mkdtemp(join(tmpdir(), `${prefix}-`))));
  afterAll(() => (path ? rm(path, { recursive: true, force: true }) : undefined));
  return {
    get path() {
      if (!path) throw new Error('the directory is made in beforeAll');
      return path;
    },
  };
}
