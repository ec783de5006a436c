import { rm } from 'node:fs/promises';
// eslint-disable-next-line no-restricted-imports -- loaded outside Jest's module mapping, as the global setup
import type { EmbeddedDatabase } from '../../apps/control-plane/src/database/embedded-postgres';

export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as Record<string, unknown>).__EMBEDDED_PG__ as
    { embedded?: EmbeddedDatabase; dir: string } | undefined;
  if (!started) return;
  await started.embedded?.stop();
  await rm(started.dir, { recursive: true, force: true });
}
