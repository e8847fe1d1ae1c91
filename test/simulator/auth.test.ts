/**
 * Authentication on every simulated route, as Couchbase does it (expectations from the reference's
 * Authentication section and ns_server/cbauth, not from the simulator):
 * - missing or wrong credentials → 401 on every REST route of the cluster manager, Search and Backup;
 * - `GET /pools/default/trustedCAs` is the one route usable without credentials (reference: "Trusted-CAs GET:
 *   no authentication needed"), yet wrong credentials there are still refused: ns_server authenticates what
 *   a request presents before it looks at the route's permission (menelaus_auth:verify_rest_auth);
 * - the cluster manager's 401 has an empty body and a Basic challenge (menelaus_util:require_auth); Search and
 *   Backup answer through cbauth's SendUnauthorized (realm "Couchbase", body "Authentication Failure.").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const WRONG = { authorization: basic('Administrator', 'not-the-password') };
const UNKNOWN_USER = { authorization: basic('nobody', 'password') };

/** A concrete path for a route template (any value for its parameters: auth comes before the lookup). */
function pathOf(url: string): string {
  return url.replace(/:[A-Za-z]+/g, 'x').replace(/\*$/, 'replications%2Fx%2Fx%2Fx%2Fdocs_written');
}

describe('simulator authentication', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = createSimulator();
    await sim.app.ready();
  });
  afterAll(async () => {
    await sim.close();
  });

  it('registers the routes this test walks (cluster manager, Search and Backup)', () => {
    const urls = sim.routes.map((r) => r.url);
    expect(urls).toContain('/pools/default/trustedCAs');
    expect(urls).toContain('/pools/default');
    expect(urls).toContain('/api/query');
    expect(urls).toContain('/api/v1/cluster/self/repository/:state');
    expect(sim.routes.length).toBeGreaterThan(25);
  });

  it('answers 401 to wrong credentials on every route, trustedCAs included', async () => {
    const answered: string[] = [];
    for (const route of sim.routes) {
      for (const headers of [WRONG, UNKNOWN_USER]) {
        const res = await sim.app.inject({ method: route.method as 'GET', url: pathOf(route.url), headers });
        answered.push(`${route.method} ${route.url} ${res.statusCode}`);
      }
    }
    expect(answered.filter((a) => !a.endsWith(' 401'))).toEqual([]);
  });

  it('answers 401 without credentials on every route but the trustedCAs GET', async () => {
    const answered: string[] = [];
    for (const route of sim.routes) {
      const res = await sim.app.inject({ method: route.method as 'GET', url: pathOf(route.url) });
      answered.push(`${route.method} ${route.url} ${res.statusCode}`);
    }
    expect(answered.filter((a) => !a.endsWith(' 401'))).toEqual(['GET /pools/default/trustedCAs 200']);
  });

  it('trustedCAs without credentials is the limited view (id, subject, notBefore, notAfter, pem)', async () => {
    const res = await sim.app.inject({ method: 'GET', url: '/pools/default/trustedCAs' });
    const cas = JSON.parse(res.body) as Array<Record<string, unknown>>;
    expect(cas.length).toBeGreaterThan(0);
    for (const ca of cas) expect(Object.keys(ca).sort()).toEqual(['id', 'notAfter', 'notBefore', 'pem', 'subject']);
  });

  it('the cluster manager 401: empty body, Basic challenge of "Couchbase Server Admin / REST"', async () => {
    for (const url of ['/pools/default', '/pools/default/trustedCAs', '/settings/security']) {
      const res = await sim.app.inject({ method: 'GET', url, headers: WRONG });
      expect(res.statusCode).toBe(401);
      expect(res.body).toBe('');
      expect(res.headers['www-authenticate']).toBe('Basic realm="Couchbase Server Admin / REST"');
    }
  });

  it('the Search and Backup 401: cbauth SendUnauthorized (realm "Couchbase", "Authentication Failure.")', async () => {
    for (const url of ['/api/query', '/api/query/index/x', '/api/v1/cluster/self/repository/active']) {
      const res = await sim.app.inject({ method: 'GET', url, headers: WRONG });
      expect(res.statusCode).toBe(401);
      expect(res.body).toBe('Authentication Failure.\n');
      expect(res.headers['www-authenticate']).toBe('Basic realm="Couchbase"');
    }
  });

  it('disableWWWAuthenticate: the cluster manager 401 without the challenge (reference: Authentication, item 5)', async () => {
    const other = createSimulator();
    await other.app.ready();
    try {
      const admin = { authorization: basic('Administrator', 'password'), 'content-type': 'application/x-www-form-urlencoded' };
      const set = await other.app.inject({ method: 'POST', url: '/settings/security', headers: admin, payload: 'disableWWWAuthenticate=true' });
      expect(set.statusCode).toBe(200);
      const res = await other.app.inject({ method: 'GET', url: '/pools/default' });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('an unknown path is a 404 with or without credentials (ns_server answers reply_not_found unauthenticated)', async () => {
    expect((await sim.app.inject({ method: 'GET', url: '/no/such/route' })).statusCode).toBe(404);
    expect((await sim.app.inject({ method: 'GET', url: '/no/such/route', headers: WRONG })).statusCode).toBe(404);
  });
});
