/**
 * The `eventing` collector's statistics through the envelope source (the cluster-wide `@eventing` section, whose
 * `eventing/<function>/<stat>` keys are sums over the eventing nodes), and the independence of its two parts.
 *
 * Hand-built answers in the shape of ns_server's section envelope (ns_server@6.6.5:src/menelaus_stats.erl
 * handle_stats_section; src/service_eventing.erl: dcp_backlog and the success/failure counts are gauges holding the
 * eventing service's running totals, kept per function as `eventing/<function>/<stat>` and summed over the functions
 * as `eventing/<stat>`).
 */
import { describe, expect, it } from 'vitest';
import { eventingCollector } from '../../src/collectors/eventing.js';
import { collect, fakeClient, loadFixture } from '../helpers/collect.js';

const STATUS = '/_p/event/api/v1/status';
const NS = '/pools/default/nodeServices';
const POOLS = '/pools/default';
const SECTION = '/pools/default/buckets/@{section}/stats';
const WITH_EVENTING = { nodesExt: [{ services: { mgmt: 8091, kv: 11210 }, thisNode: true }, { hostname: 'ev1.example.com', services: { mgmt: 8091, eventingAdminPort: 8096, eventingSSL: 18096 } }] };
const POOL = { nodes: [{ hostname: 'kv1.example.com:8091', services: ['kv'] }, { hostname: 'ev1.example.com:8091', services: ['eventing'] }] };
const V66 = loadFixture('eventing-api-v1-status/handbuilt-6.6.json');
const T0 = Date.UTC(2026, 11, 7, 12, 0, 0);

function envelope(samples: Record<string, unknown[]>): unknown {
  return { op: { samples: { timestamp: [T0 - 1000, T0], ...samples }, samplesCount: 2, isPersistent: false, lastTStamp: T0, interval: 1000 } };
}
const EVENTING = envelope({
  'eventing/enrich_orders/dcp_backlog': [300, 250],
  'eventing/enrich_orders/on_update_success': [9990, 10000],
  'eventing/enrich_orders/on_update_failure': [2, 2],
  'eventing/enrich_orders/on_delete_success': [40, 41],
  'eventing/enrich_orders/on_delete_failure': [0, 0],
  'eventing/enrich_orders/timeout_count': [1, 1],
  'eventing/enrich_orders/processed_count': [10030, 10041],
  'eventing/dcp_backlog': [300, 250],
  'eventing/on_update_success': [9990, 10000],
});
const routes = (status: unknown, section: unknown = EVENTING): Record<string, unknown> => ({ [NS]: WITH_EVENTING, [POOLS]: POOL, [STATUS]: status, [SECTION]: (p: Record<string, string>) => (p.section === 'eventing' ? section : { status: 404, text: 'x' }) });
const E = { function: 'enrich_orders' };

describe('eventing collector: statistics from the @eventing section (before 7.0)', () => {
  it('exports the backlog as a level and the running totals as counters, per function (the newest sample)', async () => {
    const client = fakeClient(routes(V66));
    const r = await collect(eventingCollector, client, { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_eventing_dcp_backlog', E)).toBe(250);
    expect(r.set.get('couchbase_eventing_on_update_success_total', E)).toBe(10000);
    expect(r.set.get('couchbase_eventing_on_update_failures_total', E)).toBe(2);
    expect(r.set.get('couchbase_eventing_on_delete_success_total', E)).toBe(41);
    expect(r.set.get('couchbase_eventing_on_delete_failures_total', E)).toBe(0);
    expect(r.set.get('couchbase_eventing_timeouts_total', E)).toBe(1);
    // audit_log has a status but no statistics in the section: none invented.
    expect(r.set.get('couchbase_eventing_function_status', { function: 'audit_log', function_bucket: '', function_scope: '', status: 'pausing' })).toBe(1);
    expect(r.set.get('couchbase_eventing_dcp_backlog', { function: 'audit_log' })).toBeUndefined();
    // The sums over the functions are not a function.
    expect(r.set.all('couchbase_eventing_dcp_backlog').map((s) => s.labels.function)).toEqual(['enrich_orders']);
    expect(r.text).toContain('# TYPE couchbase_eventing_on_update_success_total counter');
    // One cluster-wide request: the section's keys are already sums over the nodes.
    expect(client.calls.filter((c) => c.route === SECTION).map((c) => c.params.section)).toEqual(['eventing']);
  });

  it('a failure of the statistics leaves the status families, and the reverse', async () => {
    const noStats = await collect(eventingCollector, fakeClient(routes(V66, { status: 500, text: 'boom' })), { now: () => T0 + 500 });
    expect(noStats.ok, String(noStats.error)).toBe(true);
    expect(noStats.itemErrors.get('http_5xx')).toBe(1);
    expect(noStats.set.get('couchbase_eventing_function_status', { function: 'enrich_orders', function_bucket: '', function_scope: '', status: 'deployed' })).toBe(1);
    expect(noStats.set.all('couchbase_eventing_dcp_backlog')).toEqual([]);

    const forbidden = { status: 403, body: { message: 'Forbidden. User needs the following permissions', permissions: ['cluster.eventing.functions!manage'] } };
    const noStatus = await collect(eventingCollector, fakeClient(routes(forbidden)), { now: () => T0 + 500 });
    expect(noStatus.ok, String(noStatus.error)).toBe(true);
    expect(noStatus.itemErrors.get('forbidden')).toBe(1);
    expect(noStatus.note).toContain('cluster.eventing.functions!manage');
    expect(noStatus.set.get('couchbase_eventing_dcp_backlog', E)).toBe(250);
    expect(noStatus.set.all('couchbase_eventing_function_status')).toEqual([]);
  });

  it('notes a failed status part by its code, without the upstream text, while the statistics stay', async () => {
    const r = await collect(eventingCollector, fakeClient(routes({ status: 500, text: 'upstream says password=hunter2' })), { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.itemErrors.get('http_5xx')).toBe(1);
    expect(r.note).toContain('function status: CBW_ERR_HTTP');
    expect(r.note).not.toContain('hunter2');
    expect(r.set.get('couchbase_eventing_dcp_backlog', E)).toBe(250);
  });

  it('a function that disappears from the section takes its statistics with it', async () => {
    let section: unknown = EVENTING;
    const client = fakeClient({ ...routes(V66), [SECTION]: () => section });
    const state = new Map<string, unknown>();
    expect((await collect(eventingCollector, client, { state, now: () => T0 + 500 })).set.get('couchbase_eventing_dcp_backlog', E)).toBe(250);
    section = envelope({ 'eventing/dcp_backlog': [0, 0] });
    const after = await collect(eventingCollector, client, { state, now: () => T0 + 1500 });
    expect(after.ok, String(after.error)).toBe(true);
    expect(after.set.all('couchbase_eventing_dcp_backlog')).toEqual([]);
    expect(after.set.all('couchbase_eventing_on_update_success_total')).toEqual([]);
  });
});
