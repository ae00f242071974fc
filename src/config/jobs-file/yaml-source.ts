/**
 * Reading the YAML text: parser settings, and the problems visible before any value is checked
 * (syntax errors, keys that cannot be read, duplicate keys), each placed on its line.
 */
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { Locator, type YamlDoc } from './locator.js';
import type { RawProblem, Segment } from './problem-path.js';

export interface YamlSource {
  doc: YamlDoc;
  at: Locator;
  /** Problems that make the tree unreliable: its values are not worth checking. */
  broken: RawProblem[];
  /** Reported with everything else: validation still sees the last value of the key. */
  duplicates: RawProblem[];
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
    const unclosed = e.code === 'MISSING_CHAR' || /end with a/.test(e.message);
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
      problems.push({ path: node.path, line: errorAt.line, reason: `${reason} (column ${errorAt.col})` });
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
