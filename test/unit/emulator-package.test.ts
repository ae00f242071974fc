import { describe, expect, it } from 'vitest';
import * as emulator from '@gateway-ingest/emulator';
import { loadEmulator, type EmulatorPackage } from '../../src/cli/emulator-package.js';

describe('the emulator package, as the pipeline loads it', () => {
  it('provides what the pipeline declares it uses (checked by the compiler) and loads', async () => {
    const declared: EmulatorPackage = emulator;
    expect(typeof declared.runEmulatorCli).toBe('function');
    await expect(loadEmulator()).resolves.toBeDefined();
  });
});
