import { defineConfig } from 'vitest/config';
import { resolve } from './vitest.shared.js';
import LongOutageFirst from './test/faults/support/sequencer.js';

/**
 * The crash and fault suite (`npm run test:faults`): private PostgreSQL and Redis per scenario. Three
 * files at a time: the long PostgreSQL outage beside the others, two by two. The scenarios mostly
 * wait on deadlines (under a core of CPU in all), so that answers stay as timely as one by one:
 * 2 min 55 s where two at a time took 4 min 7 s, on a 2-core machine.
 */
export default defineConfig({
  resolve,
  test: {
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/support/build.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 3,
    sequence: { sequencer: LongOutageFirst },
    reporters: ['default'],
  },
});
