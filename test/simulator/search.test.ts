import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeQueriesSchema, cancelResponseSchema } from '../../src/couchbase/search.js';
import { parseGoDuration } from '../../src/couchbase/goduration.js';
import { nodeServicesSchema, serviceUrl } from '../../src/couchbase/nodeServices.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';

const AUTH = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };
const VIEWER = { authorization: `Basic ${Buffer.from('viewer:viewer-password').toString('base64')}` };

async function list(sim: Simulator, path = '/api/query') {
  const res = await sim.app.inject({ method: 'GET', url: path, headers: AUTH });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/application\/json/);
  return activeQueriesSchema.parse(res.json());
}

function entries(body: ReturnType<typeof activeQueriesSchema.parse>) {
  return Object.entries(body.filteredActiveQueries?.queryMap ?? {}).map(([key, v]) => {
    const q = v as { QueryContext: { index: string }; executionTime: string };
    return { key, index: q.QueryContext.index, seconds: parseGoDuration(q.executionTime) };
  });
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = await fn();
    if (ok(v)) return v;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error('condition never met');
}

describe('search simulator: scenarios', () => {
  const sims: Simulator[] = [];
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
  });
  const make = (scenario: string, knobs: Record<string, unknown> = {}) => {
    const s = createSimulator({ scenario, knobs });
    sims.push(s);
    return s;
  };

  it('default: a few short queries on the fts nodes, none slow, 7.1+ keys', async () => {
    const sim = make('default');
    const body = await list(sim);
    const fts = sim.ctx.nodes.filter((n) => n.services.includes('fts')).map((n) => n.uuid);
    expect(fts.length).toBeGreaterThanOrEqual(2);
    expect(body.status).toBe('ok');
    expect(body.stats).toEqual({ total: fts.length, successful: fts.length });
    const es = entries(body);
    expect(es.length).toBeLessThanOrEqual(4);
    expect(body.totalActiveQueryCount).toBe(es.length);
    for (const e of es) {
      expect(e.seconds).toBeLessThan(10);
      expect(fts).toContain(e.key.split('-')[0]);
      expect(e.key).toMatch(/^[0-9a-f]{32}-\d+$/);
    }
  });

  it('demo: exactly one slow query, older than 42 s', async () => {
    const es = entries(await list(make('demo')));
    const slow = es.filter((e) => e.seconds > 10);
    expect(slow).toHaveLength(1);
    expect(slow[0]?.index).toBe('travel-hotels');
    expect(slow[0]?.seconds).toBeGreaterThanOrEqual(42);
  });

  it('incident: 30+ active on travel-hotels and three runaways', async () => {
    const es = entries(await list(make('incident')));
    expect(es.filter((e) => e.index === 'travel-hotels').length).toBeGreaterThanOrEqual(32);
    expect(es.filter((e) => e.seconds > 10).map((e) => Math.floor(e.seconds / 5) * 5).sort((a, b) => a - b)).toEqual([15, 45, 120]);
  });

  it('queries age between polls', async () => {
    const sim = createSimulator({ scenario: 'demo', speed: 50 });
    sims.push(sim);
    const first = entries(await list(sim)).find((e) => e.seconds > 10);
    const later = await until(
      async () => entries(await list(sim)).find((e) => e.key === first?.key),
      (e) => e !== undefined && e.seconds > (first?.seconds ?? 0),
    );
    expect(later?.seconds).toBeGreaterThan(first?.seconds ?? Infinity);
  });

  it('nodeServices advertises fts on the simulator port for this node', async () => {
    const sim = make('default');
    const url = await sim.listen();
    const res = await sim.app.inject({ method: 'GET', url: '/pools/default/nodeServices', headers: AUTH });
    expect(serviceUrl(nodeServicesSchema.parse(res.json()), url, 'fts', 'ftsSSL')).toBe(url);
  });
});

describe('search simulator: filters and cancel', () => {
  let sim: Simulator;
  beforeAll(() => {
    sim = createSimulator({ scenario: 'incident' });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('honours longerThan and echoes it', async () => {
    const body = await list(sim, '/api/query?longerThan=30s');
    expect(body.filteredActiveQueries?.longerThan).toBe('30s');
    expect(entries(body).map((e) => e.index).sort()).toEqual(['travel-hotels', 'travel-hotels']);
    expect(body.totalActiveQueryCount).toBeGreaterThan(30);
    const bad = await sim.app.inject({ method: 'GET', url: '/api/query?longerThan=10', headers: AUTH });
    expect(bad.statusCode).toBe(400);
  });

  it('filters by index and refuses an unknown index', async () => {
    const body = await list(sim, '/api/query/index/travel-landmarks?longerThan=1ms');
    expect(body.filteredActiveQueries?.indexName).toBe('travel-landmarks');
    expect(entries(body).every((e) => e.index === 'travel-landmarks')).toBe(true);
    expect(entries(body).some((e) => e.seconds > 10)).toBe(true);
    const res = await sim.app.inject({ method: 'GET', url: '/api/query/index/nope', headers: AUTH });
    expect(res.statusCode).toBe(400);
  });

  it('cancels a query: {status: ok, msg}, and it leaves the list', async () => {
    const before = entries(await list(sim, '/api/query?longerThan=100s'));
    expect(before).toHaveLength(1);
    const [uuid, id] = (before[0]?.key ?? '').split('-') as [string, string];
    const res = await sim.app.inject({ method: 'POST', url: `/api/query/${id}/cancel`, headers: AUTH, payload: { uuid } });
    expect(res.statusCode).toBe(200);
    const body = cancelResponseSchema.parse(res.json());
    expect(body).toEqual({ status: 'ok', msg: `query with ID '${id}' on node '${uuid}' was aborted!` });
    const after = entries(await list(sim));
    expect(after.map((e) => e.key)).not.toContain(before[0]?.key);
    expect(entries(await list(sim, '/api/query?longerThan=100s'))).toEqual([]);
    // Cancelling it again: it no longer exists.
    const again = await sim.app.inject({ method: 'POST', url: `/api/query/${id}/cancel`, headers: AUTH, payload: { uuid } });
    expect(again.statusCode).toBe(404);
  });

  it('needs credentials and answers 403 to a limited user', async () => {
    expect((await sim.app.inject({ method: 'GET', url: '/api/query' })).statusCode).toBe(401);
    const res = await sim.app.inject({ method: 'POST', url: '/api/query/1/cancel', headers: VIEWER, payload: {} });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ permissions: ['cluster.fts!manage'] });
  });
});

describe('search simulator: 403 variants', () => {
  it('answers 403 to every cancel with the searchCancelForbidden knob', async () => {
    const sim = createSimulator({ scenario: 'demo', knobs: { searchCancelForbidden: true } });
    try {
      const slow = entries(await list(sim, '/api/query?longerThan=10s'))[0];
      const [uuid, id] = (slow?.key ?? '').split('-') as [string, string];
      const res = await sim.app.inject({ method: 'POST', url: `/api/query/${id}/cancel`, headers: AUTH, payload: { uuid } });
      expect(res.statusCode).toBe(403);
      expect(entries(await list(sim, '/api/query?longerThan=10s')).map((e) => e.key)).toEqual([slow?.key]);
    } finally {
      await sim.close();
    }
  });

  it('answers 403 through fault injection', async () => {
    const sim = createSimulator({ scenario: 'demo' });
    try {
      sim.ctx.faults.add({ match: '/api/query/:queryID/cancel', kind: 'forbidden', permissions: ['cluster.fts!manage'], times: 1 });
      const first = await sim.app.inject({ method: 'POST', url: '/api/query/1/cancel', headers: AUTH, payload: {} });
      expect(first.statusCode).toBe(403);
      const second = await sim.app.inject({ method: 'POST', url: '/api/query/1/cancel', headers: AUTH, payload: {} });
      expect(second.statusCode).toBe(404);
    } finally {
      await sim.close();
    }
  });

  it('searchRunaways sets the number of runaways in any scenario', async () => {
    const sim = createSimulator({ scenario: 'default', knobs: { searchRunaways: 4 } });
    try {
      expect(entries(await list(sim, '/api/query?longerThan=10s'))).toHaveLength(4);
    } finally {
      await sim.close();
    }
  });
});
