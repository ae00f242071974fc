import type { EarthquakeEvent } from '../../../src/gateway/schemas.js';
import { asStored } from '../../support/events.js';
import { list } from './listing.js';

export { storedEvents } from '../../support/events.js';

function differingFields(want: EarthquakeEvent, got: EarthquakeEvent): string[] {
  return (Object.keys(want) as Array<keyof EarthquakeEvent>)
    .filter((k) => want[k] !== got[k])
    .map((k) => `${k} ${JSON.stringify(got[k])} != ${JSON.stringify(want[k])}`);
}

export interface EventComparison {
  problems: string[];
  lost: number;
  unexpected: number;
  differing: number;
}

/** The table equals the catalog: nothing lost, nothing unexpected, every field equal. */
export function compareEvents(stored: EarthquakeEvent[], catalog: readonly EarthquakeEvent[]): EventComparison {
  const expected = new Map(asStored(catalog).map((e) => [e.id, e]));
  const got = new Set(stored.map((e) => e.id));
  const lost = [...expected.values()].filter((e) => !got.has(e.id));
  const unexpected = stored.filter((e) => !expected.has(e.id));
  const differing = stored.flatMap((e) => {
    const want = expected.get(e.id);
    const diff = want ? differingFields(want, e) : [];
    return diff.length > 0 ? [`${e.id}: ${diff.join(', ')}`] : [];
  });
  const problems: string[] = [];
  if (lost.length > 0)
    problems.push(`events lost: ${lost.length} of ${expected.size} (${list(lost, (e) => `${e.id} ${e.time}`)})`);
  if (unexpected.length > 0)
    problems.push(`unexpected events: ${unexpected.length} (${list(unexpected, (e) => `${e.id} ${e.time}`)})`);
  if (differing.length > 0)
    problems.push(`events with a field unlike the catalog: ${differing.length} (${list(differing, (d) => d)})`);
  return { problems, lost: lost.length, unexpected: unexpected.length, differing: differing.length };
}
