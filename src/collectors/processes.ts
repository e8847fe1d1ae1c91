/**
 * Collector `processes`: Couchbase's processes and disks per node, 7.0+ only.
 *
 * From the range API (in the shared service request, src/stats/service-range.ts), every active node: per process
 * (`sysproc_*{proc}`: memcached, indexer, projector, cbq-engine, goxdcr, cbft, eventing-producer, the analytics JVM,
 * ns_server… as the node reports them) its resident memory and CPU use, and on 7.6+ per mount (`sys_disk_usage_ratio
 * {disk}`) the share of the disk used (absent on 7.0–7.2, which do not serve it). ns_server@7.6.2:
 * src/ns_server_stats.erl report_system_stats; units from ns_server@7.6.2:etc/metrics_metadata.json (resident memory
 * in bytes, CPU in percent, disk usage a ratio).
 *
 * Before 7.0 per-process statistics are not served over REST (the `@system-processes` section is no route:
 * ns_server@6.6.5:src/menelaus_stats.erl section_bucket takes it for a bucket name): not applicable, with that reason,
 * and so with `stats_source: envelope`.
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef } from '../metrics/family.js';
import { addServiceFamilies } from '../stats/service-families.js';
import type { ServiceFamily } from '../stats/service-families.js';
import { declareServiceStats, serviceValues } from '../stats/service-values.js';
import type { Collector } from './types.js';

const C = 'processes';
export const NO_PROCESS_STATS = 'per-process statistics are not served over REST before 7.0';

export const PROCESS_STATS = declareServiceStats({
  id: 'processes',
  collector: 'processes',
  service: '*',
  itemLabels: ['proc'],
  perNode: true,
  // Every node runs Couchbase processes.
  everyNode: true,
  rows: [
    { stat: 'mem_resident', kind: 'level', native: 'sysproc_mem_resident', legacy: null },
    { stat: 'cpu_utilization', kind: 'level', native: 'sysproc_cpu_utilization', legacy: null, scale: 0.01 },
  ],
  noEnvelope: NO_PROCESS_STATS,
});

export const DISK_STATS = declareServiceStats({
  id: 'disks',
  collector: 'processes',
  service: '*',
  itemLabels: ['disk'],
  perNode: true,
  // Where one node reports its disks (7.6+), each does.
  everyNode: true,
  rows: [{ stat: 'disk_usage_ratio', kind: 'level', native: 'sys_disk_usage_ratio', legacy: null }],
  noEnvelope: NO_PROCESS_STATS,
});

const SRC = 'Source: the range API (7.0+); not served before 7.0';

export const F = {
  resident: defineFamily(C, 'couchbase_process_resident_memory_bytes', 'gauge', `Resident memory of the Couchbase process on the node, bytes (sysproc_mem_resident). ${SRC}.`, ['node', 'process'], 'bytes'),
  cpu: defineFamily(C, 'couchbase_process_cpu_utilization_ratio', 'gauge', `CPU use of the Couchbase process on the node, as a ratio (sysproc_cpu_utilization, Couchbase's percent, ÷ 100). ${SRC}.`, ['node', 'process'], 'ratio'),
  disk: defineFamily(C, 'couchbase_node_disk_usage_ratio', 'gauge', `Used share of the disk mounted at \`disk\` on the node, 0–1 (sys_disk_usage_ratio). Source: the range API; served by 7.6+ only, absent on 7.0–7.2 and before 7.0.`, ['node', 'disk'], 'ratio'),
} as const satisfies Record<string, FamilyDef>;

const PROCESS_FAMILIES: readonly ServiceFamily[] = [
  { def: F.resident, stat: 'mem_resident' },
  { def: F.cpu, stat: 'cpu_utilization' },
];
const DISK_FAMILIES: readonly ServiceFamily[] = [{ def: F.disk, stat: 'disk_usage_ratio' }];

export const processesCollector: Collector<'processes'> = {
  name: 'processes',
  defaultInterval: 30_000,
  families: Object.values(F),
  role: 'Read-Only Admin (ro_admin), or any role that may read the statistics of at least one bucket',
  description: 'Couchbase processes per node (Couchbase 7.0+): resident memory and CPU per process; on 7.6+ the used share of each disk. Not served over REST before 7.0: not applicable there.',
  async collect(ctx) {
    const procs = await serviceValues(ctx, PROCESS_STATS);
    if (procs === undefined) return;
    addServiceFamilies(ctx.out, procs, PROCESS_FAMILIES, ([proc], node) => ({ node, process: proc ?? '' }));
    const disks = await serviceValues(ctx, DISK_STATS);
    if (disks !== undefined) addServiceFamilies(ctx.out, disks, DISK_FAMILIES, ([disk], node) => ({ node, disk: disk ?? '' }));
  },
};
