// Types of eslint.circles.mjs, for test/layers.spec.ts.
import type { Linter } from 'eslint';

export declare function noImportCircleRules(): Linter.Config[];
export declare function resolveImportFile(source: string, importer: string): string | undefined;
