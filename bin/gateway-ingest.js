#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` via `prepare`).
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node 22.1 and later keep V8's compiled code on disk (NODE_COMPILE_CACHE, or the temp folder): a
// command after the first skips most of its start-up compiling. Older Node has no such cache.
module.enableCompileCache?.();

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
