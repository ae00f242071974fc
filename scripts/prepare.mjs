/* global process */
// `npm ci` runs this: it builds dist/ whenever the TypeScript compiler is installed (a dependency, so
// a production install from a clone, `npm ci --omit=dev`, builds too: without the type packages,
// which are development dependencies, it compiles without checking types), and the emulator
// package's dist/ where its own dependencies are installed (a development install).
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
/** @type {(name: string, from: string) => boolean} */
const resolves = (name, from) => {
  try {
    createRequire(join(root, from)).resolve(name);
    return true;
  } catch {
    return false;
  }
};
/** @type {(...args: string[]) => void} */
const tsc = (...args) =>
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), ...args], {
    cwd: root,
    stdio: 'inherit',
  });

if (!resolves('typescript', 'package.json')) {
  process.stderr.write('gateway-ingest: no TypeScript compiler installed, dist/ not built (run `npm run build`).\n');
} else if ((process.env.npm_config_omit ?? '').split(/[\s,]+/).includes('dev')) {
  tsc('-p', 'tsconfig.build.json', '--noCheck');
} else {
  tsc('-p', 'tsconfig.build.json');
  if (resolves('csv-parse/sync', 'packages/emulator/package.json')) tsc('-p', 'packages/emulator/tsconfig.json');
}
