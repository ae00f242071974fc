import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';

/** The compiled entry point the tests spawn, as an operator runs it (`bin/gateway-ingest.js` loads it). */
export const BUILT_MAIN = join(packageRoot, 'dist/cli/main.js');
const EMULATOR = join(packageRoot, 'packages/emulator');

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function builtMs(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function tsc(project: string): void {
  const compiler = join(packageRoot, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [compiler, '-p', project], { cwd: packageRoot, stdio: 'inherit' });
}

/**
 * Builds dist/ (and the emulator package's, which the spawned CLI imports) when any source is newer,
 * so that tests run against the code in the tree even when vitest is started directly. Spawning the
 * compiled CLI costs about half the CPU of running it from source through tsx, and the suites spawn
 * it hundreds of times.
 */
export function ensureBuilt(): void {
  if (builtMs(join(EMULATOR, 'dist/index.js')) <= newestMtimeMs(join(EMULATOR, 'src'))) {
    tsc(join(EMULATOR, 'tsconfig.json'));
  }
  if (builtMs(BUILT_MAIN) <= newestMtimeMs(join(packageRoot, 'src'))) {
    execFileSync(process.execPath, [join(packageRoot, 'scripts/build.mjs')], { cwd: packageRoot, stdio: 'inherit' });
  }
}

/** vitest globalSetup of the fault suite. */
export default function setup(): void {
  ensureBuilt();
}
