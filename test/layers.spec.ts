import { ESLint } from 'eslint';
import { join } from 'node:path';
import tseslint from 'typescript-eslint';
import { noImportCircleRules, resolveImportFile } from '../eslint.circles.mjs';
import { PRICING_LAYERS, entryPointRule, pricingLayerRules } from '../eslint.layers.mjs';
import { useTempDir } from './support/temp-dir';

// The lint rule that keeps the pricing library's layers pointing down (eslint.layers.mjs), run on
// sample files: it must fail on an import that runs up, or `npm run lint` would prove nothing.

const eslint = new ESLint({
  cwd: `${__dirname}/..`,
  overrideConfigFile: true,
  overrideConfig: [
    { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
    entryPointRule,
    ...pricingLayerRules(),
  ],
});

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `libs/pricing/src/${file}` });
  return result.messages.map((message) => message.message);
}

describe('the layers of libs/pricing/src', () => {
  it('lists every folder of the library but the test support', () => {
    expect(PRICING_LAYERS.flat().sort()).toEqual(
      [
        'catalogue',
        'cli',
        'core',
        'database',
        'errors',
        'http',
        'metrics',
        'options',
        'price-book',
        'rendering',
        'services',
        'snapshot',
      ].sort(),
    );
  });

  it.each([
    ['core/x.ts', "import { renderPriceList } from '../rendering/price-list-response';"],
    ['database/x.ts', "import { PricingSnapshot } from '../snapshot/pricing-snapshot';"],
    ['snapshot/x.ts', "import type { PricingService } from '../services/pricing.service';"],
    ['http/x.ts', "import { PricingMetrics } from '../metrics/pricing-metrics';"],
    ['http/x.ts', "import { preparePriceBookCommand } from '../cli/price-book-command';"],
    ['catalogue/x.ts', "import { PricingModule } from '../pricing.module';"],
    ['core/x.ts', "import { Injectable } from '@nestjs/common';"],
    ['price-book/x.ts', "import { readFile } from 'node:fs/promises';"],
    ['services/x.ts', "import { something } from '../../../auth/src/x';"],
    // Whatever the depth or the form of the import: the rule resolves it to the layer it names.
    ['database/migrations/x.ts', "import { PricingSnapshot } from '../../snapshot/pricing-snapshot';"],
    ['snapshot/__fixtures__/x.ts', "import { deadline } from '../../http/deadline';"],
    ['snapshot/__fixtures__/x.worker.mjs', "import { deadline } from '../../http/deadline.js';"],
    ['core/x.ts', "import { deadline } from './../http/deadline';"],
    ['core/x.ts', "import { deadline } from '../core/../http/deadline';"],
    ['core/x.ts', "export { deadline } from '../http/deadline';"],
    ['core/x.ts', "export * from '../http/deadline';"],
    ['core/x.ts', "const { deadline } = require('../http/deadline');"],
    ['core/x.ts', "import deadline = require('../http/deadline');"],
    ['core/x.ts', "const http = import('../http/deadline');"],
    ['core/x.ts', 'const http = import(`../http/deadline`);'],
    ['core/x.ts', "type Http = typeof import('../http/deadline');"],
    ['catalogue/x.ts', "import { PricingModule } from '..';"],
    ['metrics/x.ts', "import { seededRandom } from '../testing/seeded-random';"],
    ['price-book/x.ts', "const { readFile } = require('node:fs/promises');"],
    // Inside the library, files import each other directly, never through @app/pricing.
    ['core/x.ts', "import { PricingService } from '@app/pricing';"],
    ['snapshot/x.ts', "import { runPriceBookCommand } from '@app/pricing/cli';"],
    ['services/x.ts', "import { testDatabase } from '@app/pricing/testing';"],
    ['http/x.ts', "import { migrations } from '@app/pricing/migrations';"],
  ])('refuses in %s: %s', async (file, code) => {
    expect(await problems(file, code)).toEqual([expect.stringContaining('import is restricted')]);
  });

  it.each([
    ['rendering/x.ts', "import { buildPriceList } from '../core/build-price-list';"],
    ['services/x.ts', "import { PricingState } from '../snapshot/pricing-state';"],
    ['metrics/x.ts', "import { PriceListAnswerCounts } from '../http/price-list-answer-counts';"],
    ['pricing.module.ts', "import { PricingMetrics } from './metrics/pricing-metrics';"],
    ['core/x.spec.ts', "import { seededRandom } from '../testing/seeded-random';"],
    ['database/migrations/x.ts', "import { parseInstant } from '../../core/instant';"],
    ['snapshot/__fixtures__/x.worker.mjs', "import { renderPriceList } from '../../rendering/price-list-response.js';"],
    ['services/x.ts', "const state = import('../snapshot/pricing-state');"],
    ['services/x.ts', "const { PricingState } = require('./../snapshot/pricing-state');"],
    ['snapshot/x.built-spec.ts', "import { seededRandom } from '../testing/seeded-random';"],
  ])('allows in %s: %s', async (file, code) => {
    expect(await problems(file, code)).toEqual([]);
  });
});

// The lint rule that refuses import circles (eslint.circles.mjs), on files written for it: a circle
// of any length and any form of import fails, a file that imports without a circle passes.
describe('import circles', () => {
  const dir = useTempDir('import-circles');
  // Rooted in the directory, as ESLint lints no file outside its cwd.
  const circles = (): ESLint =>
    new ESLint({
      cwd: dir.path,
      overrideConfigFile: true,
      overrideConfig: [
        { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
        ...noImportCircleRules().map((block) => ({ ...block, files: ['**/*.ts'] })),
      ],
    });

  /** Writes the files (name → source), then lints the first: its messages. */
  async function lintFirst(files: Record<string, string>): Promise<string[]> {
    for (const [name, code] of Object.entries(files)) await dir.write(name, code);
    const [first] = Object.keys(files);
    const [result] = await circles().lintFiles([join(dir.path, first)]);
    return result.messages.map((message) => message.message);
  }

  it.each([
    ['a type-only import back', { 'a1.ts': "import { b } from './b1';", 'b1.ts': "import type { A } from './a1';" }],
    [
      'a circle of three',
      { 'a2.ts': "export * from './b2';", 'b2.ts': "import './c2';", 'c2.ts': "const a = require('./a2');" },
    ],
    ['a dynamic import', { 'a3.ts': "const b = import('./b3');", 'b3.ts': "import { a } from './a3.js';" }],
    ['an import of itself', { 'a4.ts': "import { a } from './a4';" }],
  ])('refuses %s', async (_name, files) => {
    expect(await lintFirst(files)).toEqual([expect.stringMatching(/makes an import circle: .*a\d\.ts → .*a\d\.ts$/)]);
  });

  it('allows imports that never come back', async () => {
    expect(
      await lintFirst({ 'a5.ts': "import { b } from './b5';", 'b5.ts': "import { c } from './c5';", 'c5.ts': '' }),
    ).toEqual([]);
  });

  it('follows the @app/... entry points to their files', () => {
    expect(resolveImportFile('@app/pricing/cli', __filename)).toBe(join(__dirname, '../libs/pricing/src/cli/index.ts'));
    expect(resolveImportFile('./support/temp-dir', __filename)).toBe(join(__dirname, 'support/temp-dir.ts'));
    expect(resolveImportFile('typeorm', __filename)).toBeUndefined();
  });
});
