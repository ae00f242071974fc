/**
 * Cross-field rules, run on the raw document rather than the schema output so that they still
 * report when some unrelated field of the same stream is invalid.
 */
import { STREAM_NAME_PATTERN } from './constants.js';
import { earthquakeRules } from './earthquake-stream.js';
import { indicatorRules } from './indicator-stream.js';
import type { Locator } from './locator.js';
import { formatPath, type RawProblem, type Report, type Segment } from './problem-path.js';
import { isRecord } from './raw-document.js';
import { scheduleRules } from './schedule.js';

export function crossFieldProblems(root: Record<string, unknown>, at: Locator, now: Date): RawProblem[] {
  const problems: RawProblem[] = [];
  const report: Report = (path, reason) => {
    problems.push({ path, line: at.lineOf(path), reason });
  };
  const names = new Map<string, Segment[]>();

  let streams = 0;
  let listsValid = true;
  for (const kind of ['earthquakes', 'indicators'] as const) {
    const list = root[kind];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) {
      listsValid = false;
      continue;
    }
    streams += list.length;
    list.forEach((item: unknown, i) => {
      if (!isRecord(item)) return;
      const base: Segment[] = [kind, i];

      const name = item.name;
      if (typeof name === 'string' && STREAM_NAME_PATTERN.test(name)) {
        const first = names.get(name.toLowerCase());
        if (first) {
          const where = `${formatPath(first)} (line ${at.lineOf(first)})`;
          report([...base, 'name'], `duplicate stream name ${JSON.stringify(name)}: already used by ${where}`);
        } else {
          names.set(name.toLowerCase(), [...base, 'name']);
        }
      }

      scheduleRules(item, base, report);
      if (kind === 'earthquakes') earthquakeRules(item, base, report);
      else indicatorRules(item, base, report, now);
    });
  }
  // A list of the wrong type is reported by the schema; "no stream" on top of it would be noise.
  if (listsValid && streams === 0) {
    report([], 'declares no stream: add at least one under earthquakes or indicators');
  }
  return problems;
}
