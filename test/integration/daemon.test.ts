/**
 * The real daemon against the simulator: the full /metrics passes `promtool check metrics`, every registered
 * collector succeeds on the default scenario, faults fail only their collector, and no secret leaks.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectorList } from '../../src/collectors/index.js';
import { startHarness } from '../helpers/daemon.js';
import type { Harness } from '../helpers/daemon.js';
import { requireBinary } from '../helpers/tools.js';

const promtool = requireBinary('promtool');
const PASSWORD = 'Sup3r-Secret-cb-pass!';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sim: { users: { admin: { username: 'Administrator', password: PASSWORD } } } });
  await h.daemon.ready();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('daemon against the simulator', () => {
  it('is ready and every collector succeeded on the default scenario', async () => {
    expect((await fetch(`${h.daemon.url}/-/ready`)).status).toBe(200);
    const failed = h.daemon.store.statusList().filter((s) => s.ok !== true);
    expect(failed.map((s) => `${s.collector}: ${s.lastError}`)).toEqual([]);
    const text = await h.metrics();
    for (const c of collectorList()) {
      expect(text).toContain(`cbwatch_collector_success{couchbase_cluster="sim",collector="${c.name}"} 1`);
    }
    expect(text).toContain('couchbase_up{couchbase_cluster="sim"} 1');
  });

  it.skipIf(!promtool)('serves exposition that promtool check metrics accepts', async () => {
    const text = await h.metrics();
    let out = '';
    try {
      out = execFileSync(promtool as string, ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
      throw new Error(`promtool check metrics failed:\n${out}`);
    }
    expect(out.trim()).toBe('');
  });

  it('never shows the Couchbase password in metrics, logs or the landing page', async () => {
    const page = await (await fetch(`${h.daemon.url}/`)).text();
    const all = [await h.metrics(), page, h.logs.join('')].join('\n');
    expect(all).not.toContain(PASSWORD);
    expect(all).not.toContain(Buffer.from(`Administrator:${PASSWORD}`).toString('base64'));
  });

  it('a fault on one endpoint fails only its collector, and the exporter keeps serving', async () => {
    h.daemon.store.statusList();
    h.sim.ctx.faults.add({ match: '/settings/autoFailover', kind: 'status', status: 500 });
    try {
      await h.daemon.scheduler.pollAllOnce();
      const st = h.daemon.store.statusList();
      const failed = st.filter((s) => s.ok === false).map((s) => s.collector);
      if (collectorList().some((c) => c.name === 'autofailover')) expect(failed).toEqual(['autofailover']);
      expect((await fetch(`${h.daemon.url}/metrics`)).status).toBe(200);
    } finally {
      h.sim.ctx.faults.clear();
    }
    // A fault on one item (server groups, beside the node list) fails nothing: it is counted.
    h.sim.ctx.faults.add({ match: '/pools/default/serverGroups', kind: 'status', status: 500 });
    try {
      await h.daemon.scheduler.pollAllOnce();
      expect(h.daemon.store.statusList().filter((s) => s.ok === false)).toEqual([]);
      const text = await (await fetch(`${h.daemon.url}/metrics`)).text();
      if (collectorList().some((c) => c.name === 'nodes')) expect(text).toMatch(/^cbwatch_collector_item_errors_total\{[^}]*collector="nodes"[^}]*reason="http_5xx"[^}]*\} [1-9]/m);
    } finally {
      h.sim.ctx.faults.clear();
    }
    await h.daemon.scheduler.pollAllOnce();
    expect(h.daemon.store.statusList().every((s) => s.ok)).toBe(true);
  });
});
