/** The landing page: version, clusters, and each collector's last success, duration, series and error. */
import type { CollectorStatus } from '../metrics/store.js';

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
}): string {
  const rows = opts.statuses
    .map((s) => {
      const state = s.ok === undefined ? 'pending' : s.notApplicable ? 'n/a' : s.ok ? 'ok' : 'failed';
      const detail = s.notApplicable ?? s.lastError ?? '';
      return `<tr class="${state}"><td>${esc(s.cluster)}</td><td>${esc(s.collector)}</td><td>${state}</td><td>${esc(ago(s.lastSuccessAt, opts.now))}</td><td>${s.lastDurationSeconds === undefined ? '' : s.lastDurationSeconds.toFixed(3)}</td><td>${s.series}</td><td>${s.requests}</td><td>${esc(detail)}</td></tr>`;
    })
    .join('\n');
  const clusters = opts.clusters.map((c) => `<li><b>${esc(c.name)}</b> — ${esc(c.url)}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cbwatch</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}
tr.failed td{background:#fde8e8}tr.pending td{color:#888}tr.n\\/a td{color:#666}code{background:#f3f3f3;padding:0 .3em}</style></head>
<body><h1>cbwatch ${esc(opts.version)}</h1>
<p>Prometheus exporter for Couchbase Server. <a href="/metrics">Metrics</a> · <a href="/-/healthy">Health</a> · <a href="/-/ready">Readiness</a></p>
<h2>Clusters</h2><ul>${clusters || '<li>none configured</li>'}</ul>
${opts.webhooks ? '<p>Sync Gateway webhook receiver: enabled.</p>' : ''}
<h2>Collectors</h2>
<table><thead><tr><th>cluster</th><th>collector</th><th>state</th><th>last success</th><th>duration (s)</th><th>series</th><th>requests</th><th>detail</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>
`;
}
