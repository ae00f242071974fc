import { UsageError } from '../errors.js';

export type EmulatorPackage = typeof import('@gateway-ingest/emulator');

const PACKAGE = '@gateway-ingest/emulator';

/**
 * The emulator is a development dependency: a production install (`npm ci --omit=dev`, the Docker
 * image) leaves it out, and then the commands that need it say so instead of crashing on an import.
 */
export async function loadEmulator(): Promise<EmulatorPackage> {
  try {
    return await import('@gateway-ingest/emulator');
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
}
