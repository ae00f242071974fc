// Builds dist/ with esbuild: each command's code and the pure-JS packages it needs in a few chunks,
// split where the CLI imports lazily. A command then starts by reading a handful of files instead of
// hundreds of ES modules (zod and drizzle-orm alone are two hundred), which is most of its start-up.
// Types are checked by `npm run typecheck`, not here.
import { build } from 'esbuild';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

// Pure-JS packages, safe to inline. Everything else stays an import of node_modules: `pg` (the
// tracing SDK patches it as it is required), pino (its transports load files by path), BullMQ and
// ioredis (Lua scripts), undici, OpenTelemetry, Express and Bull Board (static files), the emulator
// package (a development dependency, loaded only when present), and luxon (cron-parser's, whose
// settings config/jobs-file/schedule.ts sets on the one instance Node's require cache holds).
const INLINED = new Set(['zod', 'drizzle-orm', 'commander', 'yaml', 'cron-parser', 'date-fns']);

/** @type {import('esbuild').Plugin} */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      const [scope, name] = args.path.split('/');
      const pkg = scope?.startsWith('@') ? `${scope}/${name}` : scope;
      return INLINED.has(pkg ?? '') ? undefined : { path: args.path, external: true };
    });
  },
};

rmSync(join(root, 'dist'), { recursive: true, force: true });
const { metafile } = await build({
  absWorkingDir: root,
  // main.ts is an entry of its own so that it keeps its name: entry.ts imports it only after tracing
  // has started, and a test checks that order by its path.
  entryPoints: ['src/cli/entry.ts', 'src/cli/main.ts', 'src/cli/demo.ts'],
  outdir: 'dist/cli',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  sourcemap: 'linked',
  logLevel: 'warning',
  plugins: [externalPackages],
  metafile: true,
  // CommonJS packages inlined above call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});
// Which sources and packages each chunk holds: what a test reads to tell what a command loaded.
const inputs = Object.fromEntries(
  Object.entries(metafile.outputs)
    .filter(([out]) => out.endsWith('.js'))
    .map(([out, o]) => [out, Object.keys(o.inputs)]),
);
writeFileSync(join(root, 'dist/chunks.json'), JSON.stringify(inputs));
