import * as z from 'zod';
import { UsageError } from '../errors.js';

/**
 * What the pipeline uses of the emulator package (the command and the demo). Declared here rather
 * than imported, so that the pipeline builds and runs without the package; a type test checks that
 * the package provides it.
 */
export interface EmulatorPackage {
  runEmulatorCli: (args: readonly string[]) => Promise<number>;
  bundledDataPaths: () => { earthquakeFiles: string[]; indicatorFiles: string[] };
  startEmulator: (options: {
    key: string;
    earthquakeFiles: string[];
    indicatorFiles: string[];
    order: 'newest';
    retryAfterSeconds: number;
  }) => Promise<{
    url: string;
    injectFaults: (kind: 'server_error' | 'rate_limited', count: number) => void;
    close: () => Promise<void>;
  }>;
}

const PACKAGE = '@gateway-ingest/emulator';

const packageShape = z.object({
  runEmulatorCli: z.function(),
  bundledDataPaths: z.function(),
  startEmulator: z.function(),
});

/**
 * The emulator is a development dependency: a production install (`npm ci --omit=dev`, the Docker
 * image) leaves it out, and then the commands that need it say so instead of crashing on an import.
 */
export async function loadEmulator(): Promise<EmulatorPackage> {
  let loaded: unknown;
  try {
    // A specifier in a variable: the compiler does not follow it, so the build needs no package.
    const specifier: string = PACKAGE;
    loaded = await import(specifier);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((e as Error).message).includes(PACKAGE)) {
      throw new UsageError(
        `the gateway emulator (${PACKAGE}) is not installed: a production install leaves it out. ` +
          'Install the development dependencies (`npm ci`) or use the Docker image\'s "demo" target.',
      );
    }
    throw e;
  }
  if (!packageShape.safeParse(loaded).success) {
    throw new UsageError(`${PACKAGE} does not provide runEmulatorCli, bundledDataPaths and startEmulator`);
  }
  return loaded as EmulatorPackage;
}
