import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventingCollector } from '../../src/collectors/eventing.js';
import { collect, fakeClient, loadFixture } from '../helpers/collect.js';
import { requireBinary } from '../helpers/tools.js';

const PROMTOOL = requireBinary('promtool');
const STATUS = '/_p/event/api/v1/status';
const NS = '/pools/default/nodeServices';
const WITH_EVENTING = { nodesExt: [{ services: { mgmt: 8091, kv: 11210 }, thisNode: true }, { hostname: 'ev1.example.com', services: { mgmt: 8091, eventingAdminPort: 8096, eventingSSL: 18096 } }] };
const V76 = loadFixture('eventing-api-v1-status/handbuilt-7.6.json');
const V66 = loadFixture('eventing-api-v1-status/handbuilt-6.6.json');

const FN = (fn: string, bucket: string, scope: string) => ({ function: fn, function_bucket: bucket, function_scope: scope });

describe('eventing collector: function status on a 7.x shape', () => {
  it('matches the golden exposition', async () => {
    const r = await collect(eventingCollector, fakeClient({ [NS]: WITH_EVENTING, [STATUS]: V76 }));
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/eventing-7.6.prom');
  });

  it('exports the composite status one-hot per function and scope, its nodes and redeploy flag (values by hand from the fixture)', async () => {
    const r = await collect(eventingCollector, fakeClient({ [NS]: WITH_EVENTING, [STATUS]: V76 }));
    const enrich = FN('enrich_orders', 'orders', '_default');
    expect(r.set.get('couchbase_eventing_function_status', { ...enrich, status: 'deployed' })).toBe(1);
    expect(r.set.get('couchbase_eventing_function_status', { ...enrich, status: 'paused' })).toBe(0);
    expect(r.set.get('couchbase_eventing_function_deployed_nodes', enrich)).toBe(2);
    // The same name in another scope is another function.
    const enrichEu = FN('enrich_orders', 'orders', 'eu');
    expect(r.set.get('couchbase_eventing_function_status', { ...enrichEu, status: 'deploying' })).toBe(1);
    expect(r.set.get('couchbase_eventing_function_bootstrapping_nodes', enrichEu)).toBe(2);
    const audit = FN('audit_log', '*', '*');
    expect(r.set.get('couchbase_eventing_function_status', { ...audit, status: 'paused' })).toBe(1);
    expect(r.set.get('couchbase_eventing_function_redeploy_required', audit)).toBe(1);
    expect(r.set.get('couchbase_eventing_function_status', { ...FN('cleanup_sessions', 'orders', '_default'), status: 'undeployed' })).toBe(1);
    expect(r.set.get('couchbase_eventing_nodes')).toBe(2);
    // 4 functions × 6 statuses.
    expect(r.set.families().find((f) => f.def.name === 'couchbase_eventing_function_status')?.samples.length).toBe(24);
  });

  it.skipIf(PROMTOOL === undefined)('golden file passes promtool check metrics', () => {
    const input = readFileSync(join(import.meta.dirname, '..', 'golden', 'eventing-7.6.prom'));
    expect(execFileSync(PROMTOOL as string, ['check', 'metrics'], { input, encoding: 'utf8' })).toBe('');
  });
});

describe('eventing collector: a 6.6 shape (no function_scope)', () => {
  it('matches the golden exposition', async () => {
    const r = await collect(eventingCollector, fakeClient({ [NS]: WITH_EVENTING, [STATUS]: V66 }));
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/eventing-6.6.prom');
  });

  it('names a function by its name alone, with empty scope labels', async () => {
    const r = await collect(eventingCollector, fakeClient({ [NS]: WITH_EVENTING, [STATUS]: V66 }));
    expect(r.set.get('couchbase_eventing_function_status', { ...FN('audit_log', '', ''), status: 'pausing' })).toBe(1);
    expect(r.set.get('couchbase_eventing_function_status', { ...FN('enrich_orders', '', ''), status: 'deployed' })).toBe(1);
    expect(r.set.get('couchbase_eventing_function_redeploy_required', FN('enrich_orders', '', ''))).toBe(0);
    expect(r.set.get('couchbase_eventing_nodes')).toBe(1);
  });
});

describe('eventing collector: missing fields, items and failures', () => {
  it('emits nothing for missing fields (not zeros), and nothing but the node count for a null function list', async () => {
    const bare = await collect(eventingCollector, fakeClient({ [NS]: WITH_EVENTING, [STATUS]: { apps: [{ name: 'bare' }] } }));
    expect(bare.ok, String(bare.error)).toBe(true);
    expect(bare.set.size).toBe(0);
    const none = await collect(eventingCollector, fakeClient({ [NS]: WITH_EVENTING, [STATUS]: { apps: null, num_eventing_nodes: 1 } }));
    expect(none.ok, String(none.error)).toBe(true);
    expect(none.set.families().map((f) => f.def.name)).toEqual(['couchbase_eventing_nodes']);
  });

  it('skips a function that does not parse as a failed item and keeps its neighbours', async () => {
    const good = (V76 as { apps: unknown[] }).apps[0];
    const r = await collect(eventingCollector, fakeClient({ [NS]: WITH_EVENTING, [STATUS]: { apps: [{ composite_status: 'deployed' }, good] } }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.itemErrors.get('bad_body')).toBe(1);
    expect(r.set.get('couchbase_eventing_function_status', { ...FN('enrich_orders', 'orders', '_default'), status: 'deployed' })).toBe(1);
  });

  it('a function that disappears takes its series with it; an unchanged list gives the same series', async () => {
    const all = V76 as { apps: Array<{ name: string }> };
    let answer: unknown = all;
    const client = fakeClient({ [NS]: WITH_EVENTING, [STATUS]: () => answer });
    const first = await collect(eventingCollector, client);
    expect((await collect(eventingCollector, client)).text).toBe(first.text);
    answer = { ...all, apps: all.apps.filter((a) => a.name !== 'audit_log') };
    const after = await collect(eventingCollector, client);
    expect(first.text).toContain('function="audit_log"');
    expect(after.text).not.toContain('audit_log');
    expect(after.set.get('couchbase_eventing_function_status', { ...FN('cleanup_sessions', 'orders', '_default'), status: 'undeployed' })).toBe(1);
  });

  it('a 403 fails the poll naming the missing permission', async () => {
    const r = await collect(eventingCollector, fakeClient({ [NS]: WITH_EVENTING, [STATUS]: { status: 403, body: { message: 'Forbidden. User needs the following permissions', permissions: ['cluster.eventing.functions!manage'] } } }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_FORBIDDEN');
    expect(String((r.error as Error).message)).toContain('cluster.eventing.functions!manage');
  });

  it('fails the poll on an HTTP error or bad JSON', async () => {
    for (const answer of [{ status: 500, text: 'x' }, { fail: 'invalid_json' as const }, { apps: 'nope' }]) {
      const r = await collect(eventingCollector, fakeClient({ [NS]: WITH_EVENTING, [STATUS]: answer }));
      expect(r.ok).toBe(false);
      expect(r.set.size).toBe(0);
    }
  });

  it('costs no request and no error where no node runs the Eventing service', async () => {
    const client = fakeClient({ [NS]: { nodesExt: [{ services: { mgmt: 8091, kv: 11210, indexHttp: 9102 }, thisNode: true }] }, [STATUS]: V76 });
    const r = await collect(eventingCollector, client);
    expect(r.ok).toBe(true);
    expect(r.notApplicable).toBe('no eventing service');
    expect(client.calls.map((c) => c.route)).toEqual([NS]);
  });
});
