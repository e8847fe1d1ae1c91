/**
 * Issue 38, item 6: every item of "Needs a look" links to its runbook entry. The kinds are enumerated from
 * problems.ts itself (each `add(…)` is one kind, read as text, so a new kind without a case here fails), a snapshot
 * raises every one of them, and each link must lead to a heading that exists: alerts/runbook.md's alert sections,
 * or docs/runbook.md's entries for what no alert covers (anchors as GitHub makes them from the headings).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CollectorStatus } from '../../src/metrics/store.js';
import { SampleSet, defineFamily } from '../../src/metrics/family.js';
import { DOCS_BASE, landingPage } from '../../src/server/landing.js';
import { findProblems } from '../../src/metrics/problems.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  return new Set(
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => anchor(l.replace(/^#+ /, ''))),
  );
}

/** The kinds of item problems.ts can raise: its `add(` calls, as written. */
function kindsInSource(): number {
  const src = readFileSync(join(ROOT, 'src', 'metrics', 'problems.ts'), 'utf8');
  return [...src.matchAll(/\badd\((?:r\.cluster|cluster),/g)].length;
}

/** A snapshot that raises every kind, each once; `text` tells the items apart. */
function everyKind(): SampleSet {
  const fam = (name: string, labels: string[]) => defineFamily('t', name, 'gauge', 'h', labels);
  const set = new SampleSet();
  const t = NOW / 1000;
  const xdcr = ['source_bucket', 'target_cluster_name', 'target_bucket'];
  set.add(fam('couchbase_node_status', ['node', 'status']), { node: 'n1:8091', status: 'warmup' }, 1);
  set.add(fam('couchbase_node_membership', ['node', 'membership']), { node: 'n3:8091', membership: 'inactiveFailed' }, 1);
  set.add(fam('couchbase_node_membership', ['node', 'membership']), { node: 'n4:8091', membership: 'inactiveAdded' }, 1);
  set.add(fam('couchbase_rebalance_progress_ratio', []), {}, 0.4);
  set.add(fam('couchbase_autofailover_events', []), {}, 1);
  set.add(fam('couchbase_autofailover_max_events', []), {}, 3);
  set.add(fam('couchbase_node_certificate_earliest_not_after_timestamp_seconds', ['node']), { node: 'n5:8091' }, t + 10 * 86400);
  set.add(fam('couchbase_xdcr_replication_errors', xdcr), { source_bucket: 'a', target_cluster_name: 'dr', target_bucket: 'a' }, 2);
  set.add(fam('couchbase_xdcr_replication_paused', xdcr), { source_bucket: 'b', target_cluster_name: 'dr', target_bucket: 'b' }, 1);
  set.add(fam('couchbase_xdcr_remote_cluster_deleted', ['target_cluster_name']), { target_cluster_name: 'old' }, 1);
  set.add(fam('couchbase_xdcr_remote_cluster_secure_type', ['target_cluster_name', 'secure_type']), { target_cluster_name: 'dr', secure_type: 'none' }, 1);
  set.add(fam('couchbase_bucket_replicas', ['bucket']), { bucket: 'r' }, 2);
  set.add(fam('couchbase_bucket_replicas_available', ['bucket']), { bucket: 'r' }, 1);
  set.add(fam('couchbase_bucket_quota_used_ratio', ['bucket']), { bucket: 'q' }, 0.9);
  set.add(fam('couchbase_search_slow_queries', ['index']), { index: 'i' }, 2);
  set.add(fam('couchbase_backup_repository_healthy', ['repository', 'state']), { repository: 'repo', state: 'active' }, 0);
  const indexState = fam('couchbase_index_state', ['bucket', 'scope', 'collection', 'index', 'replica', 'state']);
  set.add(indexState, { bucket: 'b', scope: 's', collection: 'c', index: 'ix', replica: '0', state: 'error' }, 1);
  set.add(indexState, { bucket: 'b', scope: 's', collection: 'c', index: 'iy', replica: '0', state: 'building' }, 1);
  set.add(fam('couchbase_eventing_function_status', ['function', 'function_bucket', 'function_scope', 'status']), { function: 'f', function_bucket: 'b', function_scope: 's', status: 'paused' }, 1);
  set.add(fam('couchbase_security_tls_min_version', ['service', 'version']), { service: 'data', version: 'tlsv1.1' }, 1);
  set.add(fam('couchbase_security_ui_over_http_disabled', []), {}, 0);
  set.add(fam('couchbase_node_certificate_plain_passphrase', ['node']), { node: 'n6:8091' }, 1);
  set.add(fam('couchbase_trusted_ca_warnings', ['id', 'subject']), { id: '2', subject: 'CN=self-signed' }, 1);
  set.add(fam('couchbase_node_certificate_warnings', ['node']), { node: 'n9:8091' }, 2);
  set.add(fam('couchbase_ldap_authentication_enabled', []), {}, 1);
  set.add(fam('couchbase_ldap_encryption', ['encryption']), { encryption: 'none' }, 1);
  set.add(fam('couchbase_ldap_server_cert_validation', []), {}, 0);
  set.add(fam('couchbase_bucket_mem_used_bytes', ['bucket']), { bucket: 'hw' }, 99);
  set.add(fam('couchbase_bucket_ep_mem_high_wat_bytes', ['bucket']), { bucket: 'hw' }, 100);
  for (let i = 0; i < 25; i++) set.note(`Couchbase alert ${i}: disk nearly full`);
  return set;
}

describe('"Needs a look": every kind of item links to its runbook entry', () => {
  it('each kind problems.ts raises, and a failing collector, links to a heading that exists', () => {
    // One cluster's auto-failover is either used up or not: the other kind on a second cluster.
    const exhausted = new SampleSet();
    exhausted.add(defineFamily('t', 'couchbase_autofailover_events', 'gauge', 'h', []), {}, 3);
    exhausted.add(defineFamily('t', 'couchbase_autofailover_max_events', 'gauge', 'h', []), {}, 3);
    // The range source's gaps: a node whose statistics are missing, one whose clock is ahead, a bucket with nothing.
    const gaps = new SampleSet();
    gaps.statsGaps = { collector: 'bucket_stats', missing: new Map([['n7:8091', 'Node is not available']]), futurePoints: new Map([['n8:8091', 3]]), empty: new Map([['quiet', 'no usable point in the range API answers: no series, or every point refused']]) };
    const problems = findProblems(
      [
        { base: { couchbase_cluster: 'prod' }, set: everyKind() },
        { base: { couchbase_cluster: 'prod2' }, set: exhausted },
        { base: { couchbase_cluster: 'prod3' }, set: gaps },
      ],
      NOW,
    );
    // The same kind more than once (the Couchbase alerts) counts once: kinds are told apart by their link and the
    // shape of their text (digits and names masked).
    const shape = (p: { text: string; alert?: string; runbook?: string }): string => `${p.alert ?? p.runbook ?? 'none'} ${p.text.replace(/\d+/g, 'N')}`;
    const kinds = new Set(problems.map(shape));
    // A certificate has one kind per threshold (soon, critical, expired) in one add(): at least as many kinds as
    // add( calls, so each call is raised here.
    expect(kinds.size, [...kinds].join('\n')).toBeGreaterThanOrEqual(kindsInSource());
    const failing = { cluster: 'prod', collector: 'xdcr', ok: false, lastError: 'HTTP 500', series: 0, requests: 1 } as unknown as CollectorStatus;
    const html = landingPage({ version: '1', statuses: [failing], clusters: [], webhooks: false, now: NOW, problems });
    const section = /<h2>Needs a look<\/h2>(.*?)<h2>Collectors<\/h2>/s.exec(html)?.[1] ?? '';
    const items = [...section.matchAll(/<li[^>]*>(.*?)<\/li>/gs)].map((m) => m[1] as string);
    expect(items).toHaveLength(problems.length + 1);
    const pages: Record<string, Set<string>> = { 'alerts/runbook.md': anchorsOf('alerts/runbook.md'), 'docs/runbook.md': anchorsOf('docs/runbook.md') };
    for (const item of items) {
      const href = /<a class="runbook" href="([^"]+)">runbook<\/a>$/.exec(item)?.[1];
      expect(href, `no runbook link: ${item}`).toBeDefined();
      const m = new RegExp(`^${DOCS_BASE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(alerts/runbook\\.md|docs/runbook\\.md)#(.+)$`).exec(href as string);
      expect(m, href).not.toBeNull();
      expect(pages[m?.[1] as string]?.has(m?.[2] as string), `${href} names no heading`).toBe(true);
    }
    // What no alert covers goes to docs/runbook.md.
    expect(items.find((i) => i.includes('plain private-key passphrase'))).toContain(`${DOCS_BASE}/docs/runbook.md#plain-private-key-passphrase`);
    expect(items.find((i) => i.includes('rebalance running'))).toContain('alerts/runbook.md#couchbaserebalancestuck');
    expect(items.find((i) => i.includes('secured as none'))).toContain('alerts/runbook.md#couchbasexdcrunencrypted');
    expect(items.find((i) => i.includes('configured replica'))).toContain('alerts/runbook.md#couchbasebucketreplicasunavailable');
    expect(items.find((i) => i.includes('more Couchbase alert'))).toContain('alerts/runbook.md#couchbaseclusteralertraised');
    expect(items.find((i) => i.includes('not encrypted'))).toContain('alerts/runbook.md#couchbaseldapinsecure');
    expect(items.find((i) => i.includes('certificates are not validated'))).toContain('alerts/runbook.md#couchbaseldapinsecure');
    expect(items.find((i) => i.includes('trusted CA CN=self-signed'))).toContain('alerts/runbook.md#couchbasecertificatewarnings');
    expect(items.find((i) => i.includes('certificate of node n9:8091'))).toContain('alerts/runbook.md#couchbasecertificatewarnings');
    expect(items.find((i) => i.includes('high-water mark'))).toContain('alerts/runbook.md#couchbasebucketmemorynearhighwatermark');
  });

  it('the demo CA: the landing page counts whole days left, as the demo\'s hints say ("less than 20 days")', () => {
    const fam = defineFamily('t', 'couchbase_trusted_ca_not_after_timestamp_seconds', 'gauge', 'h', ['id', 'subject']);
    const set = new SampleSet();
    // The demo's CA expires 20 days after the simulator starts (src/simulator/modules/certificates.ts); a minute later:
    set.add(fam, { id: '1', subject: 'CN=demo' }, NOW / 1000 + 20 * 86400 - 60);
    const [p] = findProblems([{ base: { couchbase_cluster: 'demo' }, set }], NOW);
    expect(p?.text).toBe('trusted CA CN=demo expires in 19 days');
    expect(p?.alert).toBe('CouchbaseCertificateExpiringSoon');
  });
});
