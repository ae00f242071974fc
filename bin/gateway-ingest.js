#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` via `prepare`).
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../dist/cli/entry.js', import.meta.url))) {
  process.stderr.write('gateway-ingest is not built: run `npm ci` (or `npm run build`) in its folder first.\n');
  process.exit(2);
}
// entry.js starts tracing (when OTEL_TRACES_EXPORTER asks for it) before it loads the CLI.
const { run } = await import('../dist/cli/entry.js');
process.exitCode = await run(process.argv);
// Every connection was closed (each close bounded) and every record written by now: a socket a
// silent server still holds open must not keep the process alive.
setTimeout(() => process.exit(), 2_000).unref();
