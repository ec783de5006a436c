// Types of eslint.layers.mjs, for test/layers.spec.ts.
import type { Linter } from 'eslint';

export declare const PRICING_LAYERS: readonly (readonly string[])[];
export declare const PURE_LAYERS: readonly string[];
export declare const entryPointRule: Linter.Config;
export declare function pricingLayerRules(): Linter.Config[];
