/**
 * The status page at `/`: server-rendered HTML with inline SVG, no script. Every value from the
 * database or jobs.yaml goes through `html`, which escapes it.
 */
import { LAYER_ORDER, type BudgetView, type PageModel, type StreamView } from './model.js';
import type { BackfillRow } from './queries.js';
import { billedChartSvg, formatRange, GAP_COLOR, OPERATION_COLORS, STATE_STYLE, timelineSvg } from './charts.js';
import { html, trusted, type SafeHtml } from './html.js';
import { toRfc3339 } from '../../domain/time.js';

const MAX_LISTED = 5;

const STYLE = trusted(`
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d232a;background:#f6f7f9;margin:0}
main{max-width:1100px;margin:0 auto;padding:16px 24px 48px}
header{display:flex;align-items:baseline;gap:24px;flex-wrap:wrap}
h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:28px 0 8px}h3{font-size:15px;margin:0 0 6px}
nav a{margin-right:14px}a{color:#2556a8}
.muted{color:#66707a}.card{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:12px 16px;margin:10px 0}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:2px 18px;margin:6px 0}
.facts div span{color:#66707a}
code{font:12px ui-monospace,Menlo,Consolas,monospace;background:#eef0f3;padding:1px 4px;border-radius:3px}
.badge{font-size:11px;padding:1px 7px;border-radius:9px;background:#eef0f3;color:#39424b;vertical-align:middle}
.badge.warn{background:#fbecc8;color:#6b4a00}.badge.bad{background:#f8d8d6;color:#7c1d17}.badge.ok{background:#d6f0dd;color:#175a2a}
svg text{font:11px system-ui,sans-serif;fill:#555}
.legend{display:flex;gap:16px;flex-wrap:wrap;font-size:12px;color:#444}
.legend i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;vertical-align:-1px}
ul.problems{margin:4px 0 0;padding-left:18px}ul.problems li{color:#7c1d17}
table{border-collapse:collapse;width:100%;background:#fff}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #e4e7eb;font-size:13px}
th{color:#66707a;font-weight:600}
`);

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7_200) return `${Math.round(s / 60)} min ago`;
  if (s < 172_800) return `${Math.round(s / 3_600)} h ago`;
  return `${Math.round(s / 86_400)} days ago`;
}

function percent(fraction: number): string {
  return `${(Math.floor(fraction * 10_000) / 100).toFixed(2)}%`;
}

function fact(label: string, value: SafeHtml | string): SafeHtml {
  return html`<div><span>${label}:</span> ${value}</div>`;
}

function freshnessText(v: StreamView, nowMs: number): string {
  if (v.freshness.kind === 'year')
    return v.freshness.lastYear === null ? 'no value yet' : `last year with a value ${v.freshness.lastYear}`;
  const t = v.freshness.newest;
  return t === null ? 'no events yet' : `newest event ${toRfc3339(t)} (${formatAge(nowMs - t)})`;
}

function coverage(v: StreamView): SafeHtml {
  const t = v.timeline;
  if (t === null) return html`<p class="muted">coverage: nothing planned yet</p>`;
  const until = t.unit === 'time' ? 'now' : String(t.range.end);
  const from = t.unit === 'time' ? toRfc3339(t.range.start) : String(t.range.start);
  const gaps = t.gaps.length === 0 ? 'no gaps' : `${t.gaps.length} gap${t.gaps.length === 1 ? '' : 's'}`;
  const listed = t.gaps.slice(0, MAX_LISTED).map((g) => html`<li>gap ${formatRange(t.unit, g)}</li>`);
  const more = t.gaps.length > MAX_LISTED ? html`<li>… ${t.gaps.length - MAX_LISTED} more</li>` : null;
  return html`<p class="coverage">coverage ${from} .. ${until}: <strong>${percent(t.coveredFraction)}</strong>, ${gaps}</p>${timelineSvg(t)}
${t.gaps.length > 0 ? html`<details><summary>gaps</summary><ul>${listed}${more}</ul></details>` : null}`;
}

function problems(v: StreamView): SafeHtml | null {
  const s = v.status;
  const failed = s.failedPartitions
    .slice(0, MAX_LISTED)
    .map((f) => html`<li>failed <code>${f.partitionKey}</code>: [${f.kind ?? 'unknown'}] ${f.error ?? ''}</li>`);
  const partial = s.partialPartitions.slice(0, MAX_LISTED).map((p) => {
    const where = p.unresolved.map((r) => `${toRfc3339(r.lo)}..${toRfc3339(r.hi)}`).join(', ');
    return html`<li>partial <code>${p.partitionKey}</code>: unresolved ${where}</li>`;
  });
  const more =
    s.failedPartitions.length > MAX_LISTED
      ? html`<li>… ${s.failedPartitions.length - MAX_LISTED} more failed</li>`
      : null;
  // streamStatus reports the newest failed window's error as the last one: do not list it twice.
  const repeated = s.failedPartitions[0]?.error === s.lastError;
  const lastError =
    s.lastError && !repeated ? html`<li>last error: [${s.lastErrorKind ?? 'unknown'}] ${s.lastError}</li>` : null;
  if (failed.length + partial.length === 0 && lastError === null) return null;
  return html`<ul class="problems">${failed}${more}${partial}${lastError}</ul>`;
}

function streamCard(v: StreamView, nowMs: number): SafeHtml {
  const s = v.status;
  const p = s.partitions;
  const schedule = v.schedule === null ? 'not in the jobs file' : `${v.schedule}${v.enabled ? '' : ' (disabled)'}`;
  const counts = `${p.done} ingested, ${p.pending} queued, ${p.running} in progress, ${p.partial} partial, ${p.failed} failed`;
  const badge = p.failed > 0 ? html`<span class="badge bad">${p.failed} failed</span>` : null;
  return html`<article class="card stream" data-stream="${s.streamKey}">
<h3>${s.name ?? s.streamKey} <code>${s.streamKey}</code> <span class="badge">${s.operation}</span> ${badge}</h3>
<div class="facts">${fact('schedule', schedule)}${fact('freshness', freshnessText(v, nowMs))}${fact('last success', s.lastSuccessAt ? `${toRfc3339(s.lastSuccessAt.getTime())} (${formatAge(nowMs - s.lastSuccessAt.getTime())})` : 'never')}
${fact('partitions', counts)}${fact('billed calls', `${s.billedCallsToday} today, ${s.billedCalls} in total (${s.units} units)`)}${fact('rows written', String(s.rowsWritten))}</div>
${coverage(v)}${problems(v)}</article>`;
}

function legend(): SafeHtml {
  const items = LAYER_ORDER.map(
    (state) => html`<span><i style="background:${STATE_STYLE[state].color}"></i>${STATE_STYLE[state].label}</span>`,
  );
  return html`<div class="legend">${items}<span><i style="background:${GAP_COLOR}"></i>never planned</span></div>`;
}

function streamsSection(m: PageModel): SafeHtml {
  const cards = m.streams.map((v) => streamCard(v, m.nowMs));
  const body =
    cards.length > 0
      ? cards
      : html`<p class="muted">No streams yet: declare them in jobs.yaml or run <code>gateway-ingest backfill</code>.</p>`;
  return html`<section id="streams"><h2>Streams: freshness and coverage</h2>${legend()}${body}</section>`;
}

function chartSection(m: PageModel): SafeHtml {
  const total = m.days.reduce((n, d) => n + d.total, 0);
  const operations = [...new Set(m.days.flatMap((d) => Object.keys(d.byOperation)))].sort();
  const keys = operations.map(
    (o) => html`<span><i style="background:${OPERATION_COLORS[o] ?? '#777777'}"></i>${o}</span>`,
  );
  return html`<section id="billed"><h2>Billed calls per UTC day, last ${m.days.length} days</h2>
<div class="card">${billedChartSvg(m.days, m.budget.cap)}<div class="legend">${keys}<span class="muted">${total} billed calls in ${m.days.length} days (${m.days[0]?.day ?? ''} .. ${m.days.at(-1)?.day ?? ''})</span></div></div></section>`;
}

function budgetText(b: BudgetView): SafeHtml {
  if (b.cap === null)
    return html`<p id="day-budget">No daily cap (<code>BILLED_CALLS_PER_DAY</code> is not set). Billed calls counted today (${b.today}): ${b.usedToday}.</p>`;
  const state = (b.left ?? 0) <= 0 ? html`<span class="badge bad">exhausted</span>` : null;
  return html`<p id="day-budget">Daily cap <code>BILLED_CALLS_PER_DAY</code> ${b.cap}. Today (${b.today}): ${b.usedToday} used, <strong>${b.left} left</strong> ${state}</p>`;
}

function controlBadge(control: string): SafeHtml {
  const kind = control === 'paused' ? 'warn' : control === 'active' ? 'ok' : '';
  return html`<span class="badge ${kind}">${control}</span>`;
}

function backfillRow(b: BackfillRow): SafeHtml {
  const budget = b.maxBilledCalls === null ? `${b.billedCalls} (no limit)` : `${b.billedCalls} of ${b.maxBilledCalls}`;
  const progress = `${b.partitions.done} of ${b.partitions.total} ingested${b.partitions.failed > 0 ? `, ${b.partitions.failed} failed` : ''}`;
  return html`<tr data-backfill="${b.id}"><td><code>${b.id}</code></td><td>${b.operation}</td><td>${b.description}</td><td>${controlBadge(b.control)}</td><td>${budget}</td><td>${progress}</td><td>${toRfc3339(b.createdAt.getTime())}</td></tr>`;
}

function budgetSection(m: PageModel): SafeHtml {
  const paused = m.backfills.filter((b) => b.control === 'paused').length;
  const table =
    m.backfills.length === 0
      ? html`<p class="muted">No backfills recorded.</p>`
      : html`<table><thead><tr><th>backfill</th><th>operation</th><th>description</th><th>control</th><th>billed calls</th><th>partitions</th><th>created</th></tr></thead><tbody>${m.backfills.map(backfillRow)}</tbody></table>`;
  return html`<section id="budget"><h2>Budgets and pauses</h2><div class="card">${budgetText(m.budget)}
<p>${paused} paused backfill${paused === 1 ? '' : 's'}.</p>${table}</div></section>`;
}

export function renderStatusPage(m: PageModel): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>gateway-ingest status</title><style>${STYLE}</style></head>
<body><main><header><h1>gateway-ingest status</h1>
<nav><a href="/queues">Queues (Bull Board)</a><a href="/metrics">Metrics</a><a href="/readyz">Readiness</a></nav>
<span class="muted">as of ${toRfc3339(Math.floor(m.nowMs / 1000) * 1000)}</span></header>
${streamsSection(m)}${chartSection(m)}${budgetSection(m)}</main></body></html>`.text;
}

export function renderUnavailablePage(message: string): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>gateway-ingest status</title><style>${STYLE}</style></head>
<body><main><h1>gateway-ingest status</h1><p class="card">The status could not be read: ${message}</p>
<p><a href="/readyz">Readiness</a></p></main></body></html>`.text;
}
