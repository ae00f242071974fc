/**
 * Problems before they are tied to a file: a value path plus a line. Paths stay as segments until
 * the end so that lines can still be looked up in the YAML tree.
 */

export type Segment = string | number;

export interface RawProblem {
  path: Segment[];
  line: number;
  reason: string;
}

/** How a rule reports a problem; the caller decides the line, so rules need no YAML positions. */
export type Report = (path: Segment[], reason: string) => void;

const ROOT_PATH = '(root)';

export function formatPath(path: readonly Segment[]): string {
  if (path.length === 0) return ROOT_PATH;
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}
