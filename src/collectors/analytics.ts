/**
 * Collector `analytics`: the Analytics service, per analytics node (label `node`).
 *
 * 7.0+: the range API's cbas_* metrics of the analytics nodes, in the shared service request
 * (src/stats/service-range.ts); before 7.0 (and with `stats_source: envelope`): each analytics node's `@cbas`
 * section, GET /pools/default/buckets/@cbas/nodes/<host:port>/stats. Heap, disk, threads and load are levels; garbage
 * collections and I/O are per second since the previous poll. The legacy names and their native metrics:
 * ns_server@6.6.5:src/service_cbas.erl (get_service_gauges, get_service_counters) and ns_server@7.6.2:
 * src/stat_names_mappings.erl (the `@cbas` clauses).
 *
 * A cluster where no node runs the Analytics service (`cbas` in /pools/default's `services`) is not applicable: no
 * request, no error.
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef } from '../metrics/family.js';
import { addServiceFamilies } from '../stats/service-families.js';
import type { ServiceFamily } from '../stats/service-families.js';
import { declareServiceStats, serviceValues } from '../stats/service-values.js';
import { nodeLabels } from './query.js';
import type { Collector } from './types.js';

const C = 'analytics';
const SRC = 'Source: cbas_* of the range API (7.0+), the @cbas section per node (before 7.0)';

export const ANALYTICS_STATS = declareServiceStats({
  id: 'analytics',
  collector: 'analytics',
  service: 'cbas',
  itemLabels: [],
  perNode: true,
  rows: [
    { stat: 'cbas_heap_used', kind: 'level', native: 'cbas_heap_memory_used_bytes' },
    { stat: 'cbas_disk_used', kind: 'level', native: 'cbas_disk_used_bytes_total' },
    { stat: 'cbas_thread_count', kind: 'level', native: 'cbas_thread_count' },
    { stat: 'cbas_system_load_average', kind: 'level', native: 'cbas_system_load_average' },
    { stat: 'cbas_gc_count', kind: 'rate', native: 'cbas_gc_count_total' },
    // Milliseconds of collection per second → seconds per second.
    { stat: 'cbas_gc_time', kind: 'rate', native: 'cbas_gc_time_milliseconds_total', scale: 0.001 },
    { stat: 'cbas_io_reads', kind: 'rate', native: 'cbas_io_reads_total' },
    { stat: 'cbas_io_writes', kind: 'rate', native: 'cbas_io_writes_total' },
  ],
  envelope: { sections: ['cbas'] },
});

const g = (name: string, help: string, unit: string): FamilyDef => defineFamily(C, name, 'gauge', `${help}. ${SRC}.`, ['node'], unit);

export const F = {
  heap: g('couchbase_analytics_heap_used_bytes', 'JVM heap used by the analytics service on the node, bytes', 'bytes'),
  disk: g('couchbase_analytics_disk_used_bytes', 'Disk used by the analytics service on the node, bytes', 'bytes'),
  threads: g('couchbase_analytics_threads', 'Threads of the analytics service on the node', 'count'),
  load: g('couchbase_analytics_system_load_average', 'System load average the analytics service reports for the node', ''),
  gc: g('couchbase_analytics_gc_per_second', 'Garbage collections per second since the previous poll', 'per_second'),
  gcTime: g('couchbase_analytics_gc_seconds_per_second', 'Seconds spent in garbage collection per second since the previous poll', 'ratio'),
  reads: g('couchbase_analytics_io_reads_per_second', 'Disk reads per second since the previous poll', 'per_second'),
  writes: g('couchbase_analytics_io_writes_per_second', 'Disk writes per second since the previous poll', 'per_second'),
} as const satisfies Record<string, FamilyDef>;

export const ANALYTICS_FAMILIES: readonly ServiceFamily[] = [
  { def: F.heap, stat: 'cbas_heap_used' },
  { def: F.disk, stat: 'cbas_disk_used' },
  { def: F.threads, stat: 'cbas_thread_count' },
  { def: F.load, stat: 'cbas_system_load_average' },
  { def: F.gc, stat: 'cbas_gc_count' },
  { def: F.gcTime, stat: 'cbas_gc_time' },
  { def: F.reads, stat: 'cbas_io_reads' },
  { def: F.writes, stat: 'cbas_io_writes' },
];

export const analyticsCollector: Collector<'analytics'> = {
  name: 'analytics',
  defaultInterval: 30_000,
  families: Object.values(F),
  role: 'Read-Only Admin (ro_admin), or any role that may read the statistics of at least one bucket',
  description: 'Analytics service, per analytics node: heap and disk used, threads, system load, garbage collections and their time per second, disk reads and writes per second.',
  async collect(ctx) {
    const values = await serviceValues(ctx, ANALYTICS_STATS);
    if (values !== undefined) addServiceFamilies(ctx.out, values, ANALYTICS_FAMILIES, nodeLabels);
  },
};
