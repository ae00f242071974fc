import { defineConfig } from 'vitest/config';
import { resolve } from './vitest.shared.js';

export default defineConfig({
  resolve,
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    exclude: ['test/faults/**', 'test/upgrade/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most files wait on PostgreSQL, Redis, the emulator or a child process: three forks keep a
    // 2-core machine busy (vitest's default of cores - 1 would leave one fork waiting alone).
    maxWorkers: 3,
    reporters: ['default'],
  },
});
