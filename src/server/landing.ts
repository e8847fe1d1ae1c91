/** The landing page: version, clusters, and each collector's last success, duration, series and error. */
import type { CollectorStatus } from '../metrics/store.js';
import type { Problem } from '../metrics/problems.js';
import { byCodeUnit } from '../text-order.js';
import { formatSlot } from '../cron.js';
import { formatDuration } from '../config/units.js';

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/**
 * Where the page's links lead. An installed package has no repository beside it, and the exporter serves no
 * documents of its own, so the links go to the project's published documents: the same base the shipped alert
 * rules carry in runbook_url (src/tools/alert-config.ts DEFAULT_RUNBOOK_BASE) and the image its
 * org.opencontainers.image.documentation label. The landing page's `docsBase` option points them elsewhere
 * (a mirror, a fork).
 */
export const DOCS_BASE = 'https://github.com/cbwatch/cbwatch/blob/main';

/** A failing collector's reason on the page: one line, at most this many characters. */
const REASON_MAX = 200;

function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > REASON_MAX ? `${t.slice(0, REASON_MAX - 1)}…` : t;
}

/** "Needs a look" holds the collectors failing in their latest poll too: without them a cluster cbwatch cannot read looks calm. */
function failingCollectors(statuses: readonly CollectorStatus[]): Problem[] {
  return statuses
    .filter((s) => s.ok === false && s.notApplicable === undefined)
    .map((s) => ({
      cluster: s.cluster,
      severity: 'warning' as const,
      text: `collector ${s.collector} failed its latest poll${s.lastError === undefined ? '' : `: ${oneLine(s.lastError)}`} (its series are absent)`,
      alert: 'CbwatchCollectorFailing',
    }));
}

function ago(ms: number | undefined, now: number): string {
  if (ms === undefined) return 'never';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
}

export function landingPage(opts: {
  version: string;
  statuses: readonly CollectorStatus[];
  clusters: ReadonlyArray<{ name: string; url: string }>;
  webhooks: boolean;
  now: number;
  /** What needs a look now (problems.ts); absent: the section is left out. */
  problems?: readonly Problem[];
  /** Where the metrics are served (`--web.telemetry-path`); default /metrics. */
  telemetryPath?: string;
  /** Base of the documentation links (default DOCS_BASE): `<base>/alerts/runbook.md#<alert>`, `<base>/docs/…`. */
  docsBase?: string;
}): string {
  const docs = (opts.docsBase ?? DOCS_BASE).replace(/\/+$/, '');
  const runbook = (p: Problem): string => {
    const href = p.alert !== undefined ? `${docs}/alerts/runbook.md#${p.alert.toLowerCase()}` : p.runbook !== undefined ? `${docs}/${p.runbook}` : undefined;
    return href === undefined ? '' : ` <a class="runbook" href="${esc(href)}">runbook</a>`;
  };
  const rank = { critical: 0, warning: 1, info: 2 } as const;
  const listed =
    opts.problems === undefined
      ? undefined
      : [...failingCollectors(opts.statuses), ...opts.problems].sort((a, b) => byCodeUnit(a.cluster, b.cluster) || rank[a.severity] - rank[b.severity]);
  /** When the collector polls: its interval, or its cron schedule, zone and next slot. */
  const polls = (s: CollectorStatus): string => {
    if (s.schedule !== undefined) {
      const next = s.nextSlotAt === undefined ? '' : `, next ${formatSlot(s.nextSlotAt, s.schedule.timezone)}`;
      return `at "${s.schedule.expression}" (${s.schedule.timezone ?? 'local time'})${next}`;
    }
    return s.intervalSeconds === undefined ? '' : `every ${formatDuration(s.intervalSeconds * 1000)}`;
  };
  const rows = opts.statuses
    .map((s) => {
      const state = s.ok === undefined ? 'pending' : s.notApplicable ? 'n/a' : s.ok ? 'ok' : 'failed';
      const detail = s.notApplicable ?? s.lastError ?? s.note ?? '';
      return `<tr class="${state}"><td>${esc(s.cluster)}</td><td>${esc(s.collector)}</td><td>${esc(polls(s))}</td><td>${state}</td><td>${esc(ago(s.lastSuccessAt, opts.now))}</td><td>${s.lastDurationSeconds === undefined ? '' : s.lastDurationSeconds.toFixed(3)}</td><td>${s.series}</td><td>${s.requests}</td><td>${esc(detail)}</td></tr>`;
    })
    .join('\n');
  const clusters = opts.clusters.map((c) => `<li><b>${esc(c.name)}</b> — ${esc(c.url)}</li>`).join('');
  const problems =
    listed === undefined
      ? ''
      : `<h2>Needs a look</h2>${
          listed.length === 0
            ? '<p>Nothing in the latest polls.</p>'
            : `<ul class="problems">${listed.map((p) => `<li class="${p.severity}"><b>${esc(p.severity)}</b> ${esc(p.cluster)}: ${esc(p.text)}${runbook(p)}</li>`).join('')}</ul>`
        }<p>From the latest polls, at the alerts' thresholds but without their durations; the alert rules in <code>alerts/</code> decide what pages.</p>\n`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>cbwatch</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222;overflow-wrap:anywhere}table{border-collapse:collapse;display:block;overflow-x:auto}td,th{overflow-wrap:normal}td:last-child{overflow-wrap:anywhere;min-width:16em}@media (max-width:600px){body{margin:.8em}}td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}
tr.failed td{background:#fde8e8}tr.pending td{color:#888}tr.n\\/a td{color:#666}code{background:#f3f3f3;padding:0 .3em}
li.critical b{color:#b00}li.warning b{color:#b60}li.info b{color:#06c}</style></head>
<body><h1>cbwatch ${esc(opts.version)}</h1>
<p>Prometheus exporter for Couchbase Server. <a href="${esc(opts.telemetryPath ?? '/metrics')}">Metrics</a> · <a href="/-/healthy">Health</a> · <a href="/-/ready">Readiness</a> · Docs: <a href="${esc(`${docs}/README.md`)}">README</a>, <a href="${esc(`${docs}/docs/configuration.md`)}">configuration</a>, <a href="${esc(`${docs}/docs/metrics.md`)}">metrics</a>, <a href="${esc(`${docs}/alerts/runbook.md`)}">runbook</a></p>
<h2>Clusters</h2><ul>${clusters || '<li>none configured</li>'}</ul>
${opts.webhooks ? '<p>Sync Gateway webhook receiver: enabled.</p>' : ''}
${problems}<h2>Collectors</h2>
<table><thead><tr><th>cluster</th><th>collector</th><th>polls</th><th>state</th><th>last success</th><th>duration (s)</th><th>series</th><th>requests</th><th>detail</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>
`;
}
