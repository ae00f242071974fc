/**
 * What a command loads before it starts: help and the version load no driver, queue, web server or
 * SDK, and each command loads only what it uses. Timings are the benchmark's
 * (`npm run bench:startup`); here, the modules each command resolved (test/support/record-loads.mjs).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'gi-loads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PACKAGE = /node_modules\/((?:@[^/]+\/)?[^/]+)/;

/** The files of node_modules that dist/'s bundled chunks hold, by chunk (scripts/build.mjs writes the map). */
function bundledInputs(): Map<string, string[]> {
  const map = JSON.parse(readFileSync(join(packageRoot, 'dist/chunks.json'), 'utf8')) as Record<string, string[]>;
  return new Map(Object.entries(map).map(([chunk, inputs]) => [join(packageRoot, chunk), inputs]));
}

/** The packages a run of the CLI loaded: from node_modules, or inlined in a chunk of dist/ it loaded. */
async function packagesLoaded(args: string[], env: Record<string, string> = {}): Promise<Set<string>> {
  const file = join(dir, `${args.join('-').replace(/[^a-z0-9-]/gi, '')}.txt`);
  const child = spawn(
    process.execPath,
    ['--import', './test/support/record-loads.mjs', 'bin/gateway-ingest.js', ...args],
    {
      cwd: packageRoot,
      env: { ...process.env, ...env, RECORD_LOADS: file },
      stdio: 'ignore',
    },
  );
  await new Promise((resolve) => child.on('close', resolve));
  const urls = readFileSync(file, 'utf8').split('\n');
  const chunks = bundledInputs();
  const files = urls.flatMap((u) => (u.startsWith('file:') ? [u, ...(chunks.get(fileURLToPath(u)) ?? [])] : [u]));
  return new Set(files.flatMap((f) => PACKAGE.exec(f)?.[1] ?? []));
}

const HEAVY = [
  'bullmq',
  'ioredis',
  'pg',
  'drizzle-orm',
  'express',
  '@bull-board/api',
  '@bull-board/express',
  'prom-client',
  'undici',
  '@opentelemetry/sdk-trace-base',
  '@gateway-ingest/emulator',
  'drizzle-kit',
  'yaml',
];

describe('the CLI loads only what a command uses', () => {
  it.each([
    ['--version'],
    ['--help'],
    ['backfill', 'earthquakes', '--help'],
    ['status', '--help'],
    ['start', '--help'],
  ])('%s %s %s loads no driver, queue, web server, SDK or emulator', async (...args) => {
    const loaded = await packagesLoaded(args);
    expect(loaded.has('commander')).toBe(true);
    expect(HEAVY.filter((p) => loaded.has(p))).toEqual([]);
  });

  it('plan and --dry-run load the database driver, nothing of the queue, gateway or service', async () => {
    const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' };
    const range = ['earthquakes', '--from', '2025-01-01T00:00:00Z', '--to', '2025-02-01T00:00:00Z'];
    for (const args of [
      ['plan', ...range],
      ['backfill', ...range, '--dry-run'],
    ]) {
      const loaded = await packagesLoaded(args, env);
      expect(loaded.has('pg')).toBe(true);
      const unused = HEAVY.filter((p) => !['pg', 'drizzle-orm', 'yaml'].includes(p));
      expect(unused.filter((p) => loaded.has(p))).toEqual([]);
    }
  });

  it('status loads the database driver and the jobs file parser, nothing of the queue, gateway or service', async () => {
    const loaded = await packagesLoaded(['status'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(loaded.has('pg')).toBe(true);
    const unused = HEAVY.filter((p) => !['pg', 'drizzle-orm', 'yaml'].includes(p));
    expect(unused.filter((p) => loaded.has(p))).toEqual([]);
  });
});
