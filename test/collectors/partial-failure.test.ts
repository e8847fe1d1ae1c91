/**
 * One bad item never blanks a collector (issue 11, item 3): against the simulator, a fault on ONE item's
 * request (a node certificate, a search index, a bucket's scopes, a repository state's list, a security
 * sub-endpoint, server groups) removes only that item's series, leaves its neighbours, keeps the poll a
 * success and counts the failure by reason; the poll fails only when every item fails.
 */
import { describe, expect, it } from 'vitest';
import type { Collector } from '../../src/collectors/types.js';
import { backupCollector } from '../../src/collectors/backup.js';
import { certificatesCollector } from '../../src/collectors/certificates.js';
import { collectionsCollector } from '../../src/collectors/collections.js';
import { nodesCollector } from '../../src/collectors/nodes.js';
import { searchCollector } from '../../src/collectors/search.js';
import { securityCollector } from '../../src/collectors/security.js';
import { tasksCollector } from '../../src/collectors/tasks.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CollectorName, CollectorOptions } from '../../src/config/schema.js';
import type { FaultRule } from '../../src/simulator/index.js';
import { collect, simulatorWithClient } from '../helpers/collect.js';
import type { CollectResult } from '../helpers/collect.js';

const t = simulatorWithClient({ nodes: 3, buckets: 3 });

/** One poll with `faults` in place (cleared afterwards); a short request timeout so a hang is an item time-out. */
async function pollWith<N extends CollectorName>(collector: Collector<N>, faults: FaultRule[], options?: Partial<CollectorOptions<N>>): Promise<CollectResult> {
  const client = createClient({ cluster: 't', url: t.client.baseUrl, username: 'Administrator', password: 'password', requestTimeout: 400 });
  for (const f of faults) t.sim.ctx.faults.add(f);
  try {
    return await collect(collector, client, options ? { options } : {});
  } finally {
    t.sim.ctx.faults.clear();
    await client.close();
  }
}

const labelValues = (r: CollectResult, family: string, label: string): string[] => [...new Set(r.set.all(family).map((s) => s.labels[label] ?? ''))].sort();
const errors = (r: CollectResult): Record<string, number> => Object.fromEntries(r.itemErrors);

describe('certificates: one node certificate failing', () => {
  const kinds: Array<[FaultRule['kind'], string]> = [
    ['status', 'http_5xx'],
    ['reset', 'network'],
    ['hang', 'timeout'],
    ['invalid_json', 'bad_body'],
  ];
  for (const [kind, reason] of kinds) {
    it(`${kind}: only that node's series go, counted as ${reason}`, async () => {
      const healthy = await pollWith(certificatesCollector, []);
      const all = labelValues(healthy, 'couchbase_node_certificate_not_after_timestamp_seconds', 'node');
      expect(all).toHaveLength(3);
      const victim = all.find((n) => n.startsWith('cb2.')) as string;
      const r = await pollWith(certificatesCollector, [{ match: new RegExp(`^/pools/default/certificate/node/${encodeURIComponent(victim).replace(/\./g, '\\.')}$`), kind, status: 500 }]);
      expect(r.ok, String(r.error)).toBe(true);
      expect(errors(r)).toEqual({ [reason]: 1 });
      expect(labelValues(r, 'couchbase_node_certificate_not_after_timestamp_seconds', 'node')).toEqual(all.filter((n) => n !== victim));
      expect(labelValues(r, 'couchbase_node_certificate_chain_not_after_timestamp_seconds', 'node')).not.toContain(victim);
      expect(r.set.all('couchbase_trusted_ca_not_after_timestamp_seconds').length).toBe(healthy.set.all('couchbase_trusted_ca_not_after_timestamp_seconds').length);
    });
  }

  it('every node and the upload switch failing leaves the CA expiries (items too) standing', async () => {
    const r = await pollWith(certificatesCollector, [
      { match: '/pools/default/certificate/node/:node', kind: 'status', status: 500 },
      { match: '/settings/security/allowNonLocalCACertUpload', kind: 'status', status: 503 },
    ]);
    expect(r.ok, String(r.error)).toBe(true);
    expect(errors(r)).toEqual({ http_5xx: 4 });
    expect(r.set.all('couchbase_node_certificate_not_after_timestamp_seconds')).toEqual([]);
    expect(r.set.all('couchbase_trusted_ca_not_after_timestamp_seconds').length).toBeGreaterThan(0);
  });
});

describe('search: one index view failing', () => {
  const indexes = ['travel-hotels', 'travel-landmarks', 'beer-fts'];
  it('removes only that index, counts it, and fails the poll only when every index fails', async () => {
    const r = await pollWith(searchCollector, [{ match: /^\/api\/query\/index\/travel-landmarks$/, kind: 'status', status: 500 }], { indexes });
    expect(r.ok, String(r.error)).toBe(true);
    expect(errors(r)).toEqual({ http_5xx: 1 });
    expect(labelValues(r, 'couchbase_search_active_queries', 'index')).not.toContain('travel-landmarks');
    expect(labelValues(r, 'couchbase_search_active_queries', 'index')).toEqual(expect.arrayContaining(['beer-fts', 'travel-hotels']));
    const all = await pollWith(searchCollector, [{ match: '/api/query/index/:indexName', kind: 'invalid_json' }], { indexes });
    expect(all.ok).toBe(false);
    expect(errors(all)).toEqual({ bad_body: 3 });
  });
});

describe('collections: one bucket failing', () => {
  it('removes only that bucket', async () => {
    const r = await pollWith(collectionsCollector, [{ match: /^\/pools\/default\/buckets\/beer-sample\/scopes$/, kind: 'status', status: 500 }]);
    expect(r.ok, String(r.error)).toBe(true);
    expect(errors(r)).toEqual({ http_5xx: 1 });
    expect(labelValues(r, 'couchbase_bucket_scopes', 'bucket')).toEqual(['gamesim-sample', 'travel-sample']);
    const all = await pollWith(collectionsCollector, [{ match: '/pools/default/buckets/:bucket/scopes', kind: 'reset' }]);
    expect(all.ok).toBe(false);
    expect(errors(all)).toEqual({ network: 3 });
  });
});

describe('backup: one repository state failing', () => {
  it('removes only that state', async () => {
    const r = await pollWith(backupCollector, [{ match: /^\/api\/v1\/cluster\/self\/repository\/archived$/, kind: 'status', status: 500 }]);
    expect(r.ok, String(r.error)).toBe(true);
    expect(errors(r)).toEqual({ http_5xx: 1 });
    expect(labelValues(r, 'couchbase_backup_repositories', 'state')).toEqual(['active', 'imported']);
    expect(r.set.get('couchbase_backup_repository_healthy', { repository: 'hourlyBackups', state: 'active' })).toBe(1);
    expect(r.set.get('couchbase_backup_repository_last_success_timestamp_seconds', { repository: 'hourlyBackups', state: 'active' })).toBeGreaterThan(0);
  });

  it('a task history failing costs only that repository its last success', async () => {
    const r = await pollWith(backupCollector, [{ match: '/api/v1/cluster/self/repository/active/:repo/taskHistory', kind: 'status', status: 502 }]);
    expect(r.ok, String(r.error)).toBe(true);
    expect(errors(r)).toEqual({ http_5xx: 1 });
    expect(r.set.all('couchbase_backup_repository_last_success_timestamp_seconds')).toEqual([]);
    expect(r.set.get('couchbase_backup_repository_healthy', { repository: 'hourlyBackups', state: 'active' })).toBe(1);
  });

  it('every state failing fails the poll', async () => {
    const r = await pollWith(backupCollector, [{ match: '/api/v1/cluster/self/repository/:state', kind: 'status', status: 500 }]);
    expect(r.ok).toBe(false);
  });
});

describe('security: one sub-endpoint failing', () => {
  it('a service removes only that service; LDAP removes only the LDAP families', async () => {
    const healthy = await pollWith(securityCollector, []);
    const services = labelValues(healthy, 'couchbase_security_tls_min_version', 'service');
    expect(services).toContain('index');
    const r = await pollWith(securityCollector, [
      { match: /^\/settings\/security\/index$/, kind: 'status', status: 500 },
      { match: '/settings/ldap', kind: 'hang' },
    ]);
    expect(r.ok, String(r.error)).toBe(true);
    expect(errors(r)).toEqual({ http_5xx: 1, timeout: 1 });
    expect(labelValues(r, 'couchbase_security_tls_min_version', 'service')).toEqual(services.filter((s) => s !== 'index'));
    expect(healthy.set.get('couchbase_ldap_hosts')).toBeDefined();
    expect(r.set.get('couchbase_ldap_hosts')).toBeUndefined();
    expect(r.set.get('couchbase_security_ui_over_http_disabled')).toBe(healthy.set.get('couchbase_security_ui_over_http_disabled'));
  });
});

describe('nodes: a sub-endpoint failing', () => {
  it('server groups failing removes only the server-group families', async () => {
    const r = await pollWith(nodesCollector, [{ match: '/pools/default/serverGroups', kind: 'status', status: 500 }]);
    expect(r.ok, String(r.error)).toBe(true);
    expect(errors(r)).toEqual({ http_5xx: 1 });
    expect(r.set.get('couchbase_server_groups')).toBeUndefined();
    expect(labelValues(r, 'couchbase_node_status', 'node')).toEqual(['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091', 'cb3.cbsim.local:8091']);
    expect(r.set.all('couchbase_node_service_port').length).toBeGreaterThan(0);
  });
});

describe('tasks: the node-name lookup failing during a rebalance', () => {
  const r = simulatorWithClient({ nodes: 3, buckets: 1, knobs: { rebalanceRunning: true } });
  it('leaves only the per-node progress out (a bare host would not join), counted', async () => {
    const healthy = await collect(tasksCollector, r.client);
    expect(healthy.set.all('couchbase_rebalance_node_progress_ratio').map((s) => s.labels.node).sort()).toEqual(['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091', 'cb3.cbsim.local:8091']);
    r.sim.ctx.faults.add({ match: '/pools/default', kind: 'status', status: 503 });
    try {
      const failed = await collect(tasksCollector, r.client);
      expect(failed.ok, String(failed.error)).toBe(true);
      expect(errors(failed)).toEqual({ http_5xx: 1 });
      expect(failed.set.all('couchbase_rebalance_node_progress_ratio')).toEqual([]);
      expect(failed.set.get('couchbase_rebalance_running')).toBe(1);
      expect(failed.set.get('couchbase_rebalance_progress_ratio')).toBeDefined();
    } finally {
      r.sim.ctx.faults.clear();
    }
  });
});
