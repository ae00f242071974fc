/**
 * Maps value paths to source lines through the YAML syntax tree. Problems are found on plain JS
 * values, which have no positions; this is how they get their `file:line`.
 */
import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter } from 'yaml';
import type { Segment } from './problem-path.js';

export type YamlDoc = Document.Parsed;

export class Locator {
  constructor(
    private readonly doc: YamlDoc,
    private readonly lines: LineCounter,
  ) {}

  lineAt(offset: number): number {
    return this.lines.linePos(offset).line;
  }

  startLine(node: unknown, fallback: number): number {
    if (node !== null && typeof node === 'object' && 'range' in node) {
      const range = (node as { range?: readonly number[] | null }).range;
      if (range && typeof range[0] === 'number') return this.lineAt(range[0]);
    }
    return fallback;
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
    const rangeOf = (n: unknown): readonly number[] | null =>
      n !== null && typeof n === 'object' && 'range' in n
        ? ((n as { range?: readonly number[] | null }).range ?? null)
        : null;
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
