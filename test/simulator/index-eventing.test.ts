/**
 * The simulator's /indexStatus and /_p/event/api/v1/status on every profile. Expected values are written by hand
 * from the upstream definitions (ns_server service_index.erl status_mapping/0 and menelaus_web_indexes
 * handle_index_status for /indexStatus; indexing request_handler.go getStateStr for the status strings; eventing
 * service_manager/defs.go appStatus and http_handlers.go determineStatus for the function status) and the
 * simulator's documented cluster, not from the collectors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { indexCollector } from '../../src/collectors/index-service.js';
import { eventingCollector } from '../../src/collectors/eventing.js';
import { createClient } from '../../src/couchbase/client.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { SimOptions, Simulator } from '../../src/simulator/index.js';
import { collect } from '../helpers/collect.js';

const AUTH = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };
let sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

function sim(opts: SimOptions): Simulator {
  const s = createSimulator(opts);
  sims.push(s);
  return s;
}

async function get<T>(s: Simulator, url: string): Promise<{ status: number; body: T }> {
  const res = await s.app.inject({ method: 'GET', url, headers: AUTH });
  return { status: res.statusCode, body: (res.body ? JSON.parse(res.body) : undefined) as T };
}

type Entry = Record<string, unknown>;
interface IndexStatus {
  indexes: Entry[];
  version: number;
  warnings: string[];
}

describe('simulated /indexStatus', () => {
  for (const version of ['7.2.4', '7.6.5', '8.0.0']) {
    it(`${version}: entries carry scope, collection and replicaId; a replica per index node; a partitioned index over both`, async () => {
      const { status, body } = await get<IndexStatus>(sim({ version }), '/indexStatus');
      expect(status).toBe(200);
      expect(body.warnings).toEqual([]);
      // Three nodes: cb1 and cb3 run the index service (cb2 runs kv and fts).
      const defType = body.indexes.filter((i) => i.indexName === 'def_type');
      expect(defType.map((i) => [i.index, i.replicaId, i.hosts, i.partitionMap])).toEqual([
        ['def_type', 0, ['cb1.cbsim.local:8091'], { 'cb1.cbsim.local:8091': [0] }],
        ['def_type (replica 1)', 1, ['cb3.cbsim.local:8091'], { 'cb3.cbsim.local:8091': [0] }],
      ]);
      expect(defType[0]).toMatchObject({ bucket: 'travel-sample', scope: '_default', collection: '_default', status: 'Ready', progress: 100, numReplica: 1 });
      expect(defType[0]?.lastScanTime).toMatch(/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:00 UTC \d{4}$/);
      const city = body.indexes.find((i) => i.indexName === 'idx_city');
      expect(city).toMatchObject({ scope: 'inventory', collection: 'hotel', partitioned: true, numPartition: 8, hosts: ['cb1.cbsim.local:8091', 'cb3.cbsim.local:8091'] });
      expect(city?.partitionMap).toEqual({ 'cb1.cbsim.local:8091': [1, 3, 5, 7], 'cb3.cbsim.local:8091': [2, 4, 6, 8] });
      expect(body.indexes.find((i) => i.indexName === 'idx_deferred')).toMatchObject({ status: 'Created', progress: 0, lastScanTime: 'NA' });
    });
  }

  it('6.6.5: no scope, collection or replicaId; the replica only in the display name; no partitioned index', async () => {
    const { body } = await get<IndexStatus>(sim({ version: '6.6.5' }), '/indexStatus');
    for (const i of body.indexes) for (const k of ['scope', 'collection', 'replicaId']) expect(i, k).not.toHaveProperty(k);
    expect(body.indexes.map((i) => i.index)).toEqual(['#primary', 'def_type', 'def_type (replica 1)', 'idx_deferred']);
  });

  it('knobs: a status by name, a dropped index, the stale warning and a 403 naming the permission of the route', async () => {
    const s = sim({ knobs: { indexStates: { def_type: 'Error' }, indexesDropped: ['#primary'], indexStatusStale: true } });
    const { body } = await get<IndexStatus>(s, '/indexStatus');
    expect(body.indexes.filter((i) => i.indexName === 'def_type').map((i) => i.status)).toEqual(['Error', 'Error']);
    expect(body.indexes.some((i) => i.indexName === '#primary')).toBe(false);
    expect(body.warnings).toEqual(['Cannot communicate with indexer process. Information on indexes may be stale. Will retry.']);
    s.ctx.options.knobs.indexStatusForbidden = true;
    const denied = await get<{ permissions: string[] }>(s, '/indexStatus');
    expect(denied.status).toBe(403);
    expect(denied.body.permissions).toEqual(['cluster.collection[.:.:.].n1ql.index!read']);
    const old = sim({ version: '6.6.5', knobs: { indexStatusForbidden: true } });
    expect((await get<{ permissions: string[] }>(old, '/indexStatus')).body.permissions).toEqual(['cluster.bucket[.].n1ql.index!read']);
  });

  it('demo: idx_building is Building, its progress one percent per 6 simulated seconds', async () => {
    const s = sim({ scenario: 'demo' });
    let t = s.ctx.startedAt + 120_000;
    (s.ctx as { now: () => number }).now = () => t;
    const at = async (): Promise<Entry | undefined> => (await get<IndexStatus>(s, '/indexStatus')).body.indexes.find((i) => i.indexName === 'idx_building');
    expect(await at()).toMatchObject({ status: 'Building', progress: 20, lastScanTime: 'NA' });
    t = s.ctx.startedAt + 300_000;
    expect((await at())?.progress).toBe(50);
  });

  it('no index node: an empty list', async () => {
    const s = sim({});
    for (const n of s.ctx.nodes) n.services = n.services.filter((x) => x !== 'index');
    expect((await get<IndexStatus>(s, '/indexStatus')).body.indexes).toEqual([]);
  });
});

interface EventingStatus {
  apps: Entry[];
  num_eventing_nodes: number;
}

describe('simulated /_p/event/api/v1/status', () => {
  it('answers 404 when no node runs eventing (the default cluster), and nodeServices advertises no eventing port', async () => {
    const s = sim({});
    expect((await s.app.inject({ method: 'GET', url: '/_p/event/api/v1/status', headers: AUTH })).statusCode).toBe(404);
    const ns = await get<{ nodesExt: Array<{ services: Record<string, number> }> }>(s, '/pools/default/nodeServices');
    expect(ns.body.nodesExt.some((n) => 'eventingAdminPort' in n.services)).toBe(false);
  });

  for (const version of ['7.2.4', '7.6.5', '8.0.0']) {
    it(`${version} demo: a paused function (deployed, not processing), function scopes, one eventing node`, async () => {
      const s = sim({ version, scenario: 'demo' });
      const { status, body } = await get<EventingStatus>(s, '/_p/event/api/v1/status');
      expect(status).toBe(200);
      expect(body.num_eventing_nodes).toBe(1);
      expect(body.apps).toEqual([
        { composite_status: 'deployed', name: 'enrich_orders', num_bootstrapping_nodes: 0, num_deployed_nodes: 1, deployment_status: true, processing_status: true, redeploy_required: false, function_scope: { bucket: 'travel-sample', scope: '_default' } },
        { composite_status: 'paused', name: 'audit_log', num_bootstrapping_nodes: 0, num_deployed_nodes: 1, deployment_status: true, processing_status: false, redeploy_required: false, function_scope: { bucket: '*', scope: '*' } },
        { composite_status: 'undeployed', name: 'cleanup_sessions', num_bootstrapping_nodes: 0, num_deployed_nodes: 0, deployment_status: false, processing_status: false, redeploy_required: false, function_scope: { bucket: 'travel-sample', scope: '_default' } },
      ]);
      const ns = await get<{ nodesExt: Array<{ services: Record<string, number> }> }>(s, '/pools/default/nodeServices');
      expect(ns.body.nodesExt.filter((n) => 'eventingSSL' in n.services).length).toBe(1);
    });
  }

  it('6.6.5: no function_scope; knobs change a status, drop a function and answer 403', async () => {
    const s = sim({ version: '6.6.5', knobs: { eventingNodes: 2, eventingStatuses: { enrich_orders: 'deploying' }, eventingFunctionsDropped: ['cleanup_sessions'] } });
    const { body } = await get<EventingStatus>(s, '/_p/event/api/v1/status');
    expect(body.num_eventing_nodes).toBe(2);
    expect(body.apps.map((a) => [a.name, a.composite_status, a.num_bootstrapping_nodes, 'function_scope' in a])).toEqual([
      ['enrich_orders', 'deploying', 2, false],
      ['audit_log', 'deployed', 0, false],
    ]);
    s.ctx.options.knobs.eventingStatusForbidden = true;
    expect((await get(s, '/_p/event/api/v1/status')).status).toBe(403);
  });
});

describe('the collectors against the simulator', () => {
  for (const version of ['6.6.5', '7.6.5']) {
    it(`${version} demo: the building index and the paused function come through`, async () => {
      const s = sim({ version, scenario: 'demo' });
      const client = createClient({ cluster: 't', url: await s.listen(), username: 'Administrator', password: 'password' });
      try {
        const ix = await collect(indexCollector, client);
        expect(ix.ok, String(ix.error)).toBe(true);
        const building = { bucket: 'travel-sample', scope: '_default', collection: '_default', index: 'idx_building', replica: '0' };
        expect(ix.set.get('couchbase_index_state', { ...building, state: 'building' })).toBe(1);
        expect(ix.set.get('couchbase_index_state', { bucket: 'travel-sample', scope: '_default', collection: '_default', index: 'def_type', replica: '1', state: 'ready' })).toBe(1);
        const ev = await collect(eventingCollector, client);
        expect(ev.ok, String(ev.error)).toBe(true);
        const audit = version === '6.6.5' ? { function: 'audit_log', function_bucket: '', function_scope: '' } : { function: 'audit_log', function_bucket: '*', function_scope: '*' };
        expect(ev.set.get('couchbase_eventing_function_status', { ...audit, status: 'paused' })).toBe(1);
      } finally {
        await client.close();
      }
    });
  }

  it('a 403 on /indexStatus fails only the index state: an item error naming the permission, the index statistics and the other collectors carry on', async () => {
    const s = sim({ scenario: 'demo', knobs: { indexStatusForbidden: true } });
    const client = createClient({ cluster: 't', url: await s.listen(), username: 'Administrator', password: 'password' });
    try {
      const ix = await collect(indexCollector, client);
      expect(ix.ok, String(ix.error)).toBe(true);
      expect(ix.itemErrors.get('forbidden')).toBe(1);
      expect(ix.note).toContain('n1ql.index!read');
      expect(ix.set.all('couchbase_index_state')).toEqual([]);
      expect(ix.set.all('couchbase_index_items').length).toBeGreaterThan(0);
      expect((await collect(eventingCollector, client)).ok).toBe(true);
    } finally {
      await client.close();
    }
  });
});
