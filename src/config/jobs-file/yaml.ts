/**
 * Reading the YAML text: parser settings, the problems visible before any value is checked (syntax
 * errors, keys that cannot be read, duplicate keys), and the Locator that gives every problem its line.
 */
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import type { RawProblem, Segment } from './messages.js';

export type YamlDoc = Document.Parsed;

export interface YamlSource {
  doc: YamlDoc;
  at: Locator;
  /** Problems that make the tree unreliable: its values are not worth checking. */
  broken: RawProblem[];
  /** Reported with everything else: validation still sees the last value of the key. */
  duplicates: RawProblem[];
}

/** Parse `text` and collect what the syntax tree alone shows is wrong. */
export function readYaml(text: string): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: false, // reported by treeProblems, with the path and the first line
    version: '1.2', // also under a `%YAML 1.1` directive: no timestamps, no yes/no booleans
    schema: 'core',
  });
  const at = new Locator(doc, lineCounter);
  const syntax = syntaxProblems(doc, lineCounter, at);
  const tree = treeProblems(doc, at);
  return { doc, at, broken: [...syntax, ...tree.broken], duplicates: tree.duplicates };
}

function yamlReason(code: string, message: string): string {
  if (code === 'MULTIPLE_DOCS') return 'the file must hold a single YAML document (remove the --- separator)';
  return `YAML syntax error: ${message}`;
}

function syntaxProblems(doc: YamlDoc, lineCounter: LineCounter, at: Locator): RawProblem[] {
  const problems: RawProblem[] = [];
  for (const e of [...doc.errors, ...doc.warnings]) {
    const offset = e.pos[0];
    const reason = e.name === 'YAMLWarning' ? `YAML error: ${e.message}` : yamlReason(e.code, e.message);
    // An unclosed quote or bracket, as the parser words it ("Missing closing \"quote", "... end with a ]"):
    // other MISSING_CHAR errors (a sequence item without its dash) are about the line itself.
    const unclosed = /Missing closing|end with a/.test(e.message);
    const node = at.nodeAt(offset, unclosed);
    const errorAt = lineCounter.linePos(offset);
    if (unclosed && node.start !== null && node.end === offset && at.lineAt(node.start) < errorAt.line) {
      // Point at the quote or bracket that was opened, not at where the parser gave up.
      const openedAt = lineCounter.linePos(node.start);
      problems.push({
        path: node.path,
        line: openedAt.line,
        reason: `${reason} (column ${openedAt.col}: the value is not closed before line ${errorAt.line})`,
      });
    } else {
      const indent = /indicator|indent|same column/i.test(e.message) ? '; check the indentation of this line' : '';
      problems.push({ path: node.path, line: errorAt.line, reason: `${reason} (column ${errorAt.col}${indent})` });
    }
  }
  return problems;
}

/**
 * What the YAML syntax tree alone shows: duplicate keys (`duplicates`, reported with everything else)
 * and keys that are not plain scalars or aliases to nowhere (`broken`: the tree cannot be read).
 */
function treeProblems(doc: YamlDoc, at: Locator): { duplicates: RawProblem[]; broken: RawProblem[] } {
  const duplicates: RawProblem[] = [];
  const broken: RawProblem[] = [];
  const walk = (node: unknown, path: Segment[]): void => {
    if (isAlias(node)) {
      if (node.resolve(doc) === undefined) {
        broken.push({ path, line: at.lineOf(path), reason: `alias *${node.source} refers to no anchor` });
      }
      return;
    }
    if (isMap(node)) {
      const seen = new Map<string, number>();
      for (const pair of node.items) {
        if (!isScalar(pair.key)) {
          broken.push({ path, line: at.startLine(pair.key, at.lineOf(path)), reason: 'keys must be plain names' });
          continue;
        }
        const key = String(pair.key.value);
        const line = at.startLine(pair.key, at.lineOf(path));
        const first = seen.get(key);
        if (first !== undefined) {
          duplicates.push({ path: [...path, key], line, reason: `duplicate key (first set at line ${first})` });
        } else {
          seen.set(key, line);
        }
        walk(pair.value, [...path, key]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item, [...path, i]));
    }
  };
  walk(doc.contents, []);
  return { duplicates, broken };
}

/**
 * A node's `[start, value end, node end]` offsets. Nodes are `unknown` here because pair keys and
 * values may be any node type, or none; only those that carry a range can be placed.
 */
function rangeOf(node: unknown): readonly number[] | null {
  if (node === null || typeof node !== 'object' || !('range' in node)) return null;
  return (node as { range?: readonly number[] | null }).range ?? null;
}

/**
 * Maps value paths to source lines through the YAML syntax tree. Problems are found on plain JS
 * values, which have no positions; this is how they get their `file:line`.
 */
export class Locator {
  constructor(
    private readonly doc: YamlDoc,
    private readonly lines: LineCounter,
  ) {}

  lineAt(offset: number): number {
    return this.lines.linePos(offset).line;
  }

  startLine(node: unknown, fallback: number): number {
    const start = rangeOf(node)?.[0];
    return typeof start === 'number' ? this.lineAt(start) : fallback;
  }

  /** The line of the value at `path`; of the deepest existing parent key when it is missing. */
  lineOf(path: readonly Segment[], opts: { key?: boolean } = {}): number {
    let node: unknown = this.doc.contents;
    let line = this.startLine(node, 1);
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      if (isAlias(node)) node = node.resolve(this.doc);
      if (isMap(node)) {
        const pair = node.items.findLast((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) return line;
        line = this.startLine(pair.key, line);
        if (opts.key && i === path.length - 1) return line;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item: unknown = node.items[seg];
        if (item === undefined) return line;
        line = this.startLine(item, line);
        node = item;
      } else {
        return line;
      }
    }
    return isScalar(node) ? this.startLine(node, line) : line;
  }

  /**
   * Best-effort path of the deepest node holding `offset`, for syntax errors. With `upTo`, a node
   * ending exactly at `offset` holds it too: that is where an unclosed quote or bracket ends.
   */
  nodeAt(offset: number, upTo = false): { path: Segment[]; start: number | null; end: number | null } {
    const path: Segment[] = [];
    const holds = (n: unknown): boolean => {
      const range = rangeOf(n);
      if (!range || range[0] === undefined || range[1] === undefined) return false;
      const end = range[2] ?? range[1];
      return range[0] <= offset && (offset < end || (upTo && offset === end));
    };
    const found = (n: unknown) => {
      const range = rangeOf(n);
      return { path, start: range?.[0] ?? null, end: range ? (range[2] ?? range[1] ?? null) : null };
    };
    let node: unknown = this.doc.contents;
    for (;;) {
      if (isMap(node)) {
        const pair = node.items.find((p) => holds(p.key) || holds(p.value));
        if (!pair || !isScalar(pair.key)) return found(node);
        path.push(String(pair.key.value));
        if (!holds(pair.value)) return found(pair.key);
        node = pair.value;
      } else if (isSeq(node)) {
        const index = node.items.findIndex(holds);
        if (index < 0) return found(node);
        path.push(index);
        node = node.items[index];
      } else {
        return found(node);
      }
    }
  }
}
