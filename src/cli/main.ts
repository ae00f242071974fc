import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { packageRoot } from '../paths.js';
import { backfillCommand } from './commands/backfill.js';
import { checkConfigCommand } from './commands/check-config.js';
import { emulatorCommand } from './commands/emulator.js';
import { migrateCommand } from './commands/migrate.js';
import { planCommand } from './commands/plan.js';
import { startCommand } from './commands/start.js';
import { statusCommand } from './commands/status.js';
import { workerCommand } from './commands/worker.js';
import { EXIT, exitFor } from './exit.js';

/** Read at run time, so the installed package and the source tree report what they are. */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof manifest.version !== 'string') throw new Error('package.json holds no version');
  return manifest.version;
}

export function buildProgram(): Command {
  const program = new Command('gateway-ingest')
    .version(packageVersion(), '-V, --version', 'print the version')
    .description("Lossless ingestion of the market gateway's earthquake and economic indicator data into PostgreSQL")
    .showHelpAfterError()
    // Options after a subcommand belong to it: `backfill --inline` and `backfill indicators --inline`
    // declare the same flags, and without this the parent would take them from the subcommand.
    .enablePositionalOptions()
    .exitOverride();
  for (const command of [
    migrateCommand(),
    backfillCommand(),
    planCommand(),
    workerCommand(),
    startCommand(),
    statusCommand(),
    checkConfigCommand(),
    emulatorCommand(),
  ]) {
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
    const { code, message } = exitFor(e);
    if (message !== null) process.stderr.write(`error: ${message}\n`);
    return code;
  }
}
