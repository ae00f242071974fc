/* global process, URL */
// `npm ci` runs this: it builds dist/ whenever the TypeScript compiler is installed (a dependency, so
// a production install from a clone, `npm ci --omit=dev`, builds too), and the emulator package's
// dist/ where its own dependencies are installed (a development install).
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const resolves = (name, from) => {
  try {
    createRequire(new URL(from, import.meta.url)).resolve(name);
    return true;
  } catch {
    return false;
  }
};
const tsc = (project) =>
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', project], { stdio: 'inherit' });

if (!resolves('typescript', '../package.json')) {
  process.stderr.write('gateway-ingest: no TypeScript compiler installed, dist/ not built (run `npm run build`).\n');
} else {
  tsc('tsconfig.build.json');
  if (resolves('csv-parse/sync', '../packages/emulator/package.json')) tsc('packages/emulator/tsconfig.json');
}
