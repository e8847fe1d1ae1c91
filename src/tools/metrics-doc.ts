/** docs/metrics.md, generated from the metric catalog (`npm run generate`; a test fails when it is stale). */
import { collectorList } from '../collectors/index.js';
import type { FamilyDef } from '../metrics/family.js';
import { allFamilies } from '../metrics/catalog.js';
import { TRUTH_RULES } from './metrics-doc-rules.js';

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderMetricsDoc(families: readonly FamilyDef[] = allFamilies()): string {
  const groups = new Map<string, FamilyDef[]>();
  for (const f of families) {
    const g = groups.get(f.collector) ?? [];
    g.push(f);
    groups.set(f.collector, g);
  }
  const described = new Map(collectorList().map((c) => [c.name as string, c]));
  const order = ['exporter', 'webhooks', ...collectorList().map((c) => c.name as string)].filter((g) => groups.has(g));
  for (const g of groups.keys()) if (!order.includes(g)) order.push(g);
  const lines: string[] = [
    '# Metrics reference',
    '',
    '<!-- Generated from the metric catalog (src/metrics/catalog.ts) by `npm run generate`. Do not edit. -->',
    '',
    `cbwatch exposes ${families.length} metric families. Every series from a collector also carries the label`,
    '`couchbase_cluster` (the configured cluster name). Units are base units: seconds, bytes, ratios 0–1;',
    'counters end in `_total`; `_info` metrics have the value 1 and carry strings as labels; enumerations are',
    'one-hot gauges (1 for the current value, 0 for the others).',
    '',
    ...TRUTH_RULES,
  ];
  for (const g of order) {
    const fams = (groups.get(g) ?? []).slice().sort((a, b) => a.name.localeCompare(b.name));
    const c = described.get(g);
    lines.push(`## ${g}`, '');
    if (c) lines.push(`${c.description} Default interval: ${c.defaultInterval / 1000}s. Couchbase role needed: ${c.role}.`, '');
    else if (g === 'exporter') lines.push('The exporter itself: collector status, requests to Couchbase, build, reachability.', '');
    else if (g === 'webhooks') lines.push('The Sync Gateway `document_changed` webhook receiver (see [webhooks.md](webhooks.md)).', '');
    lines.push('| metric | type | unit | labels | help |', '|---|---|---|---|---|');
    for (const f of fams) {
      const labels = (g === 'exporter' || g === 'webhooks' ? f.labels : ['couchbase_cluster', ...f.labels]).map((l) => `\`${l}\``).join(', ');
      lines.push(`| \`${f.name}\` | ${f.type} | ${f.unit || '—'} | ${labels || '—'} | ${cell(f.help)} |`);
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
