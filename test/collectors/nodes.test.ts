import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mapNodeServices, mapPoolsDefault, mapServerGroups, nodesCollector } from '../../src/collectors/nodes.js';
import { nodeServicesSchema } from '../../src/couchbase/nodeServices.js';
import { poolsDefaultSchema, serverGroupsSchema } from '../../src/couchbase/pools.js';
import { SampleSet } from '../../src/metrics/family.js';
import { renderSets } from '../../src/metrics/render.js';
import { collect, fakeClient, FIXTURES, loadFixture, simulatorWithClient } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

/** Checked once: a missing promtool skips its tests visibly (and fails under CI=true), never silently. */
const PROMTOOL = requireBinary('promtool');

const POOLS = '/pools/default';
const NS = '/pools/default/nodeServices';
const SG = '/pools/default/serverGroups';
const notFound = { status: 404, text: 'Not found.' };

/** One golden per generation: 3.0, 4.6, 5.0 (3 nodes), 6.5 (cloud), 7.0 (backup + fts nodes), 8.0 (server groups, alternate addresses). */
const GOLDEN: Array<[string, string]> = [
  ['docs-server-3.0.0.json', 'nodes-3.0.0.prom'],
  ['appd-4.6.3-1node.json', 'nodes-4.6.3.prom'],
  ['nri-couchbase-5.0.1-3nodes.json', 'nodes-5.0.1.prom'],
  ['goxdcr-6.5.1-6299-3nodes-cloud.json', 'nodes-6.5.1.prom'],
  ['docs-server-pools-nodes-7.0.1-2nodes.json', 'nodes-7.0.1.prom'],
  ['goxdcr-8.0.0-21113-2nodes-nlb.json', 'nodes-8.0.0.prom'],
];

async function render(set: SampleSet): Promise<string> {
  return renderSets([{ base: { couchbase_cluster: 'test' }, set }]);
}

describe('nodes collector on real /pools/default fixtures', () => {
  for (const [file, golden] of GOLDEN) {
    it(`matches the golden exposition for ${file}`, async () => {
      const r = await collect(nodesCollector, fakeClient({ [POOLS]: loadFixture(`pools-default/${file}`), [NS]: notFound, [SG]: notFound }));
      expect(r.ok, String(r.error)).toBe(true);
      await expect(r.text).toMatchFileSnapshot(`../golden/${golden}`);
    });
  }

  it('parses every complete pools-default fixture (3.x to 8.0) and exports status and membership of every node', async () => {
    const dir = join(FIXTURES, 'pools-default');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json') && !/\.(elided|truncated|fragment|wrapped|invalid)\.json$/.test(f));
    expect(files.length).toBeGreaterThanOrEqual(15);
    for (const f of files) {
      const raw = loadFixture<{ nodes: Array<{ hostname: string; status: string; clusterMembership: string }> }>(`pools-default/${f}`);
      const r = await collect(nodesCollector, fakeClient({ [POOLS]: raw, [NS]: notFound, [SG]: notFound }));
      expect(r.ok, `${f}: ${String(r.error)}`).toBe(true);
      for (const n of raw.nodes) {
        expect(r.set.get('couchbase_node_status', { node: n.hostname, status: n.status }), f).toBe(1);
        expect(r.set.get('couchbase_node_membership', { node: n.hostname, membership: n.clusterMembership }), f).toBe(1);
      }
      expect([...r.skipped.keys()].filter((k) => k !== 'node_services_not_found' && k !== 'server_groups_not_found'), f).toEqual([]);
    }
  });

  it('converts MiB quotas to bytes, percent CPU to a ratio, uptime strings to seconds, and counters to _total', async () => {
    const r = await collect(nodesCollector, fakeClient({ [POOLS]: loadFixture('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json'), [NS]: notFound, [SG]: notFound }));
    expect(r.set.get('couchbase_cluster_memory_quota_bytes', { service: 'kv' })).toBe(512 * 1024 * 1024);
    expect(r.set.get('couchbase_cluster_memory_quota_bytes', { service: 'cbas' })).toBe(1024 * 1024 * 1024);
    expect(r.set.get('couchbase_node_cpu_utilization_ratio', { node: '10.144.210.101:8091' })).toBeCloseTo(0.987012987012987, 12);
    expect(r.set.get('couchbase_node_uptime_seconds', { node: '10.144.210.102:8091' })).toBe(70725);
    expect(r.set.get('couchbase_cluster_rebalance_success_total')).toBe(1);
    expect(r.set.get('couchbase_cluster_balanced')).toBe(1);
    expect(r.set.get('couchbase_node_info', { node: '10.144.210.101:8091', services: 'backup,index,kv,n1ql', version: '7.0.1-6002-enterprise', server_group: '' })).toBe(1);
    expect(r.set.get('couchbase_node_mem_used_bytes', { node: '10.144.210.101:8091' })).toBe(78348816);
    expect(r.text).toMatch(/# TYPE couchbase_cluster_rebalance_start_total counter/);
  });
});

describe('nodes collector: storageTotals (disk and memory capacity)', () => {
  it('exports storageTotals in bytes per storage, values read by hand from the 7.0.1 docs payload', async () => {
    const r = await collect(nodesCollector, fakeClient({ [POOLS]: loadFixture('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json'), [NS]: notFound, [SG]: notFound }));
    // "hdd":{"total":264449089536,"quotaTotal":264449089536,"used":10577963580,"usedByData":129100174,"free":253871125956}
    expect(r.set.get('couchbase_cluster_storage_total_bytes', { storage: 'hdd' })).toBe(264449089536);
    expect(r.set.get('couchbase_cluster_storage_used_bytes', { storage: 'hdd' })).toBe(10577963580);
    expect(r.set.get('couchbase_cluster_storage_used_by_data_bytes', { storage: 'hdd' })).toBe(129100174);
    expect(r.set.get('couchbase_cluster_storage_free_bytes', { storage: 'hdd' })).toBe(253871125956);
    expect(r.set.get('couchbase_cluster_storage_quota_total_bytes', { storage: 'hdd' })).toBe(264449089536);
    expect(r.set.get('couchbase_cluster_storage_quota_used_bytes', { storage: 'hdd' })).toBeUndefined();
    // "ram":{"total":2065981440,"quotaTotal":1073741824,"quotaUsed":419430400,"used":1910071296,"usedByData":165666496,...}
    expect(r.set.get('couchbase_cluster_storage_total_bytes', { storage: 'ram' })).toBe(2065981440);
    expect(r.set.get('couchbase_cluster_storage_used_bytes', { storage: 'ram' })).toBe(1910071296);
    expect(r.set.get('couchbase_cluster_storage_used_by_data_bytes', { storage: 'ram' })).toBe(165666496);
    expect(r.set.get('couchbase_cluster_storage_quota_total_bytes', { storage: 'ram' })).toBe(1073741824);
    expect(r.set.get('couchbase_cluster_storage_quota_used_bytes', { storage: 'ram' })).toBe(419430400);
    expect(r.set.get('couchbase_cluster_storage_free_bytes', { storage: 'ram' })).toBeUndefined();
    // The oldest payload (3.0.0) has the same block: "hdd":{"free":46188516230,...,"total":56327458816,...}
    const old = await collect(nodesCollector, fakeClient({ [POOLS]: loadFixture('pools-default/docs-server-3.0.0.json'), [NS]: notFound, [SG]: notFound }));
    expect(old.set.get('couchbase_cluster_storage_free_bytes', { storage: 'hdd' })).toBe(46188516230);
    expect(old.set.get('couchbase_cluster_storage_total_bytes', { storage: 'hdd' })).toBe(56327458816);
  });

  it('emits nothing for an absent, null or non-numeric storageTotals field, and keeps the fields that are there', async () => {
    const none = await collect(nodesCollector, fakeClient({ [POOLS]: { nodes: [] }, [NS]: notFound, [SG]: notFound }));
    expect(none.ok, String(none.error)).toBe(true);
    for (const fam of ['total', 'used', 'used_by_data', 'quota_total', 'quota_used', 'free']) {
      expect(none.set.all(`couchbase_cluster_storage_${fam}_bytes`)).toEqual([]);
    }
    const partial = await collect(
      nodesCollector,
      fakeClient({ [POOLS]: { nodes: [], storageTotals: { ram: null, hdd: { total: 1000, used: null, free: 'n/a', usedByData: 10 } } }, [NS]: notFound, [SG]: notFound }),
    );
    expect(partial.ok, String(partial.error)).toBe(true);
    expect(partial.set.all('couchbase_cluster_storage_total_bytes')).toEqual([{ labels: { storage: 'hdd' }, value: 1000 }]);
    expect(partial.set.get('couchbase_cluster_storage_used_by_data_bytes', { storage: 'hdd' })).toBe(10);
    expect(partial.set.all('couchbase_cluster_storage_used_bytes')).toEqual([]);
    expect(partial.set.all('couchbase_cluster_storage_free_bytes')).toEqual([]);
  });
});

describe('nodes collector on odd input', () => {
  it('exports an unknown status under its own value, skips a node without systemStats only for those stats, and a broken node alone', async () => {
    const p = loadFixture<{ nodes: unknown[]; counters: Record<string, unknown> }>('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json');
    const [a, b] = p.nodes as [Record<string, unknown>, Record<string, unknown>];
    a.status = 'pending_restart';
    a.clusterMembership = 'inactiveFailed';
    delete b.systemStats;
    b.interestingStats = { curr_items: null, mem_used: 'lots', brand_new_stat: 3 };
    p.nodes.push({ status: 'healthy' }, 'not a node');
    p.counters = { rebalance_fail: 2, brand_new_counter: 5, bogus: 'x' };
    const r = await collect(nodesCollector, fakeClient({ [POOLS]: p, [NS]: notFound, [SG]: notFound }));
    expect(r.ok, String(r.error)).toBe(true);
    const node = '10.144.210.101:8091';
    expect(r.set.get('couchbase_node_status', { node, status: 'pending_restart' })).toBe(1);
    for (const s of ['healthy', 'unhealthy', 'warmup']) expect(r.set.get('couchbase_node_status', { node, status: s })).toBe(0);
    expect(r.set.get('couchbase_node_membership', { node, membership: 'inactiveFailed' })).toBe(1);
    expect(r.set.get('couchbase_node_membership', { node, membership: 'active' })).toBe(0);
    const other = '10.144.210.102:8091';
    expect(r.set.get('couchbase_node_status', { node: other, status: 'healthy' })).toBe(1);
    expect(r.set.get('couchbase_node_memory_total_bytes', { node: other })).toBeUndefined();
    expect(r.set.get('couchbase_node_cpu_utilization_ratio', { node: other })).toBeUndefined();
    expect(r.set.get('couchbase_node_curr_items', { node: other })).toBeUndefined();
    expect(r.set.get('couchbase_node_mem_used_bytes', { node: other })).toBeUndefined();
    expect(r.set.get('couchbase_node_interesting_stat', { node: other, stat: 'brand_new_stat' })).toBe(3);
    expect(r.set.get('couchbase_cluster_rebalance_fail_total')).toBe(2);
    expect(r.set.get('couchbase_cluster_brand_new_counter_total')).toBe(5);
    // Two entries that are not nodes: item errors (bad body), the real nodes keep their series.
    expect(r.itemErrors.get('bad_body')).toBe(2);
    expect(r.skipped.get('node_without_system_stats')).toBe(1);
    expect(r.skipped.get('interesting_stat_not_a_number')).toBe(1);
    expect(r.skipped.get('counter_not_a_number')).toBe(1);
  });

  it('emits nothing for missing cluster fields (no zeros)', async () => {
    const r = await collect(nodesCollector, fakeClient({ [POOLS]: { nodes: [{ hostname: 'a:8091' }] }, [NS]: notFound, [SG]: notFound }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_cluster_balanced')).toBeUndefined();
    expect(r.set.all('couchbase_cluster_memory_quota_bytes')).toEqual([]);
    expect(r.set.all('couchbase_node_status')).toEqual([]);
    expect(r.set.all('couchbase_node_uptime_seconds')).toEqual([]);
    expect(r.set.get('couchbase_node_info', { node: 'a:8091', version: '', services: '', server_group: '' })).toBe(1);
  });

  it('fails the poll on an HTTP error or bad JSON from /pools/default; a nodeServices error other than 404 is an item error', async () => {
    for (const answer of [{ status: 500, text: 'boom' }, { fail: 'invalid_json' as const }, { fail: 'network' as const }]) {
      const r = await collect(nodesCollector, fakeClient({ [POOLS]: answer, [NS]: notFound, [SG]: notFound }));
      expect(r.ok).toBe(false);
    }
    const r = await collect(nodesCollector, fakeClient({ [POOLS]: loadFixture('pools-default/appd-4.6.3-1node.json'), [NS]: { status: 503, text: 'x' }, [SG]: notFound }));
    expect(r.ok).toBe(true);
    expect(r.itemErrors.get('http_5xx')).toBe(1);
    expect(r.set.all('couchbase_node_service_port')).toEqual([]);
    expect(r.set.all('couchbase_node_status').length).toBeGreaterThan(0);
    const schema = await collect(nodesCollector, fakeClient({ [POOLS]: { nodes: 'nope' }, [NS]: notFound, [SG]: notFound }));
    expect(schema.ok).toBe(false);
  });
});

describe('nodeServices and serverGroups', () => {
  it('matches the golden exposition for the 6.5+ docs nodeServices (alternate addresses)', async () => {
    const set = new SampleSet();
    mapNodeServices(nodeServicesSchema.parse(loadFixture('pools-default-nodeServices/docs-server-6.5plus.json')), 'http://10.143.192.101:8091', set);
    expect(set.get('couchbase_service_nodes', { service: 'eventing' })).toBe(1);
    expect(set.get('couchbase_service_nodes', { service: 'fts' })).toBe(0);
    expect(set.get('couchbase_node_alternate_port', { node: '10.143.192.101:8091', network: 'external', port_name: 'kv' })).toBe(9000);
    await expect(await render(set)).toMatchFileSnapshot('../golden/nodes-nodeservices-6.5plus.prom');
  });

  it('matches the golden exposition for the IPv6 external-address nodeServices', async () => {
    const set = new SampleSet();
    mapNodeServices(nodeServicesSchema.parse(loadFixture('pools-default-nodeServices/goxdcr-ipv6-external.json')), 'http://192.168.1.104:8091', set);
    expect(set.get('couchbase_service_nodes', { service: 'kv' })).toBe(3);
    expect(set.get('couchbase_service_nodes', { service: 'n1ql' })).toBe(2);
    expect(set.get('couchbase_service_nodes', { service: 'index' })).toBe(2);
    expect(set.get('couchbase_node_alternate_address_info', { node: '192.168.1.101:8091', network: 'external', hostname: '240b:c0e0:104:5400:b423:2:1:0' })).toBe(1);
    await expect(await render(set)).toMatchFileSnapshot('../golden/nodes-nodeservices-ipv6.prom');
  });

  it('nodeServices with one node corrupted by hand: that node is an item error, the other four keep their series (issue 25)', async () => {
    const ns = loadFixture<{ nodesExt: Array<Record<string, unknown>> }>('pools-default-nodeServices/goxdcr-ipv6-external.json');
    // Node 192.168.1.102: a port that is not a number.
    (ns.nodesExt[1] as { services: Record<string, unknown> }).services.kv = 'eleven-two-ten';
    const r = await collect(nodesCollector, fakeClient({ [POOLS]: loadFixture('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json'), [NS]: ns, [SG]: notFound }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.itemErrors.get('bad_body')).toBe(1);
    // Counted by hand from the fixture: kv on .101, .102, .103; .102 is left out.
    expect(r.set.get('couchbase_service_nodes', { service: 'kv' })).toBe(2);
    expect(r.set.get('couchbase_service_nodes', { service: 'n1ql' })).toBe(2);
    expect(r.set.get('couchbase_node_service_port', { node: '192.168.1.101:8091', port_name: 'kv' })).toBe(11210);
    expect(r.set.get('couchbase_node_service_port', { node: '192.168.1.102:8091', port_name: 'mgmt' })).toBeUndefined();
  });

  it('names a node without hostname after the management URL, brackets included for IPv6', () => {
    const set = new SampleSet();
    mapNodeServices({ nodesExt: [{ services: { mgmt: 8091, kv: 11210 }, thisNode: true }] }, 'http://[fd00::1]:8091', set);
    expect(set.get('couchbase_node_service_port', { node: '[fd00::1]:8091', port_name: 'kv' })).toBe(11210);
  });

  it('matches the golden exposition for the 6.0 serverGroups fixture', async () => {
    const set = new SampleSet();
    mapServerGroups(serverGroupsSchema.parse(loadFixture('pools-default-serverGroups/docs-server-6.0.0-3nodes.json')), set);
    expect(set.get('couchbase_server_groups')).toBe(2);
    expect(set.get('couchbase_server_group_nodes', { server_group: 'Group 2' })).toBe(2);
    await expect(await render(set)).toMatchFileSnapshot('../golden/nodes-servergroups-6.0.0.prom');
  });

  it('collects all three endpoints in one poll, and counts a Community Edition 404 on serverGroups as skipped', async () => {
    const routes = {
      [POOLS]: loadFixture('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json'),
      [NS]: loadFixture('pools-default-nodeServices/docs-server-6.5plus.json'),
      [SG]: loadFixture('pools-default-serverGroups/docs-server-6.0.0-3nodes.json'),
    };
    const full = await collect(nodesCollector, fakeClient(routes));
    expect(full.ok, String(full.error)).toBe(true);
    expect(full.set.get('couchbase_server_groups')).toBe(2);
    expect(full.set.get('couchbase_service_nodes', { service: 'kv' })).toBe(1);
    expect(full.skipped.size).toBe(0);
    const ce = await collect(nodesCollector, fakeClient({ ...routes, [SG]: notFound }));
    expect(ce.ok).toBe(true);
    expect(ce.skipped.get('server_groups_not_found')).toBe(1);
    expect(ce.set.get('couchbase_server_groups')).toBeUndefined();
  });

  it('keeps mapPoolsDefault pure: same payload, same samples', () => {
    const p = poolsDefaultSchema.parse(loadFixture('pools-default/telegraf-3.0.1-7nodes.json'));
    const a = new SampleSet();
    const b = new SampleSet();
    mapPoolsDefault(p, a, () => undefined);
    mapPoolsDefault(p, b, () => undefined);
    expect(a.families()).toEqual(b.families());
    expect(a.get('couchbase_cluster_rebalance_stop_total')).toBe(2);
  });
});

describe('nodes golden files pass promtool check metrics', () => {
  it.skipIf(PROMTOOL === undefined)('is lint-clean', () => {
    const promtool = PROMTOOL as string;
    const golden = join(import.meta.dirname, '..', 'golden');
    for (const f of readdirSync(golden).filter((x) => x.startsWith('nodes-'))) {
      const input = execFileSync('cat', [join(golden, f)]);
      expect(execFileSync(promtool, ['check', 'metrics'], { input, encoding: 'utf8' }), f).toBe('');
    }
  });
});

describe('nodes collector against the simulator', () => {
  const t = simulatorWithClient({ scenario: 'incident', knobs: { autofailoverCount: 1 } });

  it('sees three server groups, a failed-over unhealthy node without systemStats, and an unbalanced cluster', async () => {
    const r = await collect(nodesCollector, t.client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_server_groups')).toBe(3);
    expect(r.set.get('couchbase_node_membership', { node: 'cb3.cbsim.local:8091', membership: 'inactiveFailed' })).toBe(1);
    expect(r.set.get('couchbase_node_status', { node: 'cb3.cbsim.local:8091', status: 'unhealthy' })).toBe(1);
    expect(r.set.get('couchbase_node_status', { node: 'cb1.cbsim.local:8091', status: 'healthy' })).toBe(1);
    expect(r.set.get('couchbase_cluster_balanced')).toBe(0);
    expect(r.set.get('couchbase_cluster_failover_node_total')).toBe(1);
    expect(r.set.get('couchbase_cluster_rebalance_fail_total')).toBe(1);
    expect(r.set.get('couchbase_cluster_memory_quota_bytes', { service: 'kv' })).toBe(4096 * 1024 * 1024);
    expect(r.set.get('couchbase_service_nodes', { service: 'backup' })).toBe(1);
    expect(r.skipped.get('node_without_system_stats')).toBe(1);
  });

  it('sees storageTotals summed over the two answering nodes: 500 GiB of disk each, 92% used in the incident', async () => {
    const r = await collect(nodesCollector, t.client);
    const GiB = 1024 ** 3;
    expect(r.set.get('couchbase_cluster_storage_total_bytes', { storage: 'hdd' })).toBe(1000 * GiB);
    expect(r.set.get('couchbase_cluster_storage_free_bytes', { storage: 'hdd' })).toBe(80 * GiB);
    expect(r.set.get('couchbase_cluster_storage_total_bytes', { storage: 'ram' })).toBe(2 * 16 * GiB);
    expect(r.set.get('couchbase_cluster_storage_quota_total_bytes', { storage: 'ram' })).toBe(2 * 4 * GiB);
  });
});
