/**
 * What needs a look right now, for the landing page: a short list read from the current snapshot (the same
 * samples /metrics serves), so a newcomer sees the problems of `cbwatch demo`'s scenario — and an operator
 * those of a real cluster — without Prometheus. It is a summary, not the alerting: thresholds are the
 * alerts' warning levels, with no `for:` duration. Only label values already on /metrics appear (buckets,
 * nodes, replications, indexes), and Couchbase's own alert messages, redacted and shortened where they were
 * read (SampleSet.notes): never a secret.
 */
import type { LabelledSet } from './render.js';
import { byCodeUnit } from '../text-order.js';
import { serviceProblems } from './problems-services.js';

export interface Problem {
  readonly cluster: string;
  readonly severity: 'critical' | 'warning' | 'info';
  readonly text: string;
  /** The alert of alerts/cbwatch.rules.yml this is the early sign of: its runbook entry is linked. */
  readonly alert?: string;
  /** For what no alert covers: its runbook entry, a page and anchor under the docs base (`docs/runbook.md#…`). */
  readonly runbook?: string;
}

/** The runbook entries of the items no alert covers (docs/runbook.md). */
export const RUNBOOK_PAGE = 'docs/runbook.md';

/** The alerts' certificate thresholds (CouchbaseCertificateExpiringSoon / ExpiryCritical). */
const WARN_DAYS = 28;
const CRITICAL_DAYS = 7;
const QUOTA_WARN = 0.85;
/** CouchbaseBucketMemoryNearHighWaterMark's threshold: memory used over the high-water mark. */
const HIGH_WAT_WARN = 0.98;

type Row = { readonly cluster: string; readonly labels: Readonly<Record<string, string>>; readonly value: number };

/** Every sample of a family name across the snapshot, with its cluster. */
function rows(sets: readonly LabelledSet[], name: string): Row[] {
  const out: Row[] = [];
  for (const s of sets) {
    const cluster = s.base.couchbase_cluster;
    if (cluster === undefined) continue;
    // One family looked up by name: a set's other families (thousands of bucket stats) are never walked.
    for (const x of s.set.all(name)) out.push({ cluster, labels: x.labels as Record<string, string>, value: x.value });
  }
  return out;
}

function days(seconds: number): string {
  const d = seconds / 86400;
  return d < 0 ? `expired ${Math.ceil(-d)} days ago` : d < 2 ? `expires in ${Math.round(seconds / 3600)} hours` : `expires in ${Math.floor(d)} days`;
}

function replication(l: Readonly<Record<string, string>>): string {
  return `${l.source_bucket ?? '?'} → ${l.target_cluster_name ?? '?'}/${l.target_bucket ?? '?'}`;
}

export function findProblems(sets: readonly LabelledSet[], nowMs: number): Problem[] {
  const now = nowMs / 1000;
  const out: Problem[] = [];
  // Every item links to its runbook entry: `link` is the alert it is the early sign of (alerts/runbook.md), or an
  // anchor of docs/runbook.md for what no alert covers.
  const add = (cluster: string, severity: Problem['severity'], text: string, link: string): void =>
    void out.push(link.startsWith('#') ? { cluster, severity, text, runbook: `${RUNBOOK_PAGE}${link}` } : { cluster, severity, text, alert: link });

  for (const r of rows(sets, 'couchbase_node_status'))
    if (r.value === 1 && r.labels.status !== 'healthy') add(r.cluster, r.labels.status === 'warmup' ? 'warning' : 'critical', `node ${r.labels.node} is ${r.labels.status}`, 'CouchbaseNodeUnhealthy');
  for (const r of rows(sets, 'couchbase_node_membership'))
    if (r.value === 1 && r.labels.membership === 'inactiveFailed') add(r.cluster, 'warning', `node ${r.labels.node} was failed over: a rebalance is needed`, 'CouchbaseNodeFailedOver');
    else if (r.value === 1 && r.labels.membership === 'inactiveAdded') add(r.cluster, 'info', `node ${r.labels.node} was added and waits for a rebalance`, 'CouchbaseClusterUnbalanced');
  for (const r of rows(sets, 'couchbase_rebalance_progress_ratio')) add(r.cluster, 'info', `rebalance running, ${Math.round(r.value * 100)}% done`, 'CouchbaseRebalanceStuck');

  const maxEvents = new Map(rows(sets, 'couchbase_autofailover_max_events').map((r) => [r.cluster, r.value]));
  for (const r of rows(sets, 'couchbase_autofailover_events')) {
    const max = maxEvents.get(r.cluster);
    if (max !== undefined && max > 0 && r.value >= max) add(r.cluster, 'critical', `auto-failover budget used up (${r.value} of ${max}): no further automatic failover`, 'CouchbaseAutoFailoverExhausted');
    else if (r.value > 0) add(r.cluster, 'info', `auto-failover used ${r.value} of ${max ?? '?'} times since the last reset`, 'CouchbaseAutoFailoverOccurred');
  }

  const certs: Array<[string, string]> = [
    ['couchbase_trusted_ca_not_after_timestamp_seconds', 'trusted CA'],
    ['couchbase_node_certificate_earliest_not_after_timestamp_seconds', 'certificate chain of node'],
  ];
  for (const [family, what] of certs)
    for (const r of rows(sets, family)) {
      const left = r.value - now;
      if (left >= WARN_DAYS * 86400) continue;
      const name = r.labels.subject ?? r.labels.node ?? '';
      const alert = left < 0 ? 'CouchbaseCertificateExpired' : left < CRITICAL_DAYS * 86400 ? 'CouchbaseCertificateExpiryCritical' : 'CouchbaseCertificateExpiringSoon';
      add(r.cluster, left < CRITICAL_DAYS * 86400 ? 'critical' : 'warning', `${what} ${name} ${days(left)}`, alert);
    }

  // Couchbase's own diagnosis of a certificate (CouchbaseCertificateWarnings): self-signed, not signed by a trusted CA…
  for (const r of rows(sets, 'couchbase_trusted_ca_warnings'))
    if (r.value > 0) add(r.cluster, 'warning', `trusted CA ${r.labels.subject ?? r.labels.id ?? ''}: Couchbase reports ${r.value} warning(s) about it`, 'CouchbaseCertificateWarnings');
  for (const r of rows(sets, 'couchbase_node_certificate_warnings'))
    if (r.value > 0) add(r.cluster, 'warning', `certificate of node ${r.labels.node ?? ''}: Couchbase reports ${r.value} warning(s) about it`, 'CouchbaseCertificateWarnings');

  for (const r of rows(sets, 'couchbase_xdcr_replication_errors')) if (r.value > 0) add(r.cluster, 'warning', `XDCR ${replication(r.labels)}: ${r.value} error(s)`, 'CouchbaseXdcrReplicationErrors');
  for (const r of rows(sets, 'couchbase_xdcr_replication_paused')) if (r.value === 1) add(r.cluster, 'info', `XDCR ${replication(r.labels)} is paused (its backlog grows)`, 'CouchbaseXdcrReplicationPaused');
  for (const r of rows(sets, 'couchbase_xdcr_remote_cluster_deleted')) if (r.value === 1) add(r.cluster, 'warning', `XDCR remote cluster ${r.labels.target_cluster_name} is marked deleted`, 'CouchbaseXdcrRemoteClusterDeleted');

  for (const r of rows(sets, 'couchbase_xdcr_remote_cluster_secure_type'))
    if (r.value === 1 && (r.labels.secure_type === 'none' || r.labels.secure_type === 'half'))
      add(r.cluster, 'info', `XDCR remote cluster ${r.labels.target_cluster_name} is secured as ${r.labels.secure_type}: replicated data crosses the network in clear`, 'CouchbaseXdcrUnencrypted');

  const configuredReplicas = new Map(rows(sets, 'couchbase_bucket_replicas').map((r) => [`${r.cluster}\u0000${r.labels.bucket}`, r.value]));
  for (const r of rows(sets, 'couchbase_bucket_replicas_available')) {
    const configured = configuredReplicas.get(`${r.cluster}\u0000${r.labels.bucket}`);
    if (configured !== undefined && r.value < configured) add(r.cluster, 'warning', `bucket ${r.labels.bucket} has ${r.value} of its ${configured} configured replica(s) on every vBucket`, 'CouchbaseBucketReplicasUnavailable');
  }

  for (const r of rows(sets, 'couchbase_bucket_quota_used_ratio'))
    if (r.value >= QUOTA_WARN) add(r.cluster, 'warning', `bucket ${r.labels.bucket} uses ${Math.round(r.value * 100)}% of its RAM quota`, 'CouchbaseBucketMemoryNearQuota');
  // Memory over 98% of the high-water mark (CouchbaseBucketMemoryNearHighWaterMark), per bucket (and node when per-node).
  const labelKey = (r: Row): string => `${r.cluster}\u0000${JSON.stringify(Object.entries(r.labels).sort(([a], [b]) => byCodeUnit(a, b)))}`;
  const highWat = new Map(rows(sets, 'couchbase_bucket_ep_mem_high_wat_bytes').map((r) => [labelKey(r), r.value]));
  for (const r of rows(sets, 'couchbase_bucket_mem_used_bytes')) {
    const mark = highWat.get(labelKey(r));
    if (mark !== undefined && mark > 0 && r.value / mark > HIGH_WAT_WARN)
      add(r.cluster, 'warning', `bucket ${r.labels.bucket}${r.labels.node === undefined ? '' : ` on node ${r.labels.node}`} uses ${Math.round((r.value / mark) * 100)}% of its memory high-water mark`, 'CouchbaseBucketMemoryNearHighWaterMark');
  }
  for (const r of rows(sets, 'couchbase_search_slow_queries')) if (r.value > 0) add(r.cluster, 'warning', `search index ${r.labels.index}: ${r.value} slow quer${r.value === 1 ? 'y' : 'ies'} running`, 'CouchbaseSearchSlowQueries');
  for (const r of rows(sets, 'couchbase_backup_repository_healthy')) if (r.value === 0) add(r.cluster, 'warning', `backup repository ${r.labels.repository} (${r.labels.state}) is not healthy`, 'CouchbaseBackupRepositoryUnhealthy');
  for (const r of rows(sets, 'couchbase_index_state'))
    if (r.labels.state === 'error' && r.value === 1) add(r.cluster, 'critical', `index ${r.labels.index} (replica ${r.labels.replica}) on ${r.labels.bucket}.${r.labels.scope}.${r.labels.collection} is in error`, 'CouchbaseIndexError');
  // CouchbaseIndexNotReady: a replica in a state other than ready, created (deferred on purpose) or error (above).
  for (const r of rows(sets, 'couchbase_index_state'))
    if (r.value === 1 && !['ready', 'created', 'error'].includes(r.labels.state ?? '')) add(r.cluster, 'info', `index ${r.labels.index} (replica ${r.labels.replica}) on ${r.labels.bucket}.${r.labels.scope}.${r.labels.collection} is ${r.labels.state}${r.labels.state === 'building' ? '' : ', not ready'}`, 'CouchbaseIndexNotReady');
  for (const r of rows(sets, 'couchbase_eventing_function_status'))
    if (r.labels.status === 'paused' && r.value === 1) add(r.cluster, 'warning', `eventing function ${r.labels.function} is paused (its mutations wait)`, 'CouchbaseEventingFunctionStopped');

  serviceProblems((family) => rows(sets, family), add);

  for (const r of rows(sets, 'couchbase_security_tls_min_version'))
    if (r.value === 1 && (r.labels.version === 'tlsv1' || r.labels.version === 'tlsv1.1')) add(r.cluster, 'warning', `TLS minimum version of ${r.labels.service} is ${r.labels.version}`, 'CouchbaseWeakTlsMinVersion');
  // LDAP in use (authentication or authorization) over a connection that is not secure (CouchbaseLdapInsecure).
  const ldapInUse = new Set([...rows(sets, 'couchbase_ldap_authentication_enabled'), ...rows(sets, 'couchbase_ldap_authorization_enabled')].filter((r) => r.value === 1).map((r) => r.cluster));
  for (const r of rows(sets, 'couchbase_ldap_encryption'))
    if (r.value === 1 && r.labels.encryption === 'none' && ldapInUse.has(r.cluster)) add(r.cluster, 'warning', 'LDAP is in use and its connection to the LDAP servers is not encrypted', 'CouchbaseLdapInsecure');
  for (const r of rows(sets, 'couchbase_ldap_server_cert_validation'))
    if (r.value === 0 && ldapInUse.has(r.cluster)) add(r.cluster, 'warning', 'LDAP is in use and the LDAP servers\' certificates are not validated', 'CouchbaseLdapInsecure');
  for (const r of rows(sets, 'couchbase_security_ui_over_http_disabled')) if (r.value === 0) add(r.cluster, 'info', 'the web console is served over plain http', 'CouchbaseUiOverHttpEnabled');
  for (const r of rows(sets, 'couchbase_node_certificate_plain_passphrase'))
    if (r.value === 1) add(r.cluster, 'info', `node ${r.labels.node} has a plain private-key passphrase registered (pre-production only)`, '#plain-private-key-passphrase');

  // The range source's gaps (Couchbase 7.0+): a node whose statistics are missing, a node whose clock is ahead.
  // Node names are the cluster's own (on /metrics too); the reasons were bounded and redacted where they were read.
  for (const s of sets) {
    const cluster = s.base.couchbase_cluster;
    const gaps = s.set.statsGaps;
    if (cluster === undefined || gaps === undefined) continue;
    for (const [node, why] of gaps.missing)
      add(cluster, 'warning', `${gaps.collector}: statistics of node ${node} missing (${why}); ${gaps.collector === 'bucket_stats' || gaps.collector === 'xdcr' ? 'bucket-wide and XDCR values are sums over the nodes that answered' : 'its series are absent this poll'}`, 'CbwatchCollectorItemErrors');
    for (const [item, why] of gaps.empty ?? [])
      add(cluster, 'warning', `${gaps.collector}: ${gaps.collector === 'xdcr' ? 'replication' : 'bucket'} ${item} has nothing to export (${why})`, 'CbwatchCollectorItemErrors');
    for (const [node, n] of gaps.futurePoints)
      add(cluster, 'warning', `${gaps.collector}: node ${node} answered ${n} statistics point(s) more than 60 s in the future (its clock is ahead?): dropped`, 'CouchbaseBucketStatsStalled');
  }

  // Couchbase's own alerts (the alerts array of /pools/default), as the nodes collector kept them: redacted,
  // shortened, at most a few per poll. The only text here that is not a label value from /metrics.
  for (const s of sets) {
    const cluster = s.base.couchbase_cluster;
    if (cluster === undefined) continue;
    for (const note of s.set.notes) add(cluster, 'warning', note, 'CouchbaseClusterAlertRaised');
    if (s.set.notesLeftOut > 0) add(cluster, 'warning', `${s.set.notesLeftOut} more Couchbase alert(s) not shown (couchbase_cluster_alerts counts them all)`, 'CouchbaseClusterAlertRaised');
  }

  const rank = { critical: 0, warning: 1, info: 2 } as const;
  return out.sort((a, b) => byCodeUnit(a.cluster, b.cluster) || rank[a.severity] - rank[b.severity] || byCodeUnit(a.text, b.text));
}
