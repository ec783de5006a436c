import { resolve } from 'node:path';

// The processes the tests start run our TypeScript from source, with no build first: Node.js
// loads register.cjs before the file, which compiles each .ts file as it is required.

const ROOT = resolve(__dirname, '../..');

/** The hook that compiles our TypeScript in a process of its own (register.cjs). */
export const REGISTER = resolve(__dirname, 'register.cjs');
/** Node.js's options before a TypeScript file of ours (or before `-e`). */
export const FROM_SOURCE: readonly string[] = ['--require', REGISTER];
/** The service's entry point, as `npm start` runs it built. */
export const MAIN = resolve(ROOT, 'apps/control-plane/src/main.ts');
/** The price book CLI's entry point, as `npm run pricing` runs it built. */
export const CLI = resolve(ROOT, 'apps/control-plane/src/cli.ts');
