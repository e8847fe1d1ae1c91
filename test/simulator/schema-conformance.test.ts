/**
 * The simulator answers in the shapes of real Couchbase: for each endpoint it serves, its answer must parse
 * with the SAME zod schema the collectors use, and so must the real captured payloads of that endpoint.
 *
 * Table-driven: one row per route. Areas add their rows to ROWS (and take their routes out of PENDING).
 * A route the simulator serves that is in neither list fails the last test, so a new endpoint cannot ship
 * without its conformance row.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { bucketEntrySchema, bucketListSchema, statsEnvelopeSchema } from '../../src/couchbase/buckets.js';
import { indexStatusSchema } from '../../src/couchbase/indexStatus.js';
import { nodeServicesSchema } from '../../src/couchbase/nodeServices.js';
import { poolsDefaultSchema, serverGroupsSchema } from '../../src/couchbase/pools.js';
import { tasksSchema } from '../../src/couchbase/tasks.js';
import { remoteClusterListSchema, xdcrStatEnvelopeSchema } from '../../src/couchbase/xdcr.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { simRemoteUuid } from '../../src/simulator/modules/xdcr.js';
import { FIXTURES } from '../helpers/collect.js';

interface Row {
  /** The simulator's route template (fastify syntax). */
  readonly route: string;
  /** A concrete path to request (with the query string, if any). */
  readonly path: string;
  readonly schema: z.ZodType;
  /** Fixture folder under test/fixtures/couchbase; every valid-JSON file in it is parsed (minus `exclude`). */
  readonly fixtures: { readonly dir: string; readonly exclude?: RegExp };
}

const ROWS: Row[] = [
  { route: '/pools/default', path: '/pools/default', schema: poolsDefaultSchema, fixtures: { dir: 'pools-default' } },
  { route: '/pools/default/nodeServices', path: '/pools/default/nodeServices', schema: nodeServicesSchema, fixtures: { dir: 'pools-default-nodeServices' } },
  { route: '/pools/default/serverGroups', path: '/pools/default/serverGroups', schema: serverGroupsSchema, fixtures: { dir: 'pools-default-serverGroups' } },
  // Files named *element* hold one task object, not the list.
  { route: '/pools/default/tasks', path: '/pools/default/tasks', schema: tasksSchema, fixtures: { dir: 'pools-default-tasks', exclude: /element/ } },
  { route: '/pools/default/buckets', path: '/pools/default/buckets', schema: bucketListSchema, fixtures: { dir: 'pools-default-buckets' } },
  { route: '/pools/default/buckets/:bucket', path: '/pools/default/buckets/travel-sample', schema: bucketEntrySchema, fixtures: { dir: 'pools-default-buckets-name' } },
  { route: '/pools/default/buckets/:bucket/stats', path: '/pools/default/buckets/travel-sample/stats?zoom=minute', schema: statsEnvelopeSchema, fixtures: { dir: 'bucket-stats' } },
  {
    route: '/pools/default/buckets/:bucket/nodes/:node/stats',
    path: '/pools/default/buckets/sessions_%25cache/nodes/cb2.cbsim.local%3A8091/stats?zoom=minute&haveTStamp=0',
    schema: statsEnvelopeSchema,
    fixtures: { dir: 'bucket-node-stats' },
  },
  { route: '/pools/default/remoteClusters', path: '/pools/default/remoteClusters', schema: remoteClusterListSchema, fixtures: { dir: 'pools-default-remoteClusters' } },
  {
    // One XDCR stat of replication #0 (travel-sample → dr-east/travel-sample), its endpoint one %2F-encoded segment.
    route: '/pools/default/buckets/:bucket/stats/*',
    path: `/pools/default/buckets/travel-sample/stats/${encodeURIComponent(`replications/${simRemoteUuid('dr-east')}/travel-sample/travel-sample/changes_left`)}?zoom=minute`,
    schema: xdcrStatEnvelopeSchema,
    fixtures: { dir: 'xdcr-replication-stat' },
  },
  { route: '/indexStatus', path: '/indexStatus', schema: indexStatusSchema, fixtures: { dir: 'indexStatus' } },
];

/** Routes served without a row yet: no collector reads them, or their area has not added its row. */
const PENDING = new Set<string>([
  '/pools', // read by no collector
  '/pools/default/buckets/:bucket/nodes', // read by no collector (bucket_stats takes nodes from the bucket list)
  '/pools/default/trustedCAs',
  '/pools/default/certificate',
  '/pools/default/certificate/node/:node',
  '/pools/default/buckets/:bucket/scopes',
  '/settings/security',
  '/settings/security/allowNonLocalCACertUpload',
  '/settings/security/:service',
  '/settings/ldap',
  '/settings/autoFailover',
  '/internalSettings',
  '/api/query',
  '/api/query/index/:indexName',
  '/api/index', // search_index before 7.0 reads sourceName only (a loose record); test/collectors/search-index.test.ts
  '/api/v1/cluster/self',
  '/api/v1/cluster/self/repository/active/:repo/taskHistory',
  '/api/v1/cluster/self/repository/:state',
  '/settings/replications/:id', // read by no collector (its pauseRequested is in the tasks list too)
  // 7.0+ statistics (issue 23): shapes checked by test/simulator/stats-range.test.ts against the docs examples;
  // a row comes with the range-API source's schema.
  '/pools/default/stats/range/*',
  '/metrics',
  '/_node/:node/metrics',
  '/prometheus_sd_config',
  // Served only where a node runs eventing (not in these scenarios' default cluster); its shapes are checked by
  // test/simulator/index-eventing.test.ts and the eventing collector's tests.
  '/_p/event/api/v1/status',
]);

const NOT_JSON = /\.(elided|truncated|fragment|wrapped|invalid)\.json$/;

function fixtureFiles(dir: string, exclude?: RegExp): string[] {
  return readdirSync(join(FIXTURES, dir))
    .filter((f) => f.endsWith('.json') && !NOT_JSON.test(f) && !(exclude?.test(f) ?? false))
    .sort();
}

function issues(res: { success: boolean; error?: z.ZodError }): string {
  return res.success ? '' : (res.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

/** GET routes of a fastify app, from its route tree (full paths, one per line with methods). */
function servedGetRoutes(tree: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!m) continue;
    const depth = (m[1] ?? '').length / 4;
    stack.length = depth;
    // find-my-way prints the wildcard of `/x/*` as a `*` child of `/x`: put its slash back.
    const parent = stack[depth - 1] ?? '';
    const seg = m[2] === '*' && !parent.endsWith('/') ? '/*' : (m[2] ?? '');
    const full = parent + seg;
    stack[depth] = full;
    if ((m[3] ?? '').split(', ').includes('GET')) out.push(full);
  }
  return out;
}

describe.each(ROWS)('$route', (row) => {
  it('every real fixture parses with the collectors\' schema', () => {
    const files = fixtureFiles(row.fixtures.dir, row.fixtures.exclude);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const body: unknown = JSON.parse(readFileSync(join(FIXTURES, row.fixtures.dir, f), 'utf8'));
      const res = row.schema.safeParse(body);
      expect(res.success, `${row.fixtures.dir}/${f}: ${issues(res)}`).toBe(true);
    }
  });
});

describe.each(['default', 'demo', 'incident'])('the simulator in scenario %s', (scenario) => {
  let sim: Simulator;
  let url: string;
  beforeAll(async () => {
    sim = createSimulator({ scenario, buckets: 5, statSet: 'full' });
    url = await sim.listen();
  });
  afterAll(async () => {
    await sim.close();
  });

  it.each(ROWS)('answers $route in a shape the collectors\' schema accepts', async (row) => {
    expect(sim.app.hasRoute({ method: 'GET', url: row.route }), `no route ${row.route}`).toBe(true);
    const res = await fetch(`${url}${row.path}`, {
      headers: { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type') ?? '').toMatch(/application\/json/);
    const parsed = row.schema.safeParse(await res.json());
    expect(parsed.success, issues(parsed)).toBe(true);
  });
});

describe('coverage', () => {
  it('every GET route of the simulator has a conformance row (or is listed as pending)', async () => {
    const sim = createSimulator({});
    await sim.app.ready();
    const served = servedGetRoutes(sim.app.printRoutes({ commonPrefix: false })).filter((r) => !r.startsWith('/_sim/'));
    await sim.close();
    expect(served).toContain('/pools/default/buckets/:bucket/stats');
    const covered = new Set(ROWS.map((r) => r.route));
    expect(served.filter((r) => !covered.has(r) && !PENDING.has(r))).toEqual([]);
  });
});
