import { afterEach, describe, expect, it } from 'vitest';
import { createSimulator, FAULT_KINDS } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';

const auth = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('simulator control endpoints', () => {
  it('lists the area routes (not its own /_sim/ ones) and every fault kind', async () => {
    sim = createSimulator();
    const base = await sim.listen(0);
    const body = (await (await fetch(`${base}/_sim/routes`)).json()) as { routes: Array<{ method: string; url: string }>; faultKinds: string[] };
    expect(body.faultKinds).toEqual([...FAULT_KINDS]);
    const urls = body.routes.filter((r) => r.method === 'GET').map((r) => r.url);
    expect(urls).toContain('/pools/default/buckets/:bucket/stats');
    expect(urls).toContain('/settings/ldap');
    expect(urls.some((u) => u.startsWith('/_sim/'))).toBe(false);
    expect(body.routes.map(({ method, url }) => ({ method, url }))).toEqual(sim.routes);
    await fetch(`${base}/pools/default/buckets`, { headers: auth });
    const after = (await (await fetch(`${base}/_sim/routes`)).json()) as { routes: Array<{ url: string; hits: number }> };
    expect(after.routes.find((r) => r.url === '/pools/default/buckets')?.hits).toBe(1);
    expect(after.routes.find((r) => r.url === '/pools/default/tasks')?.hits).toBe(0);
  });

  it('slow_body sends the real body a few bytes at a time, and counts its hits', async () => {
    sim = createSimulator();
    const base = await sim.listen(0);
    await fetch(`${base}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: '/settings/autoFailover', kind: 'slow_body', bytesPerSecond: 2000 }) });
    const t0 = Date.now();
    const r = await fetch(`${base}/settings/autoFailover`, { headers: auth });
    const text = await r.text();
    expect(r.status).toBe(200);
    expect(JSON.parse(text)).toHaveProperty('enabled');
    // The fixture is a few hundred bytes: at 2000 B/s in 200-byte steps every 100 ms it takes > 100 ms.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
    const f = (await (await fetch(`${base}/_sim/faults`)).json()) as { rules: Array<{ hits: number }> };
    expect(f.rules[0]?.hits).toBe(1);
  });

  it('oversize repeats the given element up to about the given size', async () => {
    sim = createSimulator();
    const base = await sim.listen(0);
    await fetch(`${base}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: '/pools/default/tasks', kind: 'oversize', bytes: 3000, fill: '[]' }) });
    const text = await (await fetch(`${base}/pools/default/tasks`, { headers: auth })).text();
    const parsed = JSON.parse(text) as unknown[];
    expect(parsed.length).toBe(1001);
    expect(parsed[0]).toEqual([]);
  });

  it('statChurnPerAnswer adds that many never-seen stat names to each stats answer', async () => {
    sim = createSimulator();
    const base = await sim.listen(0);
    await fetch(`${base}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ statChurnPerAnswer: 3 }) });
    const names = async (): Promise<string[]> => {
      const j = (await (await fetch(`${base}/pools/default/buckets/travel-sample/stats`, { headers: auth })).json()) as { op: { samples: Record<string, unknown> } };
      return Object.keys(j.op.samples).filter((k) => k.startsWith('churn_'));
    };
    expect(await names()).toEqual(['churn_0', 'churn_1', 'churn_2']);
    expect(await names()).toEqual(['churn_3', 'churn_4', 'churn_5']);
  });
});
