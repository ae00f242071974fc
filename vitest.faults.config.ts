import { defineConfig } from 'vitest/config';
import { resolve } from './vitest.shared.js';
import LongOutageFirst from './test/faults/support/sequencer.js';

/**
 * The crash and fault suite (`npm run test:faults`): private PostgreSQL and Redis per scenario. Two
 * files at a time: the long PostgreSQL outage (mostly waiting) beside the others, run one by one.
 */
export default defineConfig({
  resolve,
  test: {
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/support/build.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    sequence: { sequencer: LongOutageFirst },
    reporters: ['default'],
  },
});
