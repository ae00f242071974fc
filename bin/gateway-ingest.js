#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` via `prepare`).
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../dist/cli/main.js', import.meta.url))) {
  process.stderr.write('gateway-ingest is not built: run `npm ci` (or `npm run build`) in its folder first.\n');
  process.exit(2);
}
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv);
// Every connection was closed (each close bounded) and every record written by now: a socket a
// silent server still holds open must not keep the process alive.
setTimeout(() => process.exit(), 2_000).unref();
