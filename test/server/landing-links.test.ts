/**
 * The landing page for a newcomer (issue 26, item 5): readable on a narrow screen (viewport tag), a failing
 * collector under "Needs a look" and not only in the table, each problem linked to its runbook entry (an
 * anchor that exists in alerts/runbook.md), and links to the docs. Oracles: the runbook's own headings, the
 * Dockerfile's documentation label and the rules' runbook_url base.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CollectorStatus } from '../../src/metrics/store.js';
import { SampleSet, defineFamily } from '../../src/metrics/family.js';
import { DOCS_BASE, landingPage } from '../../src/server/landing.js';
import { findProblems } from '../../src/metrics/problems.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

function status(over: Partial<CollectorStatus>): CollectorStatus {
  return {
    cluster: 'prod',
    collector: 'nodes',
    ok: true,
    lastError: undefined,
    lastDurationSeconds: 0.1,
    lastSuccessAt: NOW - 5000,
    lastPollAt: NOW - 5000,
    series: 10,
    requests: 1,
    skipped: new Map(),
    itemErrors: new Map(),
    droppedValues: new Map(),
    notApplicable: undefined,
    ...over,
  } as CollectorStatus;
}

/** The "Needs a look" list items, as text with their links. */
function needsALook(html: string): string[] {
  const section = /<h2>Needs a look<\/h2>(.*?)<h2>Collectors<\/h2>/s.exec(html)?.[1] ?? '';
  return [...section.matchAll(/<li[^>]*>(.*?)<\/li>/gs)].map((m) => m[1] as string);
}

/** The anchors GitHub gives the runbook's headings: lower case. */
const runbookAnchors = new Set(
  readFileSync(join(ROOT, 'alerts', 'runbook.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('### '))
    .map((l) => l.slice(4).trim().toLowerCase()),
);

describe('landing page', () => {
  it('has a viewport tag, and links to the docs at the base the rules and the image use', () => {
    const html = landingPage({ version: '1.0.0', statuses: [], clusters: [], webhooks: false, now: NOW, problems: [] });
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    // The same repository as the Dockerfile's documentation label and the alert rules' runbook_url.
    const label = /org\.opencontainers\.image\.documentation="(https:\/\/github\.com\/[^/"#]+\/[^/"#]+)/.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
    expect(label).toBeDefined();
    expect(DOCS_BASE.startsWith(`${label}/blob/`)).toBe(true);
    const rules = readFileSync(join(ROOT, 'alerts', 'cbwatch.rules.yml'), 'utf8');
    expect(rules).toContain(`runbook_url: ${DOCS_BASE}/alerts/runbook.md#`);
    for (const doc of ['README.md', 'docs/configuration.md', 'docs/metrics.md', 'alerts/runbook.md']) expect(html).toContain(`href="${DOCS_BASE}/${doc}"`);
    // Another base (a mirror) moves every link.
    const mirrored = landingPage({ version: '1', statuses: [], clusters: [], webhooks: false, now: NOW, problems: [], docsBase: 'https://docs.example.com/cbwatch/' });
    expect(mirrored).toContain('href="https://docs.example.com/cbwatch/docs/configuration.md"');
    expect(mirrored).not.toContain(DOCS_BASE);
  });

  it('lists a failing collector under "Needs a look" with its reason, on one bounded line, linked to its runbook entry', () => {
    const reason = `HTTP 500 from /pools/default\n${'x'.repeat(1000)}`;
    const html = landingPage({
      version: '1',
      statuses: [status({ collector: 'nodes', ok: false, lastError: reason }), status({ collector: 'buckets' }), status({ collector: 'backup', ok: false, notApplicable: 'no backup service' })],
      clusters: [{ name: 'prod', url: 'https://cb1:18091' }],
      webhooks: false,
      now: NOW,
      problems: [],
    });
    const items = needsALook(html);
    expect(items).toHaveLength(1);
    const item = items[0] as string;
    expect(item).toContain('prod: collector nodes failed its latest poll: HTTP 500 from /pools/default x');
    expect(item).not.toContain('\n');
    expect(item.length).toBeLessThan(500);
    expect(item).toContain(`href="${DOCS_BASE}/alerts/runbook.md#cbwatchcollectorfailing"`);
    expect(html).not.toContain('Nothing in the latest polls.');
  });

  it('links every problem findProblems can report to an entry that exists in alerts/runbook.md', () => {
    const fam = (name: string, labels: string[]) => defineFamily('t', name, 'gauge', 'h', labels);
    const set = new SampleSet();
    const t = NOW / 1000;
    set.add(fam('couchbase_node_status', ['node', 'status']), { node: 'n2:8091', status: 'unhealthy' }, 1);
    set.add(fam('couchbase_node_membership', ['node', 'membership']), { node: 'n3:8091', membership: 'inactiveFailed' }, 1);
    set.add(fam('couchbase_node_membership', ['node', 'membership']), { node: 'n4:8091', membership: 'inactiveAdded' }, 1);
    set.add(fam('couchbase_autofailover_events', []), {}, 1);
    set.add(fam('couchbase_autofailover_max_events', []), {}, 3);
    set.add(fam('couchbase_trusted_ca_not_after_timestamp_seconds', ['id', 'subject']), { id: '1', subject: 'CN=a' }, t + 20 * 86400);
    set.add(fam('couchbase_trusted_ca_not_after_timestamp_seconds', ['id', 'subject']), { id: '2', subject: 'CN=b' }, t + 3 * 86400);
    set.add(fam('couchbase_trusted_ca_not_after_timestamp_seconds', ['id', 'subject']), { id: '3', subject: 'CN=c' }, t - 3 * 86400);
    const xdcr = ['source_bucket', 'target_cluster_name', 'target_bucket'];
    set.add(fam('couchbase_xdcr_replication_errors', xdcr), { source_bucket: 'a', target_cluster_name: 'dr', target_bucket: 'a' }, 2);
    set.add(fam('couchbase_xdcr_replication_paused', xdcr), { source_bucket: 'b', target_cluster_name: 'dr', target_bucket: 'b' }, 1);
    set.add(fam('couchbase_xdcr_remote_cluster_deleted', ['target_cluster_name']), { target_cluster_name: 'old' }, 1);
    set.add(fam('couchbase_bucket_quota_used_ratio', ['bucket']), { bucket: 'q' }, 0.9);
    set.add(fam('couchbase_search_slow_queries', ['index']), { index: 'i' }, 1);
    set.add(fam('couchbase_backup_repository_healthy', ['repository', 'state']), { repository: 'r', state: 'active' }, 0);
    set.add(fam('couchbase_security_tls_min_version', ['service', 'version']), { service: 'data', version: 'tlsv1' }, 1);
    set.add(fam('couchbase_security_ui_over_http_disabled', []), {}, 0);
    const problems = findProblems([{ base: { couchbase_cluster: 'prod' }, set }], NOW);
    expect(problems.length).toBeGreaterThanOrEqual(15);
    const html = landingPage({ version: '1', statuses: [], clusters: [], webhooks: false, now: NOW, problems });
    const items = needsALook(html);
    expect(items).toHaveLength(problems.length);
    const expected: Array<[RegExp, string]> = [
      [/node n2:8091 is unhealthy/, 'couchbasenodeunhealthy'],
      [/node n3:8091 was failed over/, 'couchbasenodefailedover'],
      [/n4:8091 was added/, 'couchbaseclusterunbalanced'],
      [/auto-failover used 1 of 3/, 'couchbaseautofailoveroccurred'],
      [/CN=a expires in 20 days/, 'couchbasecertificateexpiringsoon'],
      [/CN=b expires in 3 days/, 'couchbasecertificateexpirycritical'],
      [/CN=c expired 3 days ago/, 'couchbasecertificateexpired'],
      [/XDCR a → dr\/a: 2 error/, 'couchbasexdcrreplicationerrors'],
      [/XDCR b → dr\/b is paused/, 'couchbasexdcrreplicationpaused'],
      [/remote cluster old is marked deleted/, 'couchbasexdcrremoteclusterdeleted'],
      [/bucket q uses 90%/, 'couchbasebucketmemorynearquota'],
      [/search index i: 1 slow query/, 'couchbasesearchslowqueries'],
      [/backup repository r/, 'couchbasebackuprepositoryunhealthy'],
      [/TLS minimum version of data is tlsv1/, 'couchbaseweaktlsminversion'],
      [/web console is served over plain http/, 'couchbaseuioverhttpenabled'],
    ];
    for (const [text, anchor] of expected) {
      const item = items.find((i) => text.test(i));
      expect(item, String(text)).toBeDefined();
      expect(runbookAnchors.has(anchor), anchor).toBe(true);
      expect(item).toContain(`href="${DOCS_BASE}/alerts/runbook.md#${anchor}"`);
    }
    // Every link on the list leads to a runbook heading that exists.
    for (const m of html.matchAll(/runbook\.md#([a-z0-9]+)"/g)) expect(runbookAnchors.has(m[1] as string), m[1]).toBe(true);
  });
});
