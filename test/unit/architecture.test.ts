import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';

/**
 * The layering CONTRIBUTING.md's "Architecture" section promises, checked on the import statements of
 * src/: dependencies point one way, down to domain/, with errors.ts a leaf.
 */
const SRC = join(packageRoot, 'src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const sources = files(SRC).map((path) => ({ path: relative(SRC, path), text: readFileSync(path, 'utf8') }));

/** Project modules a file imports, as paths relative to src/ (`db/partitions.ts`). */
function importsOf(file: { path: string; text: string }): string[] {
  const specs = [...file.text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)].map((m) => m[1]!);
  return specs.map((s) => relative(SRC, resolve(SRC, dirname(file.path), s)).replace(/\.js$/, '.ts'));
}

const layer = (path: string): string => (path.includes('/') ? path.split('/')[0]! : path.replace(/\.ts$/, ''));

function edges(): Array<{ from: string; to: string }> {
  return sources.flatMap((f) => importsOf(f).map((to) => ({ from: f.path, to })));
}

/** Import cycles among `graph`'s modules, each as the path of imports that closes it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (from: string): void => {
    state.set(from, 'open');
    path.push(from);
    for (const to of graph.get(from) ?? []) {
      if (state.get(to) === 'open') found.push([...path.slice(path.indexOf(to)), to]);
      else if (!state.has(to) && graph.has(to)) visit(to);
    }
    path.pop();
    state.set(from, 'done');
  };
  for (const module of graph.keys()) if (!state.has(module)) visit(module);
  return found;
}

describe('architecture', () => {
  it('no import cycles (the emulator, a program of its own, aside)', () => {
    const product = sources.filter((f) => layer(f.path) !== 'emulator');
    expect(cycles(new Map(product.map((f) => [f.path, importsOf(f)])))).toEqual([]);
  });

  it('nothing outside cli/ imports cli/', () => {
    const up = edges().filter((e) => layer(e.to) === 'cli' && layer(e.from) !== 'cli');
    expect(up).toEqual([]);
  });

  it('errors.ts is a leaf and domain/ depends on nothing but itself', () => {
    const bad = edges().filter(
      (e) => e.from === 'errors.ts' || (layer(e.from) === 'domain' && layer(e.to) !== 'domain'),
    );
    expect(bad).toEqual([]);
  });

  it('db/ and planning/ never import each other; planning/ is pure (no db, queue, gateway client, worker)', () => {
    const bad = edges().filter(
      (e) =>
        (layer(e.from) === 'db' && layer(e.to) === 'planning') ||
        (layer(e.from) === 'planning' && ['db', 'queue', 'worker', 'ingest', 'service', 'cli'].includes(layer(e.to))),
    );
    expect(bad).toEqual([]);
  });

  it('lower layers never import higher ones', () => {
    const rank: Record<string, number> = {
      errors: 0,
      domain: 0,
      paths: 0,
      log: 0,
      'net-listen': 0,
      config: 1,
      gateway: 1,
      planning: 1,
      telemetry: 1,
      db: 2,
      queue: 2,
      worker: 3,
      ingest: 4,
      service: 5,
      cli: 6,
    };
    const bad = edges().filter(
      (e) => (rank[layer(e.to)] ?? 0) > (rank[layer(e.from)] ?? 0) && layer(e.to) !== layer(e.from),
    );
    expect(bad).toEqual([]);
  });

  it('partition state literals live only in the domain and the partition module', () => {
    const owners = new Set(['domain/partition.ts', 'db/partitions.ts']);
    const literal = /'(pending|running|done|failed)'/;
    const stray = sources.filter(
      (f) =>
        !owners.has(f.path) &&
        literal.test(
          f.text.replace(
            /(worker|w)\.on\('failed'|state === 'failed' \|\| state === 'unknown'|'completed', 'failed'|'failed', 'completed'|JOB_STATES = \[[^\]]*\]|observe\(w\.name, 'failed'|\|\| 'failed'/g,
            '',
          ),
        ),
    );
    expect(stray.map((f) => f.path)).toEqual([]);
  });

  it('no product code reads test/', () => {
    const readers = sources.filter((f) => /['"`][^'"`]*\btest\/(fixtures|support)/.test(f.text));
    expect(readers.map((f) => f.path)).toEqual([]);
  });

  it('src/ holds the pipeline only: the emulator package is loaded in one place, the benchmark is not here', () => {
    const loaders = sources.filter((f) => f.text.includes('@gateway-ingest/emulator')).map((f) => f.path);
    expect(loaders).toEqual(['cli/emulator-package.ts']);
    expect(sources.map((f) => f.path).filter((p) => /emulator\/|bench/.test(p))).toEqual([]);
  });
});
