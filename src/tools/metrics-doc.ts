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
  lines.push(...PARTIAL_FAILURES);
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The partial-failure rule, as an operator reads it (a block of its own, after the families). */
const PARTIAL_FAILURES: readonly string[] = [
  '## When one item fails',
  '',
  'A poll reads a list (buckets, nodes, repositories, settings…) and then items of it: a bucket\'s scopes, a',
  'node\'s certificate, a search index\'s queries, a repository state\'s list, a security sub-endpoint, an entry',
  'of the tasks, node, trusted-CA or repository list. When one item fails — an HTTP 4xx/5xx, a time-out, a reset',
  'connection, a body that does not parse — only that item\'s series are left out of the poll; its neighbours are exported as',
  'usual, `cbwatch_collector_success` stays 1, and the failure is counted in',
  '`cbwatch_collector_item_errors_total{collector,reason}` (reason: `http_4xx`, `http_5xx`, `not_found`,',
  '`timeout`, `network`, `bad_body`, `too_large`, `forbidden`, `other`). The item\'s series come back with the',
  'first poll that reads it again. Alert on that counter rising (`increase(...[15m]) > 0`) to see an item that',
  'keeps failing.',
  '',
  'The poll fails (`cbwatch_collector_success` 0, every series of the collector dropped) only when its list',
  'request fails, when every item fails, or when its deadline passes. What is not a failure: an item that has',
  'just gone (a bucket deleted between the list and its call answers 404) and a certificate or security call',
  'that needs a role the monitoring user lacks (403, logged once with the missing permission); both are left',
  'out and counted as skipped.',
  '',
];
