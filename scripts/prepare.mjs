/* global process */
// `npm ci` runs this: it builds dist/ (scripts/build.mjs, with esbuild, a dependency, so a production
// install from a clone, `npm ci --omit=dev`, builds too), and the emulator package's dist/ where its
// own dependencies and the TypeScript compiler are installed (a development install).
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
const node = (...args) => execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });

if (!resolves('esbuild', 'package.json')) {
  process.stderr.write('gateway-ingest: esbuild is not installed, dist/ not built (run `npm run build`).\n');
} else {
  node(join(root, 'scripts/build.mjs'));
  const dev = !(process.env.npm_config_omit ?? '').split(/[\s,]+/).includes('dev');
  if (dev && resolves('typescript', 'package.json') && resolves('csv-parse/sync', 'packages/emulator/package.json')) {
    node(join(root, 'node_modules/typescript/bin/tsc'), '-p', 'packages/emulator/tsconfig.json');
  }
}
