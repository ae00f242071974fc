/**
 * Inline SVG for the status page: a coverage timeline per stream and the billed-calls bar chart.
 * Plain shapes with <title> tooltips, so the page needs no script and reads in any browser.
 */
import { PARTITION_STATE, type PartitionState } from '../../domain/partition.js';
import type { Range } from '../../domain/ranges.js';
import { toRfc3339 } from '../../domain/time.js';
import { html, type SafeHtml } from './html.js';
import type { DayBar, Timeline } from './model.js';

export const STATE_STYLE: Record<PartitionState, { color: string; label: string }> = {
  [PARTITION_STATE.done]: { color: '#2e9e4f', label: 'ingested' },
  [PARTITION_STATE.pending]: { color: '#9db4d6', label: 'queued' },
  [PARTITION_STATE.running]: { color: '#3f6fd1', label: 'in progress' },
  [PARTITION_STATE.partial]: { color: '#e0a020', label: 'partial (unresolved seconds)' },
  [PARTITION_STATE.failed]: { color: '#d0342c', label: 'failed (attempts used up)' },
};
export const GAP_COLOR = '#e6e6e6';

export const OPERATION_COLORS: Record<string, string> = { earthquake: '#b4552d', indicator: '#3a7ca5' };
const OTHER_COLOR = '#777777';

const WIDTH = 960;
const PAD = 8;

function formatPoint(unit: Timeline['unit'], v: number, spanMs: number): string {
  if (unit === 'year') return String(v);
  const iso = toRfc3339(v);
  // Ticks of a short timeline fall within a few days: the hour tells them apart.
  return spanMs <= 10 * 86_400_000 ? iso.slice(0, 16).replace('T', ' ') : iso.slice(0, 10);
}

export function formatRange(unit: Timeline['unit'], r: Range): string {
  if (unit === 'year') return r.start === r.end ? String(r.start) : `${r.start} .. ${r.end}`;
  return `${toRfc3339(r.start)} .. ${toRfc3339(r.end)}`;
}

function scaleOf(t: Timeline): (v: number) => number {
  const adjacency = t.unit === 'year' ? 1 : 0;
  const span = Math.max(t.range.end + adjacency - t.range.start, 1);
  return (v) => PAD + ((v - t.range.start) / span) * (WIDTH - 2 * PAD);
}

function ticks(t: Timeline): number[] {
  if (t.unit === 'year') {
    const years = t.range.end - t.range.start + 1;
    const step = Math.max(1, Math.ceil(years / 8));
    return Array.from({ length: Math.ceil(years / step) }, (_, k) => t.range.start + k * step);
  }
  return [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(t.range.start + f * (t.range.end - t.range.start)));
}

function segment(t: Timeline, state: PartitionState, r: Range, x: (v: number) => number): SafeHtml {
  const adjacency = t.unit === 'year' ? 1 : 0;
  const left = x(r.start);
  const width = Math.max(x(r.end + adjacency) - left, 1.5);
  const style = STATE_STYLE[state];
  const box = html`x="${left.toFixed(1)}" y="4" width="${width.toFixed(1)}" height="22"`;
  const title = html`<title>${style.label}: ${formatRange(t.unit, r)}</title>`;
  return html`<rect class="seg" data-state="${state}" ${box} fill="${style.color}">${title}</rect>`;
}

/** One bar from the first to the last point; grey where no partition was ever planned. */
export function timelineSvg(t: Timeline): SafeHtml {
  const x = scaleOf(t);
  const span = t.range.end - t.range.start;
  const marks = ticks(t).map((v) => {
    // The outer labels stay inside the picture.
    const anchor = v === t.range.start ? 'start' : x(v) > WIDTH - 60 ? 'end' : 'middle';
    const at = x(v).toFixed(1);
    const tick = html`<line x1="${at}" x2="${at}" y1="26" y2="31" stroke="#888"/>`;
    return html`${tick}<text x="${at}" y="44" text-anchor="${anchor}">${formatPoint(t.unit, v, span)}</text>`;
  });
  const segments = t.layers.flatMap((l) => l.ranges.map((r) => segment(t, l.state, r, x)));
  const gapBox = html`x="${PAD}" y="4" width="${WIDTH - 2 * PAD}" height="22"`;
  return html`<svg class="timeline" viewBox="0 0 ${WIDTH} 48" width="100%" role="img" aria-label="coverage timeline">
<rect class="gap" ${gapBox} fill="${GAP_COLOR}"><title>not ingested</title></rect>
${segments}${marks}</svg>`;
}

/** 1, 2 or 5 times a power of ten, at least `v`. */
export function niceCeil(v: number): number {
  if (v <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(v));
  const step = [1, 2, 5, 10].find((m) => m * power >= v) ?? 10;
  return step * power;
}

const CHART = { height: 240, top: 16, bottom: 36, left: 48, right: 12 };

/** The cap is drawn only when it is in sight; a cap far above every day would flatten the bars. */
function chartMax(days: DayBar[], cap: number | null): number {
  const most = Math.max(0, ...days.map((d) => d.total));
  return niceCeil(cap !== null && cap <= Math.max(most, 1) * 4 ? Math.max(most, cap) : most);
}

function bar(d: DayBar, i: number, slot: number, y: (v: number) => number): SafeHtml {
  const x = CHART.left + i * slot + slot * 0.15;
  const width = slot * 0.7;
  let base = 0;
  const parts = Object.entries(d.byOperation)
    .filter(([, n]) => n > 0)
    .map(([operation, n]) => {
      const top = y(base + n);
      const fill = OPERATION_COLORS[operation] ?? OTHER_COLOR;
      const size = html`width="${width.toFixed(1)}" height="${(y(base) - top).toFixed(1)}"`;
      const rect = html`<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" ${size} fill="${fill}"/>`;
      base += n;
      return rect;
    });
  const detail = Object.entries(d.byOperation)
    .map(([o, n]) => `${o} ${n}`)
    .join(', ');
  const title = html`<title>${d.day}: ${d.total} billed calls${detail ? ` (${detail})` : ''}</title>`;
  return html`<g class="bar" data-day="${d.day}" data-billed="${d.total}">${title}${parts}</g>`;
}

function axis(max: number, y: (v: number) => number): SafeHtml {
  // Calls are whole: no 0.5 line on an axis that ends at 1.
  const lines = [0, max / 2, max].filter(Number.isInteger).map((v) => {
    const at = y(v).toFixed(1);
    const line = html`<line x1="${CHART.left}" x2="${WIDTH - CHART.right}" y1="${at}" y2="${at}" stroke="#ddd"/>`;
    return html`${line}<text x="${CHART.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`;
  });
  return html`${lines}`;
}

function capLine(cap: number | null, max: number, y: (v: number) => number): SafeHtml | null {
  if (cap === null || cap > max) return null;
  const at = y(cap).toFixed(1);
  const ends = html`x1="${CHART.left}" x2="${WIDTH - CHART.right}" y1="${at}" y2="${at}"`;
  const line = html`<line class="cap" ${ends} stroke="#d0342c" stroke-dasharray="6 4"/>`;
  const place = html`x="${WIDTH - CHART.right}" y="${(y(cap) - 4).toFixed(1)}"`;
  return html`${line}<text ${place} text-anchor="end" fill="#d0342c">daily cap ${cap}</text>`;
}

/** Stacked by operation, one bar per UTC day, every fifth day labelled. */
export function billedChartSvg(days: DayBar[], cap: number | null): SafeHtml {
  const max = chartMax(days, cap);
  const plot = CHART.height - CHART.top - CHART.bottom;
  const y = (v: number) => CHART.top + plot - (v / max) * plot;
  const slot = (WIDTH - CHART.left - CHART.right) / Math.max(days.length, 1);
  const labels = days.map((d, i) => {
    if ((days.length - 1 - i) % 5 !== 0) return null;
    const at = (CHART.left + (i + 0.5) * slot).toFixed(1);
    return html`<text x="${at}" y="${CHART.height - 16}" text-anchor="middle">${d.day.slice(5)}</text>`;
  });
  const box = html`viewBox="0 0 ${WIDTH} ${CHART.height}" width="100%"`;
  return html`<svg id="billed-chart" ${box} role="img" aria-label="billed calls per UTC day">
${axis(max, y)}${days.map((d, i) => bar(d, i, slot, y))}${capLine(cap, max, y)}${labels}</svg>`;
}
