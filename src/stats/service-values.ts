/**
 * Service statistics (query, index, Search, eventing, analytics, processes): one call from a collector to neutral
 * values (values.ts), whichever source answers.
 *
 * API, for a service collector:
 * 1. Declare the stats at module load: `const SPEC = declareServiceStats({ id, collector, service, rows, itemLabels,
 *    perNode, envelope })` (service-table.ts). A row: `{ stat, kind: 'level' | 'rate' | 'total' | 'mean_of_two',
 *    native, legacy?, per?, scale?, nativeScale? }`; `stat` is the legacy key (after `<prefix>/<item>/` in a per-item
 *    section), and the name the values are read under.
 * 2. In collect(): `const values = await serviceValues(ctx, SPEC)`. Undefined: the service runs on no node, or the
 *    chosen source does not serve it; ctx.notApplicable has been called with the reason (no request, no error).
 * 3. Map `values.items`: item key (node-level: the node's host:port; per item: itemKey(label values), itemParts
 *    splits it) → `sets` (perNode: node → values; else ITEM_WIDE → the sum over the nodes) → stat → value in the
 *    family's unit (`undefined`: named without a value this poll; absent: not served). `values.kindOf(stat)`.
 *
 * Source choice is bucket_stats' (chooseStatsSource / statsValues, source.ts: `stats_source`, 7.0 and the 404/405
 * fallback under `auto`). The range side (service-range.ts) is one shared request a poll for every enabled service
 * collector; the envelope side (service-envelope.ts) the legacy sections, per node where the spec is.
 *
 * The nodes of a service are the active members whose /pools/default `services` list it (shared for
 * STATS_NODES_MAX_AGE_MS with the other statistics): a node without the service is asked nothing and carries none of
 * its series.
 */
import { fetchPoolsDefault } from '../couchbase/pools.js';
import type { StatsContext } from './context.js';
import { STATS_NODES_MAX_AGE_MS } from './range-nodes.js';
import { serviceEnvelopeValues } from './service-envelope.js';
import { fetchServiceRange, serviceRangeValues } from './service-range.js';
import type { ServiceContext } from './service-range.js';
import type { ServiceSpec } from './service-table.js';
import { chooseStatsSource, statsValues } from './source.js';
import type { SourceValues } from './values.js';

export { declareServiceStats, ITEM_SEP, itemKey, itemParts, prefixedRows } from './service-table.js';
export type { ServiceSpec, ServiceStatKind, ServiceStatRow } from './service-table.js';
export type { ServiceContext } from './service-range.js';

/** Per service name (`n1ql`, `index`, …; `*`: any), its active nodes' hostnames, in /pools/default order. Pure. */
export function nodesByService(nodes: readonly unknown[]): Map<string, string[]> {
  const out = new Map<string, string[]>([['*', []]]);
  for (const n of nodes) {
    if (n === null || typeof n !== 'object') continue;
    const { hostname, clusterMembership, services } = n as { hostname?: unknown; clusterMembership?: unknown; services?: unknown };
    if (typeof hostname !== 'string' || hostname === '' || (clusterMembership ?? 'active') !== 'active') continue;
    const add = (s: string): void => {
      const list = out.get(s) ?? out.set(s, []).get(s) as string[];
      if (!list.includes(hostname)) list.push(hostname);
    };
    add('*');
    if (Array.isArray(services)) for (const s of services) if (typeof s === 'string') add(s);
  }
  return out;
}

/** The active nodes that run `service` (`*`: every active node). */
export async function serviceNodes(ctx: StatsContext, service: string): Promise<readonly string[]> {
  const by = await ctx.shared.get('serviceNodes', STATS_NODES_MAX_AGE_MS, async () => nodesByService((await fetchPoolsDefault(ctx)).nodes));
  return by.get(service) ?? [];
}

/**
 * A spec's neutral values this poll (see the header). Undefined after ctx.notApplicable when the service runs on
 * no node, or when the chosen source cannot serve the spec (no envelope source before 7.0).
 */
export async function serviceValues(ctx: ServiceContext & { notApplicable?(reason: string): void }, spec: ServiceSpec): Promise<SourceValues | undefined> {
  const nodes = await serviceNodes(ctx, spec.service);
  if (nodes.length === 0) {
    ctx.notApplicable?.(`no ${spec.service} service`);
    return undefined;
  }
  const rangeOnly = (why: string): string => `the ${spec.id} statistics are served by the range API only (${why})`;
  if (spec.envelope === undefined) {
    // Before 7.0 the spec's own reason; a 7.0+ cluster read through the envelopes (stats_source) says that.
    const choice = await chooseStatsSource(ctx);
    if (choice.kind === 'envelope') {
      ctx.notApplicable?.(choice.reason.includes('before 7.0') ? (spec.noEnvelope ?? rangeOnly(choice.reason)) : rangeOnly(choice.reason));
      return undefined;
    }
  }
  let notServed: string | undefined;
  const got = await statsValues(ctx, nodes, {
    range: async (c) => serviceRangeValues(c, spec, await fetchServiceRange(ctx, spec, serviceNodes)),
    envelope: async (c, n) => {
      if (spec.envelope === undefined) {
        // The range API answered 404 or 405 (auto falls back to the envelopes).
        notServed = rangeOnly('the range API is not available on this cluster');
        return { items: new Map(), kindOf: () => 'level' };
      }
      return serviceEnvelopeValues(c, spec, n);
    },
  });
  if (notServed !== undefined) {
    ctx.notApplicable?.(notServed);
    return undefined;
  }
  return got;
}
