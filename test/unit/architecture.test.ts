import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
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

/**
 * Project modules a file imports, as paths relative to src/ (`db/partitions.ts`): static, type-only,
 * re-exported and dynamic imports alike, as TypeScript's own scanner finds them.
 */
function importsOf(file: { path: string; text: string }): string[] {
  const specs = ts
    .preProcessFile(file.text, true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((s) => s.startsWith('.'));
  return specs.map((s) => moduleAt(SRC, file.path, s));
}

/** The module a relative specifier of `from` names, as a path from `root` (`./x.js` is `x.ts`). */
function moduleAt(root: string, from: string, spec: string): string {
  return relative(root, resolve(root, dirname(from), spec)).replace(/\.js$/, '.ts');
}

const layer = (path: string): string => (path.includes('/') ? path.split('/')[0]! : path.replace(/\.ts$/, ''));

function edges(): Array<{ from: string; to: string }> {
  return sources.flatMap((f) => importsOf(f).map((to) => ({ from: f.path, to })));
}

/**
 * Every import cycle of `graph`, each named by one shortest cycle (`a.ts -> b.ts -> a.ts`) and, when
 * more modules are caught in it, all of them: the strongly connected components (Tarjan) of two or
 * more modules, or of one that imports itself.
 */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): Array<{ modules: string[]; name: string }> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = stack.splice(stack.indexOf(v));
    if (component.length > 1 || graph.get(v)!.includes(v)) components.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return components.map((modules) => {
    // Breadth-first from the first module back to itself, inside the component.
    const start = modules[0]!;
    const cameFrom = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0 && !cameFrom.has(start)) {
      const v = queue.shift()!;
      for (const w of graph.get(v) ?? []) {
        if (!modules.includes(w) || cameFrom.has(w)) continue;
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
    const path = [start];
    for (let v = cameFrom.get(start)!; v !== start; v = cameFrom.get(v)!) path.unshift(v);
    path.unshift(start);
    const name = path.join(' -> ') + (modules.length > path.length - 1 ? ` (among ${modules.join(', ')})` : '');
    return { modules, name };
  });
}

/** Whether a statement imports or re-exports only types: erased, so never loaded at run time. */
function typeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) return node.isTypeOnly;
  const clause = node.importClause;
  if (clause === undefined) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return clause.name === undefined && named !== undefined && ts.isNamedImports(named)
    ? named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)
    : false;
}

/** Relative specifiers a module loads at run time: static imports and re-exports, type-only ones left out. */
function runtimeImports(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, false);
  return file.statements.flatMap((node) =>
    (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
    node.moduleSpecifier !== undefined &&
    ts.isStringLiteral(node.moduleSpecifier) &&
    node.moduleSpecifier.text.startsWith('.') &&
    !typeOnly(node)
      ? [node.moduleSpecifier.text]
      : [],
  );
}

/**
 * Every TypeScript module of the checkout (the product, the emulator, tests, benchmarks), by path
 * from its root, with the modules it loads at run time.
 */
function repoModules(): Array<{ path: string; imports: string[] }> {
  const roots = ['src', 'test', 'bench', ...readdirSync(join(packageRoot, 'packages')).map((p) => `packages/${p}`)];
  const paths = roots.flatMap((r) => files(join(packageRoot, r)).filter((f) => !f.includes('node_modules')));
  return paths.map((path) => {
    const from = relative(packageRoot, path);
    return { path: from, imports: runtimeImports(path).map((spec) => moduleAt(packageRoot, from, spec)) };
  });
}

describe('architecture', () => {
  it('no import cycle among the modules of src/, within a layer too', () => {
    // Type-only imports count: in a runtime cycle load order decides which import is still
    // undefined, and a type cycle still ties two modules' designs together.
    const graph = new Map(sources.map((f) => [f.path, importsOf(f)] as const));
    expect(importCycles(graph).map((c) => c.name)).toEqual([]);
  });

  it('no import cycle at run time anywhere else either: the emulator, tests, benchmarks', () => {
    const graph = new Map(repoModules().map((m) => [m.path, m.imports] as const));
    expect(graph.size).toBeGreaterThan(sources.length);
    expect(importCycles(graph).map((c) => c.name)).toEqual([]);
  });

  it('the cycle check finds and names a cycle', () => {
    const graph = new Map([
      ['a.ts', ['b.ts', 'domain.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'b.ts']],
      ['domain.ts', []],
      ['self.ts', ['self.ts']],
    ]);
    expect(importCycles(graph).map((c) => c.name)).toEqual(['a.ts -> b.ts -> c.ts -> a.ts', 'self.ts -> self.ts']);
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
