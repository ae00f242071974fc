import { Command, CommanderError } from 'commander';
import { backfillCommand } from './commands/backfill.js';
import { checkConfigCommand } from './commands/check-config.js';
import { emulatorCommand } from './commands/emulator.js';
import { migrateCommand } from './commands/migrate.js';
import { startCommand } from './commands/start.js';
import { statusCommand } from './commands/status.js';
import { workerCommand } from './commands/worker.js';
import { EXIT, ServiceUnavailableError, UsageError } from './exit.js';

export function buildProgram(): Command {
  const program = new Command('gateway-ingest')
    .description('Lossless ingestion of the market gateway\'s earthquake and economic indicator data into PostgreSQL')
    .showHelpAfterError()
    // Options after a subcommand belong to it: `backfill --inline` and `backfill indicators --inline`
    // declare the same flags, and without this the parent would take them from the subcommand.
    .enablePositionalOptions()
    .exitOverride();
  for (const command of [migrateCommand(), backfillCommand(), workerCommand(), startCommand(), statusCommand(), checkConfigCommand(), emulatorCommand()]) {
    program.addCommand(command);
  }
  return program;
}

function applyExitOverride(command: Command): void {
  command.exitOverride();
  command.commands.forEach(applyExitOverride);
}

/** Runs the CLI and returns the exit code: 0 success, 1 some work failed, 2 bad usage or input. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  applyExitOverride(program);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n`);
      return EXIT.usage;
    }
    if (e instanceof ServiceUnavailableError) {
      process.stderr.write(`error: ${e.message}\n`);
      return EXIT.failed;
    }
    process.stderr.write(`error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT.failed;
  }
}
