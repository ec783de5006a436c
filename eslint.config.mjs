import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { noImportCircleRules } from './eslint.circles.mjs';
import { entryPointRule, pricingLayerRules } from './eslint.layers.mjs';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.data/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/require-await': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
    },
  },
  // Inside a library, files import each other directly; apps, other libraries and e2e tests
  // only through its entry point (@app/auth, @app/clock, @app/database, @app/pricing, ...).
  entryPointRule,
  // The layers of the pricing library only import downwards (eslint.layers.mjs).
  ...pricingLayerRules(),
  // No file reaches itself through its imports (eslint.circles.mjs).
  ...noImportCircleRules(),
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
      },
    },
  },
  {
    // CommonJS modules (the test processes' TypeScript hook) load theirs with require().
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The price page: its scripts run in the browser, its server (serve.mjs) in Node.js.
    files: ['apps/price-page/**/*.js', 'apps/price-page/**/*.mjs'],
    languageOptions: {
      globals: {
        URL: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        HTMLInputElement: 'readonly',
      },
    },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  prettier,
);
