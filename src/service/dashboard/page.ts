/**
 * The status page at `/`: server-rendered HTML with inline SVG, no script. Every value from the
 * database or jobs.yaml goes through `html`, which escapes it.
 */
import { CARD_STATE, CARD_STATE_LABEL, listedElsewhere, type CardState } from './cards.js';
import { LAYER_ORDER, type BudgetView, type CardView, type PageModel } from './model.js';
import type { BackfillRow } from './queries.js';
import { billedChartSvg, formatRange, GAP_COLOR, OPERATION_COLORS, STATE_STYLE, timelineSvg } from './charts.js';
import { html, trusted, type SafeHtml } from './html.js';
import { toRfc3339 } from '../../domain/time.js';

const MAX_LISTED = 5;

const STATE_BADGE: Record<CardState, string> = {
  [CARD_STATE.failed]: 'bad',
  [CARD_STATE.retrying]: 'warn',
  [CARD_STATE.partial]: 'warn',
  [CARD_STATE.running]: '',
  [CARD_STATE.pending]: '',
  [CARD_STATE.done]: 'ok',
  [CARD_STATE.idle]: '',
};

const STYLE = trusted(
  `
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
.badge.warn{background:#fbecc8;color:#6b4a00}.badge.bad{background:#f8d8d6;color:#7c1d17}` +
    `.badge.ok{background:#d6f0dd;color:#175a2a}
svg text{font:11px system-ui,sans-serif;fill:#555}
.legend{display:flex;gap:16px;flex-wrap:wrap;font-size:12px;color:#444}
.legend i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;vertical-align:-1px}
ul.problems{margin:4px 0 0;padding-left:18px}ul.problems li{color:#7c1d17}
p.resolved{margin:4px 0 0;color:#66707a}details.series{margin-top:6px}
table{border-collapse:collapse;width:100%;background:#fff}` +
    `th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #e4e7eb;font-size:13px}
th{color:#66707a;font-weight:600}
`,
);

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

function freshnessText(c: CardView, nowMs: number): string {
  const f = c.freshness;
  if (f.kind === 'time')
    return f.newest === null ? 'no events yet' : `newest event ${toRfc3339(f.newest)} (${formatAge(nowMs - f.newest)})`;
  if (f.newest === null) return 'no value yet';
  const years = f.oldest === f.newest ? String(f.newest) : `${f.oldest} .. ${f.newest} across series`;
  return `last year with a value ${years}${f.withoutValue > 0 ? `, ${f.withoutValue} series without a value` : ''}`;
}

function coverage(c: CardView): SafeHtml {
  const t = c.timeline;
  if (t === null) return html`<p class="muted">coverage: nothing planned yet</p>`;
  const until = t.unit === 'time' ? 'now' : String(t.range.end);
  const from = t.unit === 'time' ? toRfc3339(t.range.start) : String(t.range.start);
  const gaps = t.gaps.length === 0 ? 'no gaps' : `${t.gaps.length} gap${t.gaps.length === 1 ? '' : 's'}`;
  const listed = t.gaps.slice(0, MAX_LISTED).map((g) => html`<li>gap ${formatRange(t.unit, g)}</li>`);
  const more = t.gaps.length > MAX_LISTED ? html`<li>… ${t.gaps.length - MAX_LISTED} more</li>` : null;
  const across = c.series.length > 1 ? ` of ${c.series.length} series` : '';
  const covered = html`<strong>${percent(t.coveredFraction)}</strong>`;
  const details = t.gaps.length > 0 ? html`<details><summary>gaps</summary><ul>${listed}${more}</ul></details>` : null;
  return html`<p class="coverage">coverage${across} ${from} .. ${until}: ${covered}, ${gaps}</p>${timelineSvg(t)}
${details}`;
}

function timeOf(d: Date, nowMs: number): string {
  return `${toRfc3339(d.getTime())} (${formatAge(nowMs - d.getTime())})`;
}

function listed<T>(items: T[], what: string, line: (item: T) => SafeHtml): SafeHtml[] {
  const shown = items.slice(0, MAX_LISTED).map(line);
  return items.length > MAX_LISTED ? [...shown, html`<li>… ${items.length - MAX_LISTED} more ${what}</li>`] : shown;
}

/** What is wrong now: failed and retrying partitions, partial windows, and the last error while it is current. */
function problems(c: CardView, nowMs: number): SafeHtml | null {
  // A card of several series names the series of each partition.
  const where = (streamKey: string, partitionKey: string) =>
    c.series.length > 1
      ? html`<code>${streamKey}</code> <code>${partitionKey}</code>`
      : html`<code>${partitionKey}</code>`;
  const reason = (kind: string | null, error: string | null) => html`[${kind ?? 'unknown'}] ${error ?? ''}`;
  const failed = listed(
    c.failed,
    CARD_STATE_LABEL[CARD_STATE.failed],
    (f) => html`<li class="current">failed ${where(f.streamKey, f.partitionKey)}: ${reason(f.kind, f.error)}</li>`,
  );
  const retryingShown = c.retrying.slice(0, MAX_LISTED);
  const retryingMore = c.partitions.retrying - retryingShown.length;
  const retrying = [
    ...retryingShown.map((r) => {
      const what = html`${where(r.streamKey, r.partitionKey)} since ${timeOf(r.since, nowMs)}`;
      return html`<li class="current">retrying ${what}: ${reason(r.kind, r.error)}</li>`;
    }),
    retryingMore > 0 ? html`<li>… ${retryingMore} more retrying</li>` : null,
  ];
  const partial = listed(c.partial, 'partial', (p) => {
    const gaps = p.unresolved.map((r) => `${toRfc3339(r.lo)}..${toRfc3339(r.hi)}`).join(', ');
    return html`<li>partial ${where(p.streamKey, p.partitionKey)}: unresolved ${gaps}</li>`;
  });
  const e = c.error;
  // A failed or retrying partition already lists its own error: the last error is not listed twice.
  const lastError =
    e?.currency === 'current' && !listedElsewhere(e, [...c.failed, ...c.retrying])
      ? html`<li class="current">last error at ${timeOf(e.at, nowMs)}: [${e.kind}] ${e.error ?? ''}</li>`
      : null;
  if (failed.length + retryingShown.length + partial.length === 0 && lastError === null) return null;
  return html`<ul class="problems">${failed}${retrying}${partial}${lastError}</ul>`;
}

/** An error a later success overcame: said so, with when, so that it does not read as a live problem. */
function resolvedError(c: CardView, nowMs: number): SafeHtml | null {
  const e = c.error;
  if (e?.currency !== 'resolved') return null;
  const series = c.series.length > 1 ? html` in <code>${e.streamKey}</code>` : null;
  const badge = html`<span class="badge ok">resolved</span>`;
  const what = html`the last error${series}, [${e.kind}] ${e.error ?? ''} at ${toRfc3339(e.at.getTime())}`;
  const overcome = html`was overcome by a later success at ${timeOf(e.overcameAt, nowMs)}`;
  return html`<p class="resolved" data-overcame-at="${e.overcameAt.toISOString()}">${badge} ${what}, ${overcome}</p>`;
}

function stateBadge(state: CardState): SafeHtml {
  return html`<span class="badge ${STATE_BADGE[state]}" data-state="${state}">${CARD_STATE_LABEL[state]}</span>`;
}

/** Several series: each one's state, progress and freshness, folded away. */
function seriesTable(c: CardView): SafeHtml | null {
  if (c.series.length <= 1) return null;
  const rows = c.series.map((s) => {
    const p = s.status.partitions;
    const total = p.done + p.pending + p.running + p.partial + p.failed;
    const fresh =
      s.freshness.kind === 'year'
        ? (s.freshness.lastYear ?? 'none')
        : s.freshness.newest === null
          ? 'none'
          : toRfc3339(s.freshness.newest);
    const covered = s.coveredFraction === null ? '' : percent(s.coveredFraction);
    const key = html`<td><code>${s.status.streamKey}</code></td><td>${stateBadge(s.state)}</td>`;
    const cells = html`<td>${p.done} of ${total}</td><td>${covered}</td><td>${fresh}</td>`;
    return html`<tr data-series="${s.status.streamKey}">${key}${cells}<td>${s.status.billedCalls}</td></tr>`;
  });
  const head = c.operation === 'indicator' ? 'last year with a value' : 'newest event';
  const columns = html`<th>series</th><th>state</th><th>partitions ingested</th><th>coverage</th><th>${head}</th>`;
  const thead = html`<thead><tr>${columns}<th>billed calls</th></tr></thead>`;
  const summary = html`<summary>${c.series.length} series</summary>`;
  return html`<details class="series">${summary}<table>${thead}<tbody>${rows}</tbody></table></details>`;
}

function formatUnits(units: number): string {
  return String(Math.round(units * 100) / 100);
}

const AD_HOC_TITLE = 'read by an ad-hoc backfill, or by a stream since removed from jobs.yaml';

function streamCard(c: CardView, nowMs: number): SafeHtml {
  const p = c.partitions;
  const t = c.totals;
  const schedule =
    c.origin === 'ad-hoc' ? 'not in the jobs file' : `${c.schedule ?? ''}${c.enabled === false ? ' (disabled)' : ''}`;
  const retrying = p.retrying > 0 ? ` (${p.retrying} of them retrying)` : '';
  const counts =
    `${p.done} of ${p.total} ingested, ${p.pending} queued, ${p.running} in progress${retrying}, ` +
    `${p.partial} partial, ${p.failed} failed`;
  const key = c.series.length === 1 ? html`<code>${c.series[0]!.status.streamKey}</code>` : null;
  const adHoc =
    c.origin === 'ad-hoc' ? html`<span class="badge" title="${AD_HOC_TITLE}">not in jobs.yaml</span>` : null;
  const stream = c.origin === 'jobs' ? html` data-stream="${c.title}"` : null;
  const state = html`data-origin="${c.origin}" data-state="${c.state}"`;
  const when = [
    fact('schedule', schedule),
    fact('freshness', freshnessText(c, nowMs)),
    fact('last success', c.lastSuccessAt ? timeOf(c.lastSuccessAt, nowMs) : 'never'),
  ];
  const billed = `${t.billedCallsToday} today, ${t.billedCalls} in total (${formatUnits(t.units)} units)`;
  const how = [
    c.series.length > 1 ? fact('series', String(c.series.length)) : null,
    fact('partitions', counts),
    fact('billed calls', billed),
    fact('rows written', String(t.rowsWritten)),
  ];
  return html`<article class="card stream" data-card="${c.id}"${stream} ${state}>
<h3>${c.title} ${key} <span class="badge">${c.operation}</span> ${stateBadge(c.state)} ${adHoc}</h3>
<div class="facts">${when}
${how}</div>
${coverage(c)}${problems(c, nowMs)}${resolvedError(c, nowMs)}${seriesTable(c)}</article>`;
}

function legend(): SafeHtml {
  const items = LAYER_ORDER.map(
    (state) => html`<span><i style="background:${STATE_STYLE[state].color}"></i>${STATE_STYLE[state].label}</span>`,
  );
  return html`<div class="legend">${items}<span><i style="background:${GAP_COLOR}"></i>never planned</span></div>`;
}

const AD_HOC_NOTE =
  'Stream keys no stream of jobs.yaml reads: ad-hoc backfills, or streams since removed from the file.';

function streamsSection(m: PageModel): SafeHtml {
  const jobs = m.cards.filter((c) => c.origin === 'jobs').map((c) => streamCard(c, m.nowMs));
  const adHoc = m.cards.filter((c) => c.origin === 'ad-hoc').map((c) => streamCard(c, m.nowMs));
  const command = html`<code>gateway-ingest backfill</code>`;
  const body =
    m.cards.length > 0 ? jobs : html`<p class="muted">No streams yet: declare them in jobs.yaml or run ${command}.</p>`;
  const others =
    adHoc.length > 0 ? html`<h2 id="ad-hoc">Not in jobs.yaml</h2><p class="muted">${AD_HOC_NOTE}</p>${adHoc}` : null;
  const title = html`<h2>Streams of jobs.yaml: freshness and coverage</h2>`;
  return html`<section id="streams">${title}${legend()}${body}${others}</section>`;
}

function chartSection(m: PageModel): SafeHtml {
  const total = m.days.reduce((n, d) => n + d.total, 0);
  const operations = [...new Set(m.days.flatMap((d) => Object.keys(d.byOperation)))].sort();
  const keys = operations.map(
    (o) => html`<span><i style="background:${OPERATION_COLORS[o] ?? '#777777'}"></i>${o}</span>`,
  );
  const span = `${m.days[0]?.day ?? ''} .. ${m.days.at(-1)?.day ?? ''}`;
  const summary = html`<span class="muted">${total} billed calls in ${m.days.length} days (${span})</span>`;
  return html`<section id="billed"><h2>Billed calls per UTC day, last ${m.days.length} days</h2>
<div class="card">${billedChartSvg(m.days, m.budget.cap)}<div class="legend">${keys}${summary}</div></div></section>`;
}

function budgetText(b: BudgetView): SafeHtml {
  const cap = html`<code>BILLED_CALLS_PER_DAY</code>`;
  if (b.cap === null) {
    const counted = html`Billed calls counted today (${b.today}): ${b.usedToday}.`;
    return html`<p id="day-budget">No daily cap (${cap} is not set). ${counted}</p>`;
  }
  const state = (b.left ?? 0) <= 0 ? html`<span class="badge bad">exhausted</span>` : null;
  const used = html`${b.usedToday} used, <strong>${b.left} left</strong>`;
  return html`<p id="day-budget">Daily cap ${cap} ${b.cap}. Today (${b.today}): ${used} ${state}</p>`;
}

function controlBadge(control: string): SafeHtml {
  const kind = control === 'paused' ? 'warn' : control === 'active' ? 'ok' : '';
  return html`<span class="badge ${kind}">${control}</span>`;
}

function backfillRow(b: BackfillRow): SafeHtml {
  const budget = b.maxBilledCalls === null ? `${b.billedCalls} (no limit)` : `${b.billedCalls} of ${b.maxBilledCalls}`;
  const failed = b.partitions.failed > 0 ? `, ${b.partitions.failed} failed` : '';
  const progress = `${b.partitions.done} of ${b.partitions.total} ingested${failed}`;
  const what = html`<td><code>${b.id}</code></td><td>${b.operation}</td><td>${b.description}</td>`;
  const state = html`<td>${controlBadge(b.control)}</td><td>${budget}</td><td>${progress}</td>`;
  return html`<tr data-backfill="${b.id}">${what}${state}<td>${toRfc3339(b.createdAt.getTime())}</td></tr>`;
}

function budgetSection(m: PageModel): SafeHtml {
  const paused = m.backfills.filter((b) => b.control === 'paused').length;
  const columns = html`<th>backfill</th><th>operation</th><th>description</th><th>control</th>`;
  const thead = html`<thead><tr>${columns}<th>billed calls</th><th>partitions</th><th>created</th></tr></thead>`;
  const table =
    m.backfills.length === 0
      ? html`<p class="muted">No backfills recorded.</p>`
      : html`<table>${thead}<tbody>${m.backfills.map(backfillRow)}</tbody></table>`;
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
  const head = html`<head><meta charset="utf-8"><title>gateway-ingest status</title><style>${STYLE}</style></head>`;
  return html`<!doctype html><html lang="en">${head}
<body><main><h1>gateway-ingest status</h1><p class="card">The status could not be read: ${message}</p>
<p><a href="/readyz">Readiness</a></p></main></body></html>`.text;
}
