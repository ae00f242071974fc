// Type-aware typescript-eslint. Formatting is Prettier's alone; import cycles are refused by
// test/unit/architecture.test.ts, over the whole checkout, in a fraction of a lint rule's time.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier/flat';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'coverage/**',
      // The launcher only imports the build in dist/.
      'bin/**',
    ],
  },
  {
    files: [
      'src/**/*.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
      'packages/*/src/**/*.ts',
      'packages/*/test/**/*.ts',
      'scripts/*.mjs',
      '*.ts',
      '*.js',
    ],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // Root files that no tsconfig includes get a default project.
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // A promise returned inside try without await skips the catch and the finally.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `const { dropped, ...kept } = x` is how a field is left out, as tsc's noUnusedLocals allows.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // An async callback without await is how a function typed to return a promise returns one (and
      // rejects instead of throwing): style, not a bug.
      '@typescript-eslint/require-await': 'off',
    },
  },
  prettier,
);
