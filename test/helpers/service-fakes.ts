/**
 * Fakes of the cluster manager for the service collectors' tests: /pools/default with each node's services, the
 * bucket list that carries the compatibility version, the range API answering regex queries from a table of
 * points, and the legacy per-node service sections answering envelopes of constant per-second samples.
 *
 * Shapes (facts, as read): a range query's answer `{data: [{metric: {name, nodes: [host], …}, values: [[t, "v"]]}],
 * errors: []}` (ns_server@7.6.2:src/menelaus_web_stats.erl); a `=~` name matcher is a Prometheus regex, anchored on
 * both ends; a legacy section's envelope `{op: {samples: {timestamp: […], <stat>: […]}, lastTStamp}}` at zoom=minute
 * holds one sample a second (ns_server@6.6.5:src/menelaus_stats.erl).
 */
import type { RequestOptions } from '../../src/couchbase/client.js';
import type { FakeRoute } from './collect.js';

/** Newest instant of every answer, epoch s (a multiple of the 10 s step). */
export const T = 1_700_000_000;
/** The poll's clock: 5 s after T. */
export const NOW = T * 1000 + 5_000;

export const compat = (major: number, minor: number): number => major * 0x10000 + minor;

export interface FakeNode {
  readonly host: string;
  readonly services: readonly string[];
}

/** /pools/default and the bucket list (one bucket on the data nodes, with the compatibility version). */
export function clusterRoutes(nodes: readonly FakeNode[], clusterCompat: number, version: string): Record<string, FakeRoute> {
  const data = nodes.filter((n) => n.services.includes('kv'));
  return {
    '/pools/default': { nodes: nodes.map((n) => ({ hostname: n.host, clusterMembership: 'active', services: [...n.services], version, clusterCompatibility: clusterCompat })) },
    '/pools/default/buckets': [{ name: 'travel', nodes: data.map((n) => ({ hostname: n.host, clusterCompatibility: clusterCompat, version })) }],
  };
}

/** metric → node → points, oldest first: [seconds before T, value], with extra labels per series. */
export type RangeTable = Record<string, Record<string, ReadonlyArray<{ readonly labels?: Record<string, string>; readonly points: ReadonlyArray<readonly [number, number]> }>>>;

export interface RangeQuery {
  readonly metric: ReadonlyArray<{ readonly label: string; readonly value: string; readonly operator?: string }>;
  readonly nodes?: readonly string[];
}

/** The range API over `table`: a `=~` name matcher selects the table's metrics, `nodes` the nodes. Records every POST. */
export function rangeRoute(table: RangeTable, posts: RangeQuery[][] = []): FakeRoute {
  return (_p: unknown, o: RequestOptions) => {
    const qs = o.json as RangeQuery[];
    posts.push(qs);
    return qs.map((q) => {
      const m = q.metric.find((x) => x.label === 'name');
      const re = m?.operator === '=~' ? new RegExp(`^(?:${m.value})$`) : undefined;
      const data: unknown[] = [];
      for (const [metric, byNode] of Object.entries(table)) {
        if (re === undefined ? metric !== m?.value : !re.test(metric)) continue;
        for (const [node, series] of Object.entries(byNode)) {
          if (q.nodes !== undefined && !q.nodes.includes(node)) continue;
          for (const s of series) data.push({ metric: { name: metric, ...(s.labels ?? {}), nodes: [node] }, values: s.points.map(([dt, v]) => [T - dt, String(v)]) });
        }
      }
      return { data, errors: [] };
    });
  };
}

/** An envelope of 60 one-second samples ending at T, each stat's samples all equal to its value. */
export function constantEnvelope(values: Readonly<Record<string, number>>, hostname?: string): unknown {
  const timestamp = Array.from({ length: 60 }, (_, i) => (T - 59 + i) * 1000);
  const samples: Record<string, number[]> = { timestamp };
  for (const [k, v] of Object.entries(values)) samples[k] = timestamp.map(() => v);
  return { op: { samples, samplesCount: 60, isPersistent: false, lastTStamp: T * 1000, interval: 1000 }, ...(hostname ? { hostname } : {}) };
}

/** The per-node legacy section route answering `bySectionNode[section][node]`; a node without one answers 404. */
export function sectionRoute(bySectionNode: Record<string, Record<string, unknown>>, asked: string[] = []): FakeRoute {
  return (p: Record<string, string>) => {
    asked.push(`@${p.section} ${p.node}`);
    const env = bySectionNode[p.section as string]?.[p.node as string];
    return env === undefined ? { status: 404, text: 'Not found.' } : env;
  };
}

export const SECTION_NODE_ROUTE = '/pools/default/buckets/@{section}/nodes/{node}/stats';
export const RANGE_ROUTE = '/pools/default/stats/range';
