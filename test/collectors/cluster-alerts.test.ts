/**
 * Couchbase's own alerts (the `alerts` array of /pools/default): a count per kind and, on the landing page only,
 * the redacted, shortened messages. Expectations written by hand:
 * - gocaves 7.0.0: one object entry, msg "Approaching full disk warning. Usage of disk "/" on node "127.0.0.1"
 *   is around 92%." → disk_nearly_full 1;
 * - telegraf 3.0.1 (7 nodes): eight string entries, each "Metadata overhead warning. Over  6x% of RAM allocated
 *   to bucket "blastro-df" on node …" → metadata_overhead 8;
 * - docs-server 7.0.1: an empty array → every kind 0;
 * - the message formats of ns_server (src/menelaus_web_alerts_srv.erl errors/1, src/auto_failover.erl), filled
 *   in by hand, for the other kinds.
 */
import { describe, expect, it } from 'vitest';
import { CLUSTER_ALERT_KINDS, clusterAlertKind } from '../../src/collectors/cluster-alerts.js';
import { ALERT_TEXT_MAX, mapClusterAlerts, nodesCollector } from '../../src/collectors/nodes.js';
import { SampleSet } from '../../src/metrics/family.js';
import { Redactor, safeExcerpt } from '../../src/redact.js';
import { findProblems } from '../../src/metrics/problems.js';
import { collect, fakeClient, loadFixture } from '../helpers/collect.js';

const KINDS = [
  'disk_nearly_full',
  'metadata_overhead',
  'bucket_out_of_memory',
  'write_commit_failed',
  'audit_write_failed',
  'index_ram_nearly_full',
  'cas_drift',
  'communication_issue',
  'time_out_of_sync',
  'disk_usage_analyzer_stuck',
  'certificate_expired',
  'certificate_expires_soon',
  'memory_threshold',
  'ip_changed',
  'auto_failover_performed',
  'auto_failover_not_possible',
  'other',
];

function counts(set: SampleSet): Record<string, number> {
  return Object.fromEntries(set.all('couchbase_cluster_alerts').map((s) => [s.labels.kind, s.value]));
}
const zeros = (): Record<string, number> => Object.fromEntries(KINDS.map((k) => [k, 0]));

describe('Couchbase alerts from /pools/default', () => {
  it('the kind label set is the fixed, documented list', () => {
    expect([...CLUSTER_ALERT_KINDS].sort()).toEqual([...KINDS].sort());
  });

  it('gocaves 7.0.0: one {msg, serverTime} entry, a disk nearly full', () => {
    const set = new SampleSet();
    mapClusterAlerts(loadFixture<{ alerts: unknown[] }>('pools-default/gocaves-7.0.0-3016.json').alerts, set, (t) => t);
    expect(counts(set)).toEqual({ ...zeros(), disk_nearly_full: 1 });
    expect(set.notes).toEqual(['Couchbase alert (disk_nearly_full): Approaching full disk warning. Usage of disk "/" on node "127.0.0.1" is around 92%.']);
  });

  it('telegraf 3.0.1: eight plain-string entries, all metadata overhead', () => {
    const set = new SampleSet();
    mapClusterAlerts(loadFixture<{ alerts: unknown[] }>('pools-default/telegraf-3.0.1-7nodes.json').alerts, set, (t) => t);
    expect(counts(set)).toEqual({ ...zeros(), metadata_overhead: 8 });
    expect(set.notes).toHaveLength(8);
    expect(set.notes[0]).toBe('Couchbase alert (metadata_overhead): Metadata overhead warning. Over  63% of RAM allocated to bucket  "blastro-df" on node "172.16.8.148" is taken up by keys and metadata.');
  });

  it('an empty array: every kind at 0; no array in the answer: nothing, not zeros', () => {
    const set = new SampleSet();
    mapClusterAlerts(loadFixture<{ alerts: unknown[] }>('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json').alerts, set, (t) => t);
    expect(counts(set)).toEqual(zeros());
    const none = new SampleSet();
    mapClusterAlerts(undefined, none, (t) => t);
    mapClusterAlerts(null, none, (t) => t);
    expect(none.all('couchbase_cluster_alerts')).toEqual([]);
  });

  it('classifies each ns_server message format; anything else is other', () => {
    const cases: Array<[string, string]> = [
      ['Hard out-of-memory error: Bucket "orders" on node cb1.example.com is full. No memory currently allocated to this bucket can be easily released.', 'bucket_out_of_memory'],
      ['Write Commit Failure. Disk write failed for item in Bucket "orders" on node cb1.example.com.', 'write_commit_failed'],
      ['Audit Write Failure. Attempt to write to audit log on node "cb1.example.com" was unsuccessful', 'audit_write_failed'],
      ['Warning: approaching max index RAM. Indexer RAM on node "cb2.example.com" is 91%, which is at or above the threshold of 75%.', 'index_ram_nearly_full'],
      ['Remote or replica mutation received for bucket "orders" on node "cb1.example.com" with timestamp more than 5000 milliseconds ahead of local clock. Please ensure that NTP is set up correctly on all nodes across the replication topology and clocks are synchronized.', 'cas_drift'],
      ['Warning: Node "ns_1@cb1.example.com" is having issues communicating with following nodes "ns_1@cb3.example.com".', 'communication_issue'],
      ["The time on node 'ns_1@cb2.example.com' is not synchronized. Please ensure that NTP is set up correctly on all nodes and that clocks are synchronized.", 'time_out_of_sync'],
      ['Disk usage worker is stuck on node "cb1.example.com". Please ensure all mounts are accessible via "df" and consider killing any existing "df" processes.', 'disk_usage_analyzer_stuck'],
      ["Server certificate for node cb1.example.com (subject: 'CN=cb1') will expire at 2026-12-01T00:00:00Z.", 'certificate_expires_soon'],
      ["Trusted CA certificate with ID=2 (subject: 'CN=Corp Root') has expired.", 'certificate_expired'],
      ["Client XDCR certificate (subject: 'CN=xdcr') has expired.", 'certificate_expired'],
      ["XDCR CA certificate (subject: 'CN=Remote CA') will expire at 2026-12-01T00:00:00Z.", 'certificate_expires_soon'],
      ["CRITICAL: On node cb1.example.com 'system' memory use is 96.10% of total available memory, above the critical threshold of 95%.", 'memory_threshold'],
      ['IP address seems to have changed. Unable to listen on \'10.0.0.5\'. (POSIX error code: \'eaddrnotavail\')', 'ip_changed'],
      ["Node ('ns_1@cb3.example.com') was automatically failed over. Reason: The data service did not respond.", 'auto_failover_performed'],
      ["Could not automatically fail over node ('ns_1@cb3.example.com'). Cluster was unbalanced.", 'auto_failover_not_possible'],
      ['Approaching full disk warning. Usage of disk "/data" on node "cb4" is around 93%.', 'disk_nearly_full'],
      ['Something Couchbase 9 says that no one has seen yet.', 'other'],
    ];
    expect(cases.map(([m]) => clusterAlertKind(m))).toEqual(cases.map(([, k]) => k));
  });

  it('an entry without message text counts as other, with no note', () => {
    const set = new SampleSet();
    mapClusterAlerts([{ serverTime: '2020-09-19T09:00:03.000Z' }, 42], set, (t) => t);
    expect(counts(set)).toEqual({ ...zeros(), other: 2 });
    expect(set.notes).toEqual([]);
  });

  it('the landing page shows the messages redacted and shortened; /metrics never carries the text', async () => {
    const secret = 'S3cr3t-Passw0rd!';
    const pools = loadFixture<Record<string, unknown>>('pools-default/gocaves-7.0.0-3016.json');
    const long = `Approaching full disk warning. ${'x'.repeat(1000)}`;
    const withSecret = { ...pools, alerts: [{ msg: `Metadata overhead warning. password=${secret} on node "cb1"`, serverTime: '2020-09-19T09:00:03.000Z' }, long] };
    const redactor = new Redactor();
    redactor.add(secret);
    const set = new SampleSet();
    mapClusterAlerts(withSecret.alerts, set, (t) => safeExcerpt(t, redactor, ALERT_TEXT_MAX));
    expect(set.notes[0]).toContain('Couchbase alert (metadata_overhead): Metadata overhead warning.');
    expect(set.notes.join('\n')).not.toContain(secret);
    expect(set.notes[1]?.length).toBeLessThanOrEqual('Couchbase alert (disk_nearly_full): '.length + ALERT_TEXT_MAX);

    const problems = findProblems([{ base: { couchbase_cluster: 'prod-eu' }, set }], Date.now());
    expect(problems.map((p) => [p.cluster, p.severity, p.text.slice(0, 37)])).toEqual([
      ['prod-eu', 'warning', 'Couchbase alert (disk_nearly_full): A'],
      ['prod-eu', 'warning', 'Couchbase alert (metadata_overhead): '],
    ]);

    // Through the collector: the count is on /metrics, the message is not.
    const r = await collect(nodesCollector, fakeClient({ '/pools/default': withSecret, '/pools/default/nodeServices': { nodesExt: [] }, '/pools/default/serverGroups': { groups: [] } }));
    expect(r.set.get('couchbase_cluster_alerts', { kind: 'metadata_overhead' })).toBe(1);
    expect(r.set.get('couchbase_cluster_alerts', { kind: 'disk_nearly_full' })).toBe(1);
    expect(r.text).not.toContain('Metadata overhead warning');
    expect(r.text).not.toContain(secret);
    // The collector redacts with the process redactor: a password= field is redacted by its pattern.
    expect(r.set.notes.join("\n")).not.toContain(secret);
    expect(r.set.notes.join("\n")).toContain("[redacted]");
  });

  it('keeps at most 20 notes and counts the rest', () => {
    const set = new SampleSet();
    mapClusterAlerts(Array.from({ length: 25 }, (_, i) => `Approaching full disk warning. Usage of disk "/" on node "n${i}" is around 91%.`), set, (t) => t);
    expect(counts(set).disk_nearly_full).toBe(25);
    expect(set.notes).toHaveLength(20);
    expect(set.notesLeftOut).toBe(5);
    expect(findProblems([{ base: { couchbase_cluster: 'c' }, set }], Date.now()).filter((p) => p.text.startsWith('5 more Couchbase alert(s)'))).toHaveLength(1);
  });
});
