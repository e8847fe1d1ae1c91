/** The landing page: version, clusters, and each collector's last success, duration, series and error. */
import type { CollectorStatus } from '../metrics/store.js';
import type { Problem } from './problems.js';

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
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
}): string {
  const rows = opts.statuses
    .map((s) => {
      const state = s.ok === undefined ? 'pending' : s.notApplicable ? 'n/a' : s.ok ? 'ok' : 'failed';
      const detail = s.notApplicable ?? s.lastError ?? s.note ?? '';
      return `<tr class="${state}"><td>${esc(s.cluster)}</td><td>${esc(s.collector)}</td><td>${state}</td><td>${esc(ago(s.lastSuccessAt, opts.now))}</td><td>${s.lastDurationSeconds === undefined ? '' : s.lastDurationSeconds.toFixed(3)}</td><td>${s.series}</td><td>${s.requests}</td><td>${esc(detail)}</td></tr>`;
    })
    .join('\n');
  const clusters = opts.clusters.map((c) => `<li><b>${esc(c.name)}</b> — ${esc(c.url)}</li>`).join('');
  const problems =
    opts.problems === undefined
      ? ''
      : `<h2>Needs a look</h2>${
          opts.problems.length === 0
            ? '<p>Nothing in the latest polls.</p>'
            : `<ul class="problems">${opts.problems.map((p) => `<li class="${p.severity}"><b>${esc(p.severity)}</b> ${esc(p.cluster)}: ${esc(p.text)}</li>`).join('')}</ul>`
        }<p>From the latest polls, at the alerts' thresholds but without their durations; the alert rules in <code>alerts/</code> decide what pages.</p>\n`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cbwatch</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}
tr.failed td{background:#fde8e8}tr.pending td{color:#888}tr.n\\/a td{color:#666}code{background:#f3f3f3;padding:0 .3em}
li.critical b{color:#b00}li.warning b{color:#b60}li.info b{color:#06c}</style></head>
<body><h1>cbwatch ${esc(opts.version)}</h1>
<p>Prometheus exporter for Couchbase Server. <a href="/metrics">Metrics</a> · <a href="/-/healthy">Health</a> · <a href="/-/ready">Readiness</a></p>
<h2>Clusters</h2><ul>${clusters || '<li>none configured</li>'}</ul>
${opts.webhooks ? '<p>Sync Gateway webhook receiver: enabled.</p>' : ''}
${problems}<h2>Collectors</h2>
<table><thead><tr><th>cluster</th><th>collector</th><th>state</th><th>last success</th><th>duration (s)</th><th>series</th><th>requests</th><th>detail</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>
`;
}
