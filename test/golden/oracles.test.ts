/**
 * Oracles for the golden expositions (issue 11, item 5). A golden is regenerated from the code with
 * `vitest -u`, so on its own it only proves the code still does what it did. These assertions read the
 * committed .prom files and check their key values against facts written down by hand from the fixture
 * payloads they were rendered from (and, for PEM dates, from `openssl x509 -noout -enddate` run on the
 * fixture's PEM) — never from the code under test. Units are converted here by hand: MiB × 1048576,
 * percent ÷ 100, ISO 8601 → epoch seconds with Date.UTC.
 *
 * Fixture → golden (see the collectors' tests for the exact rendering):
 *   pools-default-trustedCAs/docs-server-7.1plus-a.json + pools-default-certificates/docs-server-7.1plus.json → certificates.prom
 *   pools-default/docs-server-pools-nodes-7.0.1-2nodes.json → nodes-7.0.1.prom
 *   fts-api-query/docs-server-7.1plus-all.json (+ a hand-made node list: b91d… is 10.144.220.101:8091) → search-7.1.prom
 *   settings-security/docs-server-6.5-6.6-explicit.json + settings-ldap/docs-server-6.5-7.2.json → security.prom
 *   pools-default-buckets-name-scopes/*.json (bucket = file name) → collections.prom
 *   backup-repository-active-name/docs-server-7.0plus-restRepo.json + backup-task-history/docs-server-7.6plus.json → backup.prom
 *   settings-autofailover/docs-server-{7.1plus,4.0-5.1}.json → autofailover-*.prom
 *   pools-default-buckets/netdata-go.d-6.6.0.json → buckets-6.6.0.prom
 *   pools-default-tasks/docs-server-6.5plus-rebalance-running-1.json → tasks-rebalance-running.prom
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

interface Row {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A minimal reader of the text exposition format, written for this test (not the renderer's code). */
function readGolden(file: string): Row[] {
  const text = readFileSync(join(import.meta.dirname, file), 'utf8');
  const rows: Row[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`${file}: unreadable line ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rows.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return rows;
}

/** The one value of `name` whose labels include `labels`. */
function value(rows: readonly Row[], name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = rows.filter((r) => r.name === name && Object.entries(labels).every(([k, v]) => r.labels[k] === v));
  if (hits.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${hits.length} series`);
  return hits[0]?.value;
}

const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number => Date.UTC(y, mo - 1, d, h, mi, s, ms) / 1000;
const MiB = 1_048_576;

describe('certificates.prom', () => {
  const g = readGolden('certificates.prom');
  it('trusted CA dates are the payload\'s notBefore/notAfter', () => {
    // id 2: notBefore 2021-11-22T16:37:47.000Z, notAfter 2031-11-20T16:37:47.000Z
    expect(value(g, 'couchbase_trusted_ca_not_after_timestamp_seconds', { id: '2' })).toBe(utc(2031, 11, 20, 16, 37, 47));
    expect(value(g, 'couchbase_trusted_ca_not_before_timestamp_seconds', { id: '2' })).toBe(utc(2021, 11, 22, 16, 37, 47));
    // id 0 (generated): 2013-01-01T00:00:00.000Z → 2049-12-31T23:59:59.000Z; one warning, two nodes.
    expect(value(g, 'couchbase_trusted_ca_not_after_timestamp_seconds', { id: '0' })).toBe(utc(2049, 12, 31, 23, 59, 59));
    expect(value(g, 'couchbase_trusted_ca_not_before_timestamp_seconds', { id: '0' })).toBe(utc(2013, 1, 1));
    expect(value(g, 'couchbase_trusted_ca_warnings', { id: '0' })).toBe(1);
    expect(value(g, 'couchbase_trusted_ca_nodes', { id: '0' })).toBe(2);
    expect(value(g, 'couchbase_trusted_cas')).toBe(3);
  });

  it('node certificate dates are the payload\'s expires and the PEM\'s notAfter (openssl)', () => {
    // expires 2022-11-30T09:44:49.000Z; openssl: notAfter=Nov 30 09:44:49 2022 GMT, issuer CN = Couchbase Root CA 1
    const n1 = { node: '10.144.220.101:8091' };
    expect(value(g, 'couchbase_node_certificate_not_after_timestamp_seconds', n1)).toBe(utc(2022, 11, 30, 9, 44, 49));
    expect(value(g, 'couchbase_node_certificate_chain_not_after_timestamp_seconds', { ...n1, position: '0' })).toBe(utc(2022, 11, 30, 9, 44, 49));
    expect(value(g, 'couchbase_node_certificate_chain_info', { ...n1, position: '0', issuer: 'CN=Couchbase Root CA 1' })).toBe(1);
    // expires 2022-11-30T09:50:07.000Z; openssl: notAfter=Nov 30 09:50:07 2022 GMT
    const n2 = { node: '10.144.220.102:8091' };
    expect(value(g, 'couchbase_node_certificate_earliest_not_after_timestamp_seconds', n2)).toBe(utc(2022, 11, 30, 9, 50, 7));
    // privateKeyPassphrase {} → no plain passphrase; warnings [] → 0.
    expect(value(g, 'couchbase_node_certificate_plain_passphrase', n2)).toBe(0);
    expect(value(g, 'couchbase_node_certificate_warnings', n2)).toBe(0);
  });
});

describe('nodes-7.0.1.prom', () => {
  const g = readGolden('nodes-7.0.1.prom');
  const a = { node: '10.144.210.101:8091' };
  const b = { node: '10.144.210.102:8091' };
  it('memory in bytes, quotas from MiB, ratios from percent', () => {
    expect(value(g, 'couchbase_node_memory_total_bytes', a)).toBe(1_032_990_720);
    expect(value(g, 'couchbase_node_memory_free_bytes', a)).toBe(181_211_136);
    expect(value(g, 'couchbase_node_memory_free_bytes', b)).toBe(306_143_232);
    expect(value(g, 'couchbase_node_swap_used_bytes', a)).toBe(490_958_848);
    // mcdMemoryReserved 788 (MiB); memoryQuota 512, indexMemoryQuota 256 (MiB).
    expect(value(g, 'couchbase_node_memcached_memory_reserved_bytes', a)).toBe(788 * MiB);
    expect(value(g, 'couchbase_cluster_memory_quota_bytes', { service: 'kv' })).toBe(512 * MiB);
    expect(value(g, 'couchbase_cluster_memory_quota_bytes', { service: 'index' })).toBe(256 * MiB);
    // cpu_utilization_rate 6.096256684491979 (%).
    expect(value(g, 'couchbase_node_cpu_utilization_ratio', b)).toBeCloseTo(0.06096256684491979, 15);
  });

  it('health, uptime, items and counters as the payload says', () => {
    expect(value(g, 'couchbase_node_status', { ...a, status: 'healthy' })).toBe(1);
    expect(value(g, 'couchbase_node_membership', { ...b, membership: 'active' })).toBe(1);
    expect(value(g, 'couchbase_node_uptime_seconds', a)).toBe(71_151);
    expect(value(g, 'couchbase_node_uptime_seconds', b)).toBe(70_725);
    expect(value(g, 'couchbase_node_curr_items', a)).toBe(31_588);
    expect(value(g, 'couchbase_node_mem_used_bytes', b)).toBe(87_317_680);
    expect(value(g, 'couchbase_cluster_rebalance_success_total')).toBe(1);
    expect(value(g, 'couchbase_cluster_max_buckets')).toBe(30);
    expect(value(g, 'couchbase_cluster_balanced')).toBe(1);
  });
});

describe('search-7.1.prom', () => {
  const g = readGolden('search-7.1.prom');
  it('counts the queryMap by index and node, the longest execution time, none slow at 10 s', () => {
    // Keys: b91d…-17 DemoIndex1 2.144802122s, b91d…-18 DemoIndex2 2.144712787s, b91d…-19 DemoIndex2, f76b…-3 DemoIndex1 2.14286421s
    expect(value(g, 'couchbase_search_total_active_queries')).toBe(4);
    expect(value(g, 'couchbase_search_active_queries', { index: 'DemoIndex1' })).toBe(2);
    expect(value(g, 'couchbase_search_active_queries', { index: 'DemoIndex2' })).toBe(2);
    expect(value(g, 'couchbase_search_active_query_max_duration_seconds', { index: 'DemoIndex1' })).toBe(2.144802122);
    expect(value(g, 'couchbase_search_slow_queries', { index: 'DemoIndex1' })).toBe(0);
    expect(value(g, 'couchbase_search_node_active_queries', { node_uuid: 'b91d75480470f979f65f04e8f20a1f7b', node: '10.144.220.101:8091' })).toBe(3);
    expect(value(g, 'couchbase_search_node_active_queries', { node_uuid: 'f76b2d51397feee28c1e757ed426ef93' })).toBe(1);
  });
});

describe('security.prom', () => {
  const g = readGolden('security.prom');
  it('TLS and LDAP posture as the payloads say', () => {
    // tlsMinVersion tlsv1.1, honorCipherOrder true, two cipherSuites, clusterEncryptionLevel control, UI over http allowed.
    expect(value(g, 'couchbase_security_tls_min_version', { service: 'global', version: 'tlsv1.1' })).toBe(1);
    expect(value(g, 'couchbase_security_tls_min_version', { service: 'global', version: 'tlsv1.2' })).toBe(0);
    expect(value(g, 'couchbase_security_honor_cipher_order', { service: 'global' })).toBe(1);
    expect(value(g, 'couchbase_security_cipher_suites_configured', { service: 'global' })).toBe(2);
    expect(value(g, 'couchbase_security_cluster_encryption_level', { level: 'control' })).toBe(1);
    expect(value(g, 'couchbase_security_ui_over_http_disabled')).toBe(0);
    // LDAP: authentication on, hosts ["172.23.124.25"], port 389, encryption StartTLSExtension.
    expect(value(g, 'couchbase_ldap_authentication_enabled')).toBe(1);
    expect(value(g, 'couchbase_ldap_hosts')).toBe(1);
    expect(value(g, 'couchbase_ldap_port')).toBe(389);
    expect(value(g, 'couchbase_ldap_encryption', { encryption: 'starttls' })).toBe(1);
  });
});

describe('collections.prom', () => {
  const g = readGolden('collections.prom');
  it('scopes and collections counted from the manifests; the uid is hex', () => {
    // 7.6plus: uid "3"; scopes _default (3 collections) and _system (2).
    expect(value(g, 'couchbase_bucket_scopes', { bucket: '7.6plus' })).toBe(2);
    expect(value(g, 'couchbase_bucket_collections', { bucket: '7.6plus' })).toBe(5);
    expect(value(g, 'couchbase_scope_collections', { bucket: '7.6plus', scope: '_default' })).toBe(3);
    expect(value(g, 'couchbase_bucket_manifest_uid', { bucket: '7.6plus' })).toBe(3);
    // 6.6-7.2-minimal: uid "0", one scope with one collection.
    expect(value(g, 'couchbase_bucket_collections', { bucket: '6.6-7.2-minimal' })).toBe(1);
    expect(value(g, 'couchbase_bucket_manifest_uid', { bucket: '6.6-7.2-minimal' })).toBe(0);
    // The 6.5 developer preview map has no uid: no series, not 0.
    expect(value(g, 'couchbase_bucket_manifest_uid', { bucket: '6.5-devpreview-collections' })).toBeUndefined();
  });
});

describe('backup.prom', () => {
  const g = readGolden('backup.prom');
  it('next run and last success are the payloads\' times', () => {
    // restRepo scheduled: 2020-10-02T09:00:41+01:00 is the earliest next_run → 08:00:41 UTC.
    expect(value(g, 'couchbase_backup_repository_next_run_timestamp_seconds', { repository: 'restRepo' })).toBe(utc(2020, 10, 2, 8, 0, 41));
    // Task history: the latest "done" ends 2024-05-06T17:24:28.901488385Z (ms precision).
    expect(value(g, 'couchbase_backup_repository_last_success_timestamp_seconds', { repository: 'restRepo' })).toBe(utc(2024, 5, 6, 17, 24, 28, 901));
    expect(value(g, 'couchbase_backup_repositories', { state: 'active' })).toBe(3);
    expect(value(g, 'couchbase_backup_repositories', { state: 'imported' })).toBe(1);
    expect(value(g, 'couchbase_backup_repository_healthy', { repository: 'hourlyBackupRepo' })).toBe(0);
  });
});

describe('autofailover goldens', () => {
  it('7.1+: enabled, timeout 72, count 0 of maxCount 2, disk issues after 89 s', () => {
    const g = readGolden('autofailover-docs-server-7.1plus.prom');
    expect(value(g, 'couchbase_autofailover_enabled')).toBe(1);
    expect(value(g, 'couchbase_autofailover_timeout_seconds')).toBe(72);
    expect(value(g, 'couchbase_autofailover_events')).toBe(0);
    expect(value(g, 'couchbase_autofailover_max_events')).toBe(2);
    expect(value(g, 'couchbase_autofailover_data_disk_issues_time_period_seconds')).toBe(89);
    expect(value(g, 'couchbase_autofailover_setting_enabled', { setting: 'canAbortRebalance' })).toBe(1);
  });

  it('4.0-5.1: disabled, timeout 120; no maxCount on those versions means one event (the reference)', () => {
    const g = readGolden('autofailover-docs-server-4.0-5.1.prom');
    expect(value(g, 'couchbase_autofailover_enabled')).toBe(0);
    expect(value(g, 'couchbase_autofailover_timeout_seconds')).toBe(120);
    expect(value(g, 'couchbase_autofailover_max_events')).toBe(1);
  });
});

describe('buckets-6.6.0.prom', () => {
  const g = readGolden('buckets-6.6.0.prom');
  it('quota, items and the quota share as the payload says', () => {
    // travel-sample: quota.ram 104857600 (100 MiB), itemCount 31591, quotaPercentUsed 51.80185699462891, memUsed 54318184.
    expect(value(g, 'couchbase_buckets')).toBe(3);
    expect(value(g, 'couchbase_bucket_quota_ram_bytes', { bucket: 'travel-sample' })).toBe(100 * MiB);
    expect(value(g, 'couchbase_bucket_basic_items', { bucket: 'travel-sample' })).toBe(31_591);
    expect(value(g, 'couchbase_bucket_quota_used_ratio', { bucket: 'travel-sample' })).toBeCloseTo(0.5180185699462891, 15);
    expect(value(g, 'couchbase_bucket_basic_mem_used_bytes', { bucket: 'travel-sample' })).toBe(54_318_184);
    expect(value(g, 'couchbase_bucket_basic_items', { bucket: 'gamesim-sample' })).toBe(586);
    expect(value(g, 'couchbase_bucket_replicas', { bucket: 'beer-sample' })).toBe(1);
    // No controllers.flush in this capture's entries.
    expect(value(g, 'couchbase_bucket_flush_enabled', { bucket: 'beer-sample' })).toBe(0);
  });
});

describe('tasks-rebalance-running.prom', () => {
  const g = readGolden('tasks-rebalance-running.prom');
  it('progress in percent becomes a 0-1 ratio; per-node progress is labelled host:port', () => {
    // progress 1.531444089632196 (%), ns_1@10.143.194.103 2.639296187683282 (%).
    expect(value(g, 'couchbase_rebalance_running')).toBe(1);
    expect(value(g, 'couchbase_rebalance_progress_ratio')).toBeCloseTo(0.01531444089632196, 15);
    expect(value(g, 'couchbase_rebalance_node_progress_ratio', { node: '10.143.194.103:8091' })).toBeCloseTo(0.02639296187683282, 15);
    expect(value(g, 'couchbase_rebalance_status', { status: 'running' })).toBe(1);
  });
});
