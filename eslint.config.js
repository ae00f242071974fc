// Type-aware typescript-eslint, plus import cycles forbidden everywhere. Formatting is Prettier's alone.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier/flat';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
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
    plugins: { 'import-x': importX },
    languageOptions: {
      parserOptions: {
        // Root files that no tsconfig includes get a default project.
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    settings: {
      // no-cycle follows imports into these files, parsed as TypeScript, `./x.js` found as `./x.ts`.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: ['tsconfig.json'] })],
    },
    rules: {
      // Within a layer too: in a cycle, load order decides which import is still undefined.
      'import-x/no-cycle': ['error', { maxDepth: '∞' }],
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
