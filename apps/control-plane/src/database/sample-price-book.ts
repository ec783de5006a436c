import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The sample price book in the repository (found from src/ and from dist/ alike). */
export const SAMPLE_PRICE_BOOK = join(projectRoot(), 'apps', 'control-plane', 'sample', 'price-book.json');

function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
