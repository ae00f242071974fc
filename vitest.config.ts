import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
