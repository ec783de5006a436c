import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { PRICING_LAYERS, entryPointRule, pricingLayerRules } from '../eslint.layers.mjs';

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
