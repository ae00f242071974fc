/**
 * How close any walk sized from event rates can come to the ideal on the real months, with
 * everything in its favour: the exact times of every event already walked, a whole-window opening
 * already paid, a chunk after a full answer asked with 199 events. For each way of measuring the
 * rate (the last L events) and each target fill, the whole month is walked once; the best pair is
 * printed. It bounds what better sizing can win, not the planner.
 * The same walk over as many events at uniformly random times in the same span (no clusters, no
 * daily rhythm) shows what the clustering of real earthquakes costs.
 * What answers carry besides times, each given its best parameters in hindsight too:
 * - the daily rhythm: the rate is read against the month's own hour-of-day profile (known in
 *   advance, an advantage no planner has), so a chunk reaching into busier hours is shorter;
 * - Omori: each event of magnitude `big` or more already walked announces aftershocks at a rate
 *   decaying as 1/(t + c), scaled by 10^(magnitude - big); walking away from it (newest-first,
 *   after it in time) the rate measured among them overstates what lies before it, walking
 *   towards its aftershocks (oldest-first) the burst is expected.
 *   npx tsx bench/truncation-floor.ts [flat,uniform,rhythm,rhythm-other,omori,split] [--cap=100]
 */
import { readFileSync } from 'node:fs';
import { dataFolder, loadUsgsCsv } from '@gateway-ingest/emulator';

/** The gateway's cap: 200, or a silent cap below it (`--cap N`). */
const CAP = Number(process.argv.find((a) => a.startsWith('--cap='))?.slice(6) ?? 200);
const HOUR_MS = 3_600_000;
const files = ['all_month_2025-05-06_2025-06-05.csv', 'all_month_2025-08-19_2025-09-18.csv'];

interface Quake {
  ms: number;
  magnitude: number | null;
  latitude: number;
  longitude: number;
}

/**
 * A density shape over real time: events are expected in proportion to it. `between(a, b)` is its
 * integral over [a, b] (a < b), given the events walked so far (`known`, in walking order).
 */
interface Shape {
  label: string;
  between(a: number, b: number, known: readonly Quake[], walked: number): number;
}

const flat: Shape = { label: 'the rate alone', between: (a, b) => b - a };

/** The hour-of-day profile (mean 1) of `quakes`, integrated hour by hour. */
function rhythm(label: string, quakes: readonly Quake[]): Shape {
  const counts = new Array<number>(24).fill(0);
  for (const q of quakes) counts[new Date(q.ms).getUTCHours()]! += 1;
  const h = counts.map((c) => (c * 24) / quakes.length);
  const cumulative = (t: number): number => {
    const hours = Math.floor(t / HOUR_MS);
    const full = Math.floor(hours / 24) * 24 * HOUR_MS;
    let sum = full;
    for (let k = Math.floor(hours / 24) * 24; k < hours; k++) sum += h[k % 24]! * HOUR_MS;
    return sum + h[hours % 24]! * (t - hours * HOUR_MS);
  };
  return { label, between: (a, b) => cumulative(b) - cumulative(a) };
}

/** 1 + Σ over big events walked of k·10^(m - big) / ((t - t_i)/1h + c), after each. */
function omori(big: number, k: number, c: number): Shape {
  const term = (q: Quake, a: number, b: number): number => {
    const lo = Math.max(a, q.ms);
    if (b <= lo || q.magnitude === null || q.magnitude < big) return 0;
    const scale = k * 10 ** (q.magnitude - big) * HOUR_MS;
    return scale * (Math.log((b - q.ms) / HOUR_MS + c) - Math.log((lo - q.ms) / HOUR_MS + c));
  };
  // The big events of each walking order and their places in it, found once.
  const bigOf = new WeakMap<readonly Quake[], Array<[number, Quake]>>();
  const bigIn = (known: readonly Quake[]) => {
    let list = bigOf.get(known);
    if (!list) {
      list = known.flatMap((q, i): Array<[number, Quake]> =>
        q.magnitude !== null && q.magnitude >= big ? [[i, q]] : [],
      );
      bigOf.set(known, list);
    }
    return list;
  };
  return {
    label: `Omori (M${big}+, k ${k}, c ${c} h)`,
    between: (a, b, known, walked) => {
      let sum = b - a;
      for (const [i, q] of bigIn(known)) {
        if (i >= walked) break;
        sum += term(q, a, b);
      }
      return sum;
    },
  };
}

/**
 * Billed calls of one walk through `quakes` (in walking order: newest or oldest first), each chunk
 * sized for `fill` events at the rate of the last `last` events read against `shape`.
 */
function walk(quakes: readonly Quake[], newestFirst: boolean, shape: Shape, last: number, fill: number): number {
  const sign = newestFirst ? -1 : 1;
  let calls = 2; // the opening full answer and the chunk it sized, 199 events
  let known = CAP - 1;
  while (known < quakes.length) {
    const edge = (quakes[known - 1]!.ms + quakes[known]!.ms) / 2;
    const from = Math.max(0, known - last);
    const [a, b] = [quakes[from]!.ms, edge].sort((x, y) => x - y) as [number, number];
    const base = (known - from) / shape.between(a, b, quakes, known);
    // The chunk's far end: where `fill` events are expected, by bisection along the walk.
    let lo = 0;
    let hi = 1;
    const expected = (w: number) =>
      base *
      (newestFirst ? shape.between(edge - w, edge, quakes, known) : shape.between(edge, edge + w, quakes, known));
    while (expected(hi) < fill && hi < 1e13) hi *= 2;
    for (let i = 0; i < 30; i++) {
      const mid = (lo + hi) / 2;
      if (expected(mid) < fill) lo = mid;
      else hi = mid;
    }
    const reach = edge + sign * hi;
    let n = 0;
    while (known + n < quakes.length && sign * (quakes[known + n]!.ms - reach) < 0) n++;
    calls++;
    if (n < CAP) known += n;
    else {
      calls++;
      known += CAP - 1;
    }
  }
  return calls;
}

/** A small seeded generator, so that the figures repeat. */
function uniformTimes(n: number, lo: number, hi: number): Quake[] {
  let state = 12345;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  return Array.from({ length: n }, () => ({ ms: lo + next() * (hi - lo), magnitude: null, latitude: 0, longitude: 0 }));
}

interface Best {
  ratio: number;
  last: number;
  fill: number;
  shape: string;
}

/** Where a walk starts, in events dropped from the front: each lands its chunks elsewhere. */
const OFFSETS = [0, 23, 47, 71, 97, 113, 131, 157];

/** Billed calls over the ideal, averaged over the walk's starting points. */
function meanRatio(quakes: readonly Quake[], newestFirst: boolean, shape: Shape, last: number, fill: number): number {
  let sum = 0;
  for (const offset of OFFSETS) {
    const rest = quakes.slice(offset);
    sum += walk(rest, newestFirst, shape, last, fill) / Math.ceil(rest.length / CAP);
  }
  return sum / OFFSETS.length;
}

function best(quakes: readonly Quake[], newestFirst: boolean, shapes: readonly Shape[]): Best {
  let b: Best = { ratio: Infinity, last: 0, fill: 0, shape: '' };
  for (const shape of shapes)
    for (const last of [50, 100, 200, 400, 800, 1600])
      for (let share = 0.6; share <= 0.976; share += 0.025) {
        const fill = Math.round(share * CAP);
        const ratio = meanRatio(quakes, newestFirst, shape, last, fill);
        if (ratio < b.ratio) b = { ratio, last, fill, shape: shape.label };
      }
  return b;
}

function report(label: string, quakes: readonly Quake[], newestFirst: boolean, shapes: readonly Shape[]): void {
  const ordered = [...quakes].sort((x, y) => (newestFirst ? y.ms - x.ms : x.ms - y.ms));
  const b = best(ordered, newestFirst, shapes);
  console.log(
    `| ${label} | ${newestFirst ? 'newest' : 'oldest'} first | ${b.shape} | ${b.ratio.toFixed(3)} | ` +
      `last ${b.last}, fill ${b.fill} |`,
  );
}

/** Great-circle distance, km. */
function km(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const rad = Math.PI / 180;
  const h =
    Math.sin(((b.latitude - a.latitude) * rad) / 2) ** 2 +
    Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(((b.longitude - a.longitude) * rad) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * Splitting in space: the densest 1° cell's circle of `radiusKm` and the circle of the remaining
 * radius around its antipode (the rest of the world) walked as two streams, each with its own
 * opening and its best memory and fill in hindsight, against the ideal of the whole.
 */
function reportSplit(
  name: string,
  quakes: readonly Quake[],
  newestFirst: boolean,
  radiusKm: number,
  burst: boolean,
): void {
  // burst: the densest cell of the busiest UTC day (a burst), else of the whole month (a network).
  const days = new Map<number, Quake[]>();
  for (const q of quakes) {
    const day = Math.floor(q.ms / 86_400_000);
    days.set(day, [...(days.get(day) ?? []), q]);
  }
  const busiest = [...days.values()].sort((x, y) => y.length - x.length)[0]!;
  const cells = new Map<string, number>();
  for (const q of burst ? busiest : quakes) {
    const key = `${Math.floor(q.latitude)},${Math.floor(q.longitude)}`;
    cells.set(key, (cells.get(key) ?? 0) + 1);
  }
  const [densest] = [...cells].sort((x, y) => y[1] - x[1])[0]!;
  const [lat, lon] = densest.split(',').map(Number) as [number, number];
  const centre = { latitude: lat + 0.5, longitude: lon + 0.5 };
  const order = (x: Quake, y: Quake) => (newestFirst ? y.ms - x.ms : x.ms - y.ms);
  const near = quakes.filter((q) => km(q, centre) <= radiusKm).sort(order);
  const rest = quakes.filter((q) => km(q, centre) > radiusKm).sort(order);
  const calls = (part: readonly Quake[]) =>
    part.length < CAP ? 1 : best(part, newestFirst, [flat]).ratio * Math.ceil(part.length / CAP);
  const total = calls(near) + calls(rest);
  console.log(
    `| ${name} | ${newestFirst ? 'newest' : 'oldest'} first | split in space, around the densest cell of ` +
      `${burst ? 'its busiest day' : 'the month'}: ${near.length} events within ` +
      `${radiusKm} km of ${centre.latitude}, ${centre.longitude}, ${rest.length} elsewhere | ` +
      `${(total / Math.ceil(quakes.length / CAP)).toFixed(3)} | each part's best |`,
  );
}

const omoriShapes = [5, 6].flatMap((big) => [0.1, 0.3, 1, 3, 10].map((k) => omori(big, k, 0.5)));

const months = files.map((file) => ({
  name: file.replace('all_month_', '').replace('.csv', ''),
  quakes: loadUsgsCsv(readFileSync(`${dataFolder}usgs/${file}`, 'utf8')).map((e) => ({
    ms: Date.parse(e.time),
    magnitude: e.magnitude,
    latitude: e.latitude,
    longitude: e.longitude,
  })),
}));
const only = process.argv.slice(2).find((a) => !a.startsWith('--'));
console.log(
  `| events | walk | rate read against | billed / ideal, best in hindsight, mean of ${OFFSETS.length} starts | ` +
    'best memory and fill |',
);
console.log('|---|---|---|---|---|');
for (const [m, { name, quakes }] of months.entries()) {
  const other = months[1 - m]!;
  const span = quakes.map((q) => q.ms);
  const uniform = uniformTimes(quakes.length, Math.min(...span), Math.max(...span));
  for (const newestFirst of [true, false]) {
    const shapes: Array<[string, readonly Quake[], readonly Shape[]]> = [
      ['flat', quakes, [flat]],
      ['uniform', uniform, [flat]],
      ['rhythm', quakes, [rhythm('its own hour-of-day profile (hindsight)', quakes)]],
      ['rhythm-other', quakes, [rhythm(`the ${other.name} month's hour-of-day profile`, other.quakes)]],
      ['omori', quakes, omoriShapes],
    ];
    if (!only || only.split(',').includes('split'))
      for (const burst of [false, true])
        for (const radiusKm of [50, 200, 1000]) reportSplit(name, quakes, newestFirst, radiusKm, burst);
    for (const [key, events, list] of shapes)
      if (!only || only.split(',').includes(key))
        report(key === 'uniform' ? `${name} at uniform times` : name, events, newestFirst, list);
  }
}
