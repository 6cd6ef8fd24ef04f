// Lint rules. The layer rule (no lower layer imports a higher one) is enforced by
// src/architecture.test.ts, which reads the import graph; eslint keeps the pure
// core free of clocks, randomness and I/O (node:crypto hashing is deterministic and allowed).
// Layout is prettier's (`npm run format`): the configs below enable no formatting rule (ESLint 9
// and typescript-eslint 8 dropped them from `recommended`), so no eslint-config-prettier is needed.
// Add no stylistic rule here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const pureLayers = ['src/api/**', 'src/topology/**', 'src/placement/**', 'src/admission/**', 'src/integrations/**'];

export default tseslint.config(
  { ignores: ['node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: pureLayers,
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', '!node:crypto', 'fs', 'path', 'child_process', 'os', 'net', 'http', 'https'],
              message: 'the pure core does no I/O',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'time comes in through a Clock' },
        { object: 'Math', property: 'random', message: 'the core is deterministic' },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'process'],
    },
  },
);
