import { defineConfig } from 'vitest/config';
import { resolve } from './vitest.shared.js';

/**
 * The upgrade suite (`npm run test:upgrade`): the previous release, cloned and installed into the
 * temporary folder on first use, then the current code on the same database and queues. One file;
 * its variants run one after the other, each with its own database and queue prefix.
 */
export default defineConfig({
  resolve,
  test: {
    include: ['test/upgrade/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 300_000,
    // The first run clones and installs the previous release in a beforeAll (its install alone may take minutes).
    hookTimeout: 420_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
