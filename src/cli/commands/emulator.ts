import { Command } from 'commander';

/**
 * `gateway-ingest emulator ...` hands every word after it to the emulator package, which parses and
 * checks its own flags (its --help lists them).
 */
export function emulatorCommand(): Command {
  return new Command('emulator')
    .description(
      'run a local gateway emulator (earthquake and economic indicator queries) for tests, demos and benchmarks; ' +
        '--help lists its flags',
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[flags...]')
    .action(async (flags: string[]) => {
      const { loadEmulator } = await import('../emulator-package.js');
      const emulator = await loadEmulator();
      process.exitCode = await emulator.runEmulatorCli(flags);
    });
}
