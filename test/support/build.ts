import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';

/** The compiled entry point the tests spawn, as an operator runs it (`bin/gateway-ingest.js` loads it). */
export const BUILT_MAIN = join(packageRoot, 'dist/cli/main.js');

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds dist/ when any source is newer than it, so that tests run against the code in the tree
 * even when vitest is started directly. Spawning the compiled CLI costs about half the CPU of
 * running it from source through tsx, and the suites spawn it hundreds of times.
 */
export function ensureBuilt(): void {
  let builtMs = 0;
  try {
    builtMs = statSync(BUILT_MAIN).mtimeMs;
  } catch {
    // Not built yet.
  }
  if (builtMs > newestMtimeMs(join(packageRoot, 'src'))) return;
  execFileSync(process.execPath, [join(packageRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: packageRoot,
    stdio: 'inherit',
  });
}

/** vitest globalSetup of the fault suite. */
export default function setup(): void {
  ensureBuilt();
}
