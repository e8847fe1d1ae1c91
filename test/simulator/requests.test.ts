/** The simulator counts the requests it receives (GET /_sim/requests), for the benchmarks' requests per minute. */
import { afterAll, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';

const sim = createSimulator({});
afterAll(() => sim.close());
const AUTH = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };

describe('simulator request counting', () => {
  it('counts every request but its own control routes, by route template, with arrival times', async () => {
    const t0 = Date.now();
    await sim.app.inject({ url: '/pools/default', headers: AUTH });
    await sim.app.inject({ url: '/pools/default', headers: AUTH });
    await sim.app.inject({ url: '/pools/default' }); // a 401 is a request too
    await sim.app.inject({ url: '/_sim/state' });
    const res = await sim.app.inject({ url: `/_sim/requests?since=${t0}` });
    const body = JSON.parse(res.body) as { total: number; byRoute: Record<string, number>; times: number[] };
    expect(body.total).toBe(3);
    expect(body.byRoute['/pools/default']).toBe(3);
    expect(body.times).toHaveLength(3);
    expect(body.times.every((t) => t >= t0 && t <= Date.now())).toBe(true);
    const later = JSON.parse((await sim.app.inject({ url: `/_sim/requests?since=${Date.now() + 60_000}` })).body) as { times: number[] };
    expect(later.times).toEqual([]);
  });
});
