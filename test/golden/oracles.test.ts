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

describe('certificates-legacy.prom (pre-7.1: GET /pools/default/certificate?extended=true)', () => {
  const g = readGolden('certificates-legacy.prom');
  it('the root certificate\'s dates are its PEM\'s (openssl: notBefore=Jan 1 00:00:00 2013 GMT, notAfter=Dec 31 23:59:59 2049 GMT)', () => {
    // The payload's expires says 2049-12-31T15:59:59.000Z: local time written with a Z by pre-7.1 servers.
    expect(value(g, 'couchbase_trusted_ca_not_after_timestamp_seconds', { id: 'legacy' })).toBe(utc(2049, 12, 31, 23, 59, 59));
    expect(value(g, 'couchbase_trusted_ca_not_before_timestamp_seconds', { id: 'legacy' })).toBe(utc(2013, 1, 1));
    expect(value(g, 'couchbase_trusted_ca_info', { id: 'legacy', subject: 'CN=Root Authority', origin: 'uploaded' })).toBe(1);
    expect(value(g, 'couchbase_trusted_cas')).toBe(1);
    // 7.0 node certificates carry no type: origin unknown; their PEM says notAfter=Nov 30 09:44:49 2022 GMT.
    expect(value(g, 'couchbase_node_certificate_not_after_timestamp_seconds', { node: '10.144.220.101:8091', origin: 'unknown' })).toBe(utc(2022, 11, 30, 9, 44, 49));
  });
});

describe('certificates-limited.prom (limited trustedCAs view)', () => {
  const g = readGolden('certificates-limited.prom');
  it('dates from notBefore/notAfter; the fields the view lacks are absent, not 0', () => {
    // id 1: notBefore 2021-01-16T11:42:00.000Z, notAfter 2026-01-15T11:42:00.000Z; no type, warnings or nodes.
    expect(value(g, 'couchbase_trusted_ca_not_after_timestamp_seconds', { id: '1' })).toBe(utc(2026, 1, 15, 11, 42));
    expect(value(g, 'couchbase_trusted_ca_not_before_timestamp_seconds', { id: '1' })).toBe(utc(2021, 1, 16, 11, 42));
    expect(value(g, 'couchbase_trusted_ca_warnings', { id: '1' })).toBeUndefined();
    expect(value(g, 'couchbase_trusted_ca_nodes', { id: '1' })).toBeUndefined();
    expect(value(g, 'couchbase_trusted_cas')).toBe(2);
  });
});

describe('search-7.0.prom and search-indexes.prom', () => {
  it('7.0: bare query ids (no node), the 13.863849125s query is the one slow at 10 s', () => {
    const g = readGolden('search-7.0.prom');
    // queryMap: 9 DemoIndex 13.863849125s, 10 DemoIndex1 9.700851426s, 11 DemoIndex2 2.216451567s
    expect(value(g, 'couchbase_search_total_active_queries')).toBe(3);
    expect(value(g, 'couchbase_search_slow_queries', { index: 'DemoIndex' })).toBe(1);
    expect(value(g, 'couchbase_search_slow_queries', { index: 'DemoIndex1' })).toBe(0);
    expect(value(g, 'couchbase_search_active_query_max_duration_seconds', { index: 'DemoIndex' })).toBe(13.863849125);
    expect(g.filter((r) => r.name === 'couchbase_search_node_active_queries')).toEqual([]);
  });

  it('per-index view merged with the cluster-wide one: three DemoIndex1 queries, an idle listed index at 0', () => {
    const g = readGolden('search-indexes.prom');
    // Cluster-wide (longerThan 7s): b91d…-21 DemoIndex1 10.541956741s; per-index: b91d…-16 1.05…s, f76b…-2 1.05…s.
    expect(value(g, 'couchbase_search_active_queries', { index: 'DemoIndex1' })).toBe(3);
    expect(value(g, 'couchbase_search_slow_queries', { index: 'DemoIndex1' })).toBe(1);
    expect(value(g, 'couchbase_search_active_query_max_duration_seconds', { index: 'DemoIndex1' })).toBe(10.541956741);
    expect(value(g, 'couchbase_search_active_queries', { index: 'idle' })).toBe(0);
    expect(value(g, 'couchbase_search_node_active_queries', { node_uuid: 'b91d75480470f979f65f04e8f20a1f7b' })).toBe(2);
    expect(value(g, 'couchbase_search_node_active_queries', { node_uuid: 'f76b2d51397feee28c1e757ed426ef93' })).toBe(1);
  });
});

describe('security-7x.prom', () => {
  const g = readGolden('security-7x.prom');
  it('effective per-service TLS minimum: own value, else the global one; 7.6 LDAP defaults', () => {
    // global tlsMinVersion tlsv1.2; /settings/security/data says tlsv1.3; index sets none (inherits tlsv1.2).
    expect(value(g, 'couchbase_security_tls_min_version', { service: 'global', version: 'tlsv1.2' })).toBe(1);
    expect(value(g, 'couchbase_security_tls_min_version', { service: 'data', version: 'tlsv1.3' })).toBe(1);
    expect(value(g, 'couchbase_security_tls_min_version', { service: 'data', version: 'tlsv1.2' })).toBe(0);
    expect(value(g, 'couchbase_security_tls_min_version', { service: 'index', version: 'tlsv1.2' })).toBe(1);
    // LDAP 7.6: requestTimeout 5000 ms, cacheValueLifetime 300000 ms, encryption "None", hosts [].
    expect(value(g, 'couchbase_ldap_request_timeout_seconds')).toBe(5);
    expect(value(g, 'couchbase_ldap_cache_value_lifetime_seconds')).toBe(300);
    expect(value(g, 'couchbase_ldap_encryption', { encryption: 'none' })).toBe(1);
    expect(value(g, 'couchbase_ldap_hosts')).toBe(0);
  });
});

describe('autofailover: the other captures', () => {
  it.each([
    // file, enabled, timeout, count, max events (maxCount, or 1 where the version has none)
    ['autofailover-docs-server-5.5-7.0.prom', 1, 72, 0, 2],
    ['autofailover-docs-server-http-example.prom', 0, 30, 0, 1],
    ['autofailover-nri-couchbase-5.0.1.prom', 0, 120, 0, 1],
    ['autofailover-telegraf.prom', 1, 72, 1, 2],
  ] as const)('%s', (file, enabled, timeout, count, max) => {
    const g = readGolden(file);
    expect(value(g, 'couchbase_autofailover_enabled')).toBe(enabled);
    expect(value(g, 'couchbase_autofailover_timeout_seconds')).toBe(timeout);
    expect(value(g, 'couchbase_autofailover_events')).toBe(count);
    expect(value(g, 'couchbase_autofailover_max_events')).toBe(max);
  });

  it('5.5-7.0: failoverServerGroup true', () => {
    expect(value(readGolden('autofailover-docs-server-5.5-7.0.prom'), 'couchbase_autofailover_server_group_enabled')).toBe(1);
  });
});

describe('buckets: the other generations', () => {
  it('Membase 1.6: bucketType couchbase, flushCacheUri means flush enabled, 24.36…% of the quota', () => {
    const g = readGolden('buckets-1.6.0.prom');
    expect(value(g, 'couchbase_buckets')).toBe(2);
    expect(value(g, 'couchbase_bucket_info', { bucket: 'default', bucket_type: 'couchbase' })).toBe(1);
    expect(value(g, 'couchbase_bucket_flush_enabled', { bucket: 'default' })).toBe(1);
    expect(value(g, 'couchbase_bucket_quota_used_ratio', { bucket: 'default' })).toBeCloseTo(0.24360397338867188, 15);
    expect(value(g, 'couchbase_bucket_basic_mem_used_bytes', { bucket: 'default' })).toBe(25_543_728);
  });

  it('3.0.1: a 280000 MiB bucket with 943239752 items', () => {
    const g = readGolden('buckets-3.0.1.prom');
    expect(value(g, 'couchbase_bucket_quota_ram_bytes', { bucket: 'blastro-df' })).toBe(280_000 * MiB);
    expect(value(g, 'couchbase_bucket_quota_raw_ram_bytes', { bucket: 'blastro-df' })).toBe(40_000 * MiB);
    expect(value(g, 'couchbase_bucket_basic_items', { bucket: 'blastro-df' })).toBe(943_239_752);
    expect(value(g, 'couchbase_bucket_basic_disk_used_bytes', { bucket: 'blastro-df' })).toBe(409_178_772_321);
  });

  it('4.6.3 and 5.5.1: items, memory and flush as listed', () => {
    const g4 = readGolden('buckets-4.6.3.prom');
    expect(value(g4, 'couchbase_bucket_basic_items', { bucket: 'beer-sample' })).toBe(7303);
    expect(value(g4, 'couchbase_bucket_basic_mem_used_bytes', { bucket: 'beer-sample' })).toBe(44_289_200);
    const g5 = readGolden('buckets-5.5.1.prom');
    // quota.ram 402653184 = 384 MiB over 3 nodes, rawRAM 128 MiB per node; controllers.flush present.
    expect(value(g5, 'couchbase_bucket_quota_ram_bytes', { bucket: 'default' })).toBe(384 * MiB);
    expect(value(g5, 'couchbase_bucket_quota_raw_ram_bytes', { bucket: 'default' })).toBe(128 * MiB);
    expect(value(g5, 'couchbase_bucket_flush_enabled', { bucket: 'default' })).toBe(1);
    expect(value(g5, 'couchbase_bucket_basic_items', { bucket: 'default' })).toBe(0);
  });
});

describe('nodes: the other generations', () => {
  it.each([
    // file, node, mem_total, mem_free, uptime, mcdMemoryReserved (MiB)
    ['nodes-3.0.0.prom', '10.5.2.117:8091', 4_140_740_608, 2_939_863_040, 1_815_879, 3159],
    ['nodes-4.6.3.prom', '172.17.0.2:8091', 2_095_882_240, 325_193_728, 60_620, 1599],
    ['nodes-5.0.1.prom', '10.33.106.59:8091', 3_974_971_392, 963_305_472, 20_483_875, 3032],
    ['nodes-6.5.1.prom', 'cb-0000.cb.ead75783-adbe-42ac-8937-e187da9abf80.svc:8091', 66_714_533_888, 65_080_254_464, 194_773, 50_899],
    ['nodes-8.0.0.prom', '192.168.56.4:8091', 8_324_583_424, 6_955_921_408, 2907, 6351],
  ] as const)('%s: the first node as the payload says', (file, node, total, free, uptime, reserved) => {
    const g = readGolden(file);
    expect(value(g, 'couchbase_node_memory_total_bytes', { node })).toBe(total);
    expect(value(g, 'couchbase_node_memory_free_bytes', { node })).toBe(free);
    expect(value(g, 'couchbase_node_uptime_seconds', { node })).toBe(uptime);
    expect(value(g, 'couchbase_node_memcached_memory_reserved_bytes', { node })).toBe(reserved * MiB);
    expect(value(g, 'couchbase_node_status', { node, status: 'healthy' })).toBe(1);
    expect(value(g, 'couchbase_node_membership', { node, membership: 'active' })).toBe(1);
  });

  it('quotas from MiB where the payload has one (none in the 3.0 capture)', () => {
    expect(value(readGolden('nodes-3.0.0.prom'), 'couchbase_cluster_memory_quota_bytes', { service: 'kv' })).toBeUndefined();
    expect(value(readGolden('nodes-4.6.3.prom'), 'couchbase_cluster_memory_quota_bytes', { service: 'kv' })).toBe(1000 * MiB);
    expect(value(readGolden('nodes-5.0.1.prom'), 'couchbase_cluster_memory_quota_bytes', { service: 'kv' })).toBe(2048 * MiB);
    expect(value(readGolden('nodes-6.5.1.prom'), 'couchbase_cluster_memory_quota_bytes', { service: 'kv' })).toBe(25_884 * MiB);
    expect(value(readGolden('nodes-8.0.0.prom'), 'couchbase_cluster_memory_quota_bytes', { service: 'kv' })).toBe(3457 * MiB);
  });

  it('nodeServices: ports and alternate addresses as listed', () => {
    const g = readGolden('nodes-nodeservices-6.5plus.prom');
    // 10.143.192.101: kv 11210, n1ql 8093; external 10.10.10.11 with kv 9000, n1ql 9050.
    expect(value(g, 'couchbase_node_service_port', { node: '10.143.192.101:8091', port_name: 'kv' })).toBe(11_210);
    expect(value(g, 'couchbase_node_service_port', { node: '10.143.192.101:8091', port_name: 'n1ql' })).toBe(8093);
    expect(value(g, 'couchbase_node_alternate_address_info', { node: '10.143.192.101:8091', network: 'external', hostname: '10.10.10.11' })).toBe(1);
    expect(value(g, 'couchbase_node_alternate_port', { node: '10.143.192.101:8091', network: 'external', port_name: 'n1ql' })).toBe(9050);
    const v6 = readGolden('nodes-nodeservices-ipv6.prom');
    // 192.168.1.101 (mgmt 8091): external 240b:c0e0:104:5400:b423:2:1:0, kv 30900, mgmt 31427.
    expect(value(v6, 'couchbase_node_alternate_address_info', { node: '192.168.1.101:8091', hostname: '240b:c0e0:104:5400:b423:2:1:0' })).toBe(1);
    expect(value(v6, 'couchbase_node_alternate_port', { node: '192.168.1.101:8091', port_name: 'kv' })).toBe(30_900);
    expect(value(v6, 'couchbase_node_alternate_port', { node: '192.168.1.101:8091', port_name: 'mgmt' })).toBe(31_427);
  });

  it('serverGroups: Group 1 has one node, Group 2 two', () => {
    const g = readGolden('nodes-servergroups-6.0.0.prom');
    expect(value(g, 'couchbase_server_groups')).toBe(2);
    expect(value(g, 'couchbase_server_group_nodes', { server_group: 'Group 1' })).toBe(1);
    expect(value(g, 'couchbase_server_group_nodes', { server_group: 'Group 2' })).toBe(2);
  });
});

describe('tasks: the other captures', () => {
  it('a failed rebalance: notRunning with an error message is "failed"', () => {
    const g = readGolden('tasks-rebalance-failed.prom');
    expect(value(g, 'couchbase_rebalance_running')).toBe(0);
    expect(value(g, 'couchbase_rebalance_status', { status: 'failed' })).toBe(1);
    expect(value(g, 'couchbase_rebalance_status', { status: 'notRunning' })).toBe(0);
  });

  it('bucket compaction at 25 % of beer-sample', () => {
    const g = readGolden('tasks-bucket-compaction.prom');
    expect(value(g, 'couchbase_task_progress_ratio', { task_type: 'bucket_compaction', bucket: 'beer-sample' })).toBe(0.25);
    expect(value(g, 'couchbase_tasks', { task_type: 'bucket_compaction', status: 'running' })).toBe(1);
    expect(value(g, 'couchbase_rebalance_status', { status: 'notRunning' })).toBe(1);
  });

  it('XDCR entries are left to the xdcr collector; sample loading is a running task', () => {
    const x = readGolden('tasks-with-xdcr.prom');
    expect(x.filter((r) => r.labels.task_type === 'xdcr')).toEqual([]);
    expect(value(x, 'couchbase_tasks', { task_type: 'rebalance', status: 'notRunning' })).toBe(1);
    const s = readGolden('tasks-sample-bucket.prom');
    expect(value(s, 'couchbase_tasks', { task_type: 'loadingSampleBucket', status: 'running' })).toBe(1);
  });
});
