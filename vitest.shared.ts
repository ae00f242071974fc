import { fileURLToPath } from 'node:url';

/** Tests run the emulator package from its sources, so they never test a stale build of it. */
export const resolve = {
  alias: {
    '@gateway-ingest/emulator': fileURLToPath(new URL('./packages/emulator/src/index.ts', import.meta.url)),
  },
};
