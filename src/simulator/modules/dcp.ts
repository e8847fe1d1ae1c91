/**
 * Which DCP connection types a bucket has, for the statistics kv_engine keeps per type.
 *
 * kv_engine aggregates its DCP connection statistics over the connections that exist when it is asked
 * (engines/ep/src/ep_engine.cc, doConnAggStats: a ConnAggStatBuilder visits every connection, and a type's
 * counter is made only when a connection of that type is found; the type is the part of the connection's name
 * after `eq_dcpq:`, up to the next `:`). So a type without connections has no kv_dcp_*{connection_type} series at
 * all, not a series of zeros; the `:total` aggregate goes to cbstats only, never to Prometheus. On 7.0+ ns_server
 * builds a bucket's stats envelope from the series its Prometheus returns (stats_reader.erl), so such a type has
 * no ep_dcp_<type>_* key either. Before 7.0 the envelope came from ns_server's own collector and the simulator keeps
 * serving every type there.
 *
 * The simulated cluster's connections: `replica` while the bucket keeps replicas on two data nodes or more;
 * `xdcr` while it is the source of a replication that is not paused (a paused pipeline closes its streams); `2i` (the indexer's projector streams) while a node runs the index
 * service, every bucket taken to have an index; `fts` while a node runs the search service. It has no design
 * documents, eventing functions, analytics links or other DCP clients, so no `views`, `eventing`, `cbas` or
 * `other` connections. Knob `dcpConnectionTypes`: the legacy names every bucket has instead (any of `replica`,
 * `xdcr`, `2i`, `fts`, `eventing`, `cbas`, `views`, `other`), or `'all'`.
 */
import type { SimBucket, SimContext } from '../types.js';
import { bucketServers } from './cluster.js';
import { xdcrSimReplications } from './xdcr.js';

/** ns_server's legacy type names (ep_dcp_<legacy>_*), in its order. */
export const DCP_LEGACY_TYPES = ['replica', 'xdcr', 'views', '2i', 'fts', 'cbas', 'eventing', 'other'] as const;
export type DcpLegacyType = (typeof DCP_LEGACY_TYPES)[number];

/** The legacy types of the DCP connections `bucket` has now. */
export function dcpTypesOf(ctx: SimContext, bucket: SimBucket): ReadonlySet<DcpLegacyType> {
  const knob = ctx.options.knobs.dcpConnectionTypes as readonly DcpLegacyType[] | 'all' | undefined;
  if (knob === 'all') return new Set(DCP_LEGACY_TYPES);
  if (knob !== undefined) return new Set(knob);
  const out = new Set<DcpLegacyType>();
  if (bucket.replicaNumber > 0 && bucketServers(ctx).length >= 2) out.add('replica');
  if (xdcrSimReplications(ctx).some((r) => r.source === bucket.name && !r.paused)) out.add('xdcr');
  if (ctx.nodes.some((n) => n.services.includes('index'))) out.add('2i');
  if (ctx.nodes.some((n) => n.services.includes('fts'))) out.add('fts');
  return out;
}

/**
 * For a 7.0+ envelope: whether the legacy stat `name` belongs to a DCP type the bucket has no connection of (the
 * stat is then absent). `ep_dcp_views+indexes_*` is not decided here: it is the sum of the types present.
 */
export function dcpStatAbsent(name: string, present: ReadonlySet<DcpLegacyType>): boolean {
  if (!name.startsWith('ep_dcp_') || name.startsWith('ep_dcp_views+indexes_')) return false;
  for (const t of DCP_LEGACY_TYPES) if (name.startsWith(`ep_dcp_${t}_`)) return !present.has(t);
  return false;
}
