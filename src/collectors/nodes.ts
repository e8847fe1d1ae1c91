/**
 * Collector `nodes`: node health and membership, versions, services, server groups and system stats from
 * GET /pools/default; services, ports and alternate addresses from GET /pools/default/nodeServices; nodes per
 * server group from GET /pools/default/serverGroups (Enterprise Edition only: a 404 there is skipped).
 *
 * Node labels are `host:port` as Couchbase writes them in `hostname` (the same form the bucket stats and the
 * certificates use), so series of different collectors join on `node`.
 */
import { capNamePart, defineFamily, sanitizeName } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { fetchNodeServices, NODE_SERVICES_ROUTE, urlHost } from '../couchbase/nodeServices.js';
import type { NodeServices } from '../couchbase/nodeServices.js';
import { parseEach } from '../couchbase/source.js';
import { fetchPoolsDefault, POOLS_DEFAULT_ROUTE, poolNodeSchema, SERVER_GROUPS_ROUTE, serverGroupsSchema } from '../couchbase/pools.js';
import type { PoolNode, PoolsDefault, ServerGroups } from '../couchbase/pools.js';
import { CbwError } from '../errors.js';
import { ItemTally, numberFromNumeric, oneHot } from './helpers.js';
import type { ItemSink } from './helpers.js';
import { DynamicFamilies, dynamicFamiliesOf } from './dynamic.js';
import { CLUSTER_ALERT_KINDS, clusterAlertKind, clusterAlertMessage } from './cluster-alerts.js';
import { safeExcerpt } from '../redact.js';
import type { Collector, Skip } from './types.js';

const C = 'nodes';
const f = (name: string, type: 'gauge' | 'counter', help: string, labels: readonly string[] = [], unit = ''): FamilyDef =>
  defineFamily(C, name, type, help, labels, unit);

export const NODE_STATUSES = ['healthy', 'unhealthy', 'warmup'] as const;
export const NODE_MEMBERSHIPS = ['active', 'inactiveAdded', 'inactiveFailed'] as const;

export const F = {
  clusterAlerts: f(
    'couchbase_cluster_alerts',
    'gauge',
    `Alerts Couchbase raised and nobody has dismissed in its web console (the alerts array of /pools/default), by kind: ${CLUSTER_ALERT_KINDS.join(', ')} (other: a message of no known format). The messages are on the landing page.`,
    ['kind'],
    'count',
  ),
  status: f('couchbase_node_status', 'gauge', 'Node health as seen by the cluster manager, one-hot over healthy, unhealthy and warmup (an unknown value is exported under its own name).', ['node', 'status']),
  membership: f('couchbase_node_membership', 'gauge', 'Cluster membership of the node, one-hot over active, inactiveAdded (added, not yet rebalanced in) and inactiveFailed (failed over: a rebalance is required).', ['node', 'membership']),
  info: f('couchbase_node_info', 'gauge', 'Node version, services (comma-separated, sorted) and server group; always 1.', ['node', 'version', 'services', 'server_group'], 'info'),
  uptime: f('couchbase_node_uptime_seconds', 'gauge', 'Time since the node\'s cluster manager started.', ['node'], 'seconds'),
  cpu: f('couchbase_node_cpu_utilization_ratio', 'gauge', 'CPU utilization of the node (0-1).', ['node'], 'ratio'),
  cpuStolen: f('couchbase_node_cpu_stolen_ratio', 'gauge', 'CPU time stolen by the hypervisor (0-1).', ['node'], 'ratio'),
  cores: f('couchbase_node_cpu_cores_available', 'gauge', 'CPU cores available to the node.', ['node'], 'count'),
  memTotal: f('couchbase_node_memory_total_bytes', 'gauge', 'Physical memory of the node.', ['node'], 'bytes'),
  memFree: f('couchbase_node_memory_free_bytes', 'gauge', 'Free memory of the node.', ['node'], 'bytes'),
  memLimit: f('couchbase_node_memory_limit_bytes', 'gauge', 'Memory limit of the node (the cgroup limit in containers).', ['node'], 'bytes'),
  swapTotal: f('couchbase_node_swap_total_bytes', 'gauge', 'Swap space of the node.', ['node'], 'bytes'),
  swapUsed: f('couchbase_node_swap_used_bytes', 'gauge', 'Swap space in use on the node.', ['node'], 'bytes'),
  allocstall: f('couchbase_node_allocstall_total', 'counter', 'Times the kernel stalled an allocation to reclaim memory (allocstall).', ['node'], 'count'),
  mcdReserved: f('couchbase_node_memcached_memory_reserved_bytes', 'gauge', 'Memory reserved for the data service on the node.', ['node'], 'bytes'),
  mcdAllocated: f('couchbase_node_memcached_memory_allocated_bytes', 'gauge', 'Memory allocated to the data service on the node.', ['node'], 'bytes'),
  otherStat: f('couchbase_node_interesting_stat', 'gauge', 'A node `interestingStats` value without a known unit, by its Couchbase name.', ['node', 'stat']),

  balanced: f('couchbase_cluster_balanced', 'gauge', 'Whether the cluster manager reports the cluster as balanced (1) or needing a rebalance (0).'),
  quota: f('couchbase_cluster_memory_quota_bytes', 'gauge', 'Per-node memory quota of a service (kv, index, fts, cbas, eventing).', ['service'], 'bytes'),
  maxBuckets: f('couchbase_cluster_max_buckets', 'gauge', 'Maximum number of buckets the cluster allows.', [], 'count'),
  maxScopes: f('couchbase_cluster_max_scopes', 'gauge', 'Maximum number of scopes the cluster allows.', [], 'count'),
  maxCollections: f('couchbase_cluster_max_collections', 'gauge', 'Maximum number of collections the cluster allows.', [], 'count'),

  servicePort: f('couchbase_node_service_port', 'gauge', 'Port of each service endpoint a node offers (nodeServices; e.g. port_name="kvSSL").', ['node', 'port_name']),
  serviceNodes: f('couchbase_service_nodes', 'gauge', 'Number of nodes running a service.', ['service'], 'count'),
  altAddress: f('couchbase_node_alternate_address_info', 'gauge', 'Alternate address of a node for clients on another network; always 1.', ['node', 'network', 'hostname'], 'info'),
  altPort: f('couchbase_node_alternate_port', 'gauge', 'Port of a service endpoint at the node\'s alternate address.', ['node', 'network', 'port_name']),
  groupNodes: f('couchbase_server_group_nodes', 'gauge', 'Nodes in a server group.', ['server_group'], 'count'),
  groups: f('couchbase_server_groups', 'gauge', 'Number of server groups.', [], 'count'),

  storageTotal: f('couchbase_cluster_storage_total_bytes', 'gauge', 'Capacity summed over the nodes (storageTotals): physical memory (storage="ram") or the size of the file systems holding the data paths (storage="hdd").', ['storage'], 'bytes'),
  storageUsed: f('couchbase_cluster_storage_used_bytes', 'gauge', 'Space in use on those memories or file systems by everything, Couchbase or not, summed over the nodes (storageTotals).', ['storage'], 'bytes'),
  storageUsedByData: f('couchbase_cluster_storage_used_by_data_bytes', 'gauge', 'Space used by Couchbase data, summed over the nodes (storageTotals usedByData).', ['storage'], 'bytes'),
  storageQuotaTotal: f('couchbase_cluster_storage_quota_total_bytes', 'gauge', 'Quota summed over the nodes (storageTotals quotaTotal): for ram the data service memory quota, for hdd the file-system size.', ['storage'], 'bytes'),
  storageQuotaUsed: f('couchbase_cluster_storage_quota_used_bytes', 'gauge', 'Quota given to buckets, summed over the nodes (storageTotals quotaUsed; ram only).', ['storage'], 'bytes'),
  storageFree: f('couchbase_cluster_storage_free_bytes', 'gauge', 'Free space summed over the nodes (storageTotals free; hdd only).', ['storage'], 'bytes'),
} as const;

/**
 * Known cluster counters. Each becomes `couchbase_cluster_<name>_total`. A counter name not listed here is
 * declared on first sight (same naming) so a new server version's counters are not lost; those are missing from
 * the static catalog only, and kept in the collector's state (at most `max_dynamic_families` per poll, forgotten
 * when a poll no longer sees them: the names come from Couchbase).
 */
export const KNOWN_COUNTERS: Readonly<Record<string, string>> = {
  rebalance_start: 'Rebalances started.',
  rebalance_success: 'Rebalances that completed.',
  rebalance_fail: 'Rebalances that failed.',
  rebalance_stop: 'Rebalances stopped by an administrator.',
  failover: 'Failovers started (hard or automatic).',
  failover_complete: 'Failovers that completed.',
  failover_incomplete: 'Failovers that did not complete.',
  failover_node: 'Nodes failed over.',
  graceful_failover_start: 'Graceful failovers started.',
  graceful_failover_success: 'Graceful failovers that completed.',
  graceful_failover_fail: 'Graceful failovers that failed.',
  graceful_failover_stop: 'Graceful failovers stopped.',
};

const counterFamilies = new Map<string, FamilyDef>();
for (const [name, help] of Object.entries(KNOWN_COUNTERS)) {
  counterFamilies.set(name, f(`couchbase_cluster_${name}_total`, 'counter', `${help} Cluster-wide count since the cluster was created (the cluster manager's counters).`, [], 'count'));
}

/**
 * The family of a cluster counter: a known one, else one declared on first sight in `dynamic` (the collector's
 * registry, capped and forgotten when unused: the name comes from Couchbase). Undefined for a name with nothing
 * usable in it; 'capped' when the registry is full for this poll.
 */
export function counterFamily(name: string, dynamic: DynamicFamilies = new DynamicFamilies()): FamilyDef | undefined | 'capped' {
  // A counter name from Couchbase can be any length: cut with a hash (the metric name is a label value too).
  const key = capNamePart(sanitizeName(name).toLowerCase().replace(/^_+|_+$/g, ''));
  if (key === '') return undefined;
  const known = counterFamilies.get(key);
  if (known) return known;
  return dynamic.get(key, () => f(`couchbase_cluster_${key}_total`, 'counter', `Cluster manager counter ${key}.`, [], 'count'));
}

/** interestingStats with a known unit: name → [family, multiplier]. Other numbers go to `couchbase_node_interesting_stat`. */
const INTERESTING: Record<string, FamilyDef> = {};
const stat = (name: string, suffix: string, help: string, unit: string): void => {
  INTERESTING[name] = f(`couchbase_node_${name}${suffix}`, 'gauge', help, ['node'], unit);
};
stat('couch_docs_actual_disk_size', '_bytes', 'Disk space used by data files on the node (interestingStats).', 'bytes');
stat('couch_docs_data_size', '_bytes', 'Live data in the data files on the node (interestingStats).', 'bytes');
stat('couch_views_actual_disk_size', '_bytes', 'Disk space used by view indexes on the node (interestingStats).', 'bytes');
stat('couch_views_data_size', '_bytes', 'Live data in view indexes on the node (interestingStats).', 'bytes');
stat('couch_spatial_disk_size', '_bytes', 'Disk space used by spatial views on the node (interestingStats).', 'bytes');
stat('couch_spatial_data_size', '_bytes', 'Live data in spatial views on the node (interestingStats).', 'bytes');
stat('mem_used', '_bytes', 'Memory used by the data service on the node (interestingStats).', 'bytes');
stat('index_data_size', '_bytes', 'Data size of the indexes on the node (interestingStats).', 'bytes');
stat('index_disk_size', '_bytes', 'Disk size of the indexes on the node (interestingStats).', 'bytes');
stat('curr_items', '', 'Active items on the node (interestingStats).', 'count');
stat('curr_items_tot', '', 'Active and replica items on the node (interestingStats).', 'count');
stat('vb_replica_curr_items', '', 'Replica items on the node (interestingStats).', 'count');
stat('vb_active_num_non_resident', '', 'Active items not resident in memory on the node (interestingStats).', 'count');
stat('ops', '_per_second', 'Data operations per second on the node (interestingStats).', 'per_second');
stat('cmd_get', '_per_second', 'Get operations per second on the node (interestingStats).', 'per_second');
stat('get_hits', '_per_second', 'Get hits per second on the node (interestingStats).', 'per_second');
stat('ep_bg_fetched', '_per_second', 'Background fetches from disk per second on the node (interestingStats).', 'per_second');

const QUOTAS: ReadonlyArray<readonly [keyof PoolsDefault, string]> = [
  ['memoryQuota', 'kv'],
  ['indexMemoryQuota', 'index'],
  ['ftsMemoryQuota', 'fts'],
  ['cbasMemoryQuota', 'cbas'],
  ['eventingMemoryQuota', 'eventing'],
];

const MIB = 1024 * 1024;

// Defined once in helpers.ts; re-exported only for xdcr.ts until it imports it from there.

/**
 * GET /pools/default → samples. Pure. Each node entry is an item: one that does not parse is reported to
 * `items` as failed (or skipped when no sink is given) and only that node is missing.
 */
export function mapPoolsDefault(p: PoolsDefault, out: SampleSet, skip: Skip, items?: ItemSink, dynamic?: DynamicFamilies): void {
  out.add(F.balanced, {}, p.balanced);
  for (const [key, service] of QUOTAS) {
    const v = p[key];
    if (typeof v === 'number') out.add(F.quota, { service }, v * MIB);
  }
  out.add(F.maxBuckets, {}, p.maxBucketCount);
  out.add(F.maxScopes, {}, p.maxScopeCount);
  out.add(F.maxCollections, {}, p.maxCollectionCount);
  for (const [name, raw] of Object.entries(p.counters ?? {})) {
    const v = numberFromNumeric(raw);
    if (v === undefined) {
      skip('counter_not_a_number', name);
      continue;
    }
    const def = counterFamily(name, dynamic);
    if (def === 'capped') out.countCap('dynamic_families');
    else if (def) out.add(def, {}, v);
  }
  mapStorageTotals(p, out);
  // Entry by entry: a node that does not parse costs only itself. The first few are described, the rest counted.
  const { ok, invalid, invalidCount } = parseEach(p.nodes, poolNodeSchema, 'hostname');
  for (const bad of invalid) {
    const item = `node ${bad.name ?? '(no hostname)'}`;
    if (items) items.failed(item, new CbwError('CBW_ERR_SCHEMA', `GET ${POOLS_DEFAULT_ROUTE}: ${item}: ${bad.message}`));
    else skip('node_unparseable', bad.message);
  }
  const rest = invalidCount - invalid.length;
  if (rest > 0 && items) items.failed(`${rest} more nodes`, new CbwError('CBW_ERR_SCHEMA', `GET ${POOLS_DEFAULT_ROUTE}: ${rest} more node entries do not parse`), rest);
  else for (let i = 0; i < rest; i++) skip('node_unparseable', 'does not match');
  for (const node of ok) {
    mapNode(node, out, skip, dynamic);
    items?.ok(`node ${node.hostname}`);
  }
}

/** storageTotals field → family; a field a version does not send (or sends as null) emits nothing. */
const STORAGE_FIELDS: ReadonlyArray<readonly [string, FamilyDef]> = [
  ['total', F.storageTotal],
  ['used', F.storageUsed],
  ['usedByData', F.storageUsedByData],
  ['quotaTotal', F.storageQuotaTotal],
  ['quotaUsed', F.storageQuotaUsed],
  ['free', F.storageFree],
];

/** GET /pools/default `storageTotals` (bytes, already summed over the nodes by the cluster manager). */
function mapStorageTotals(p: PoolsDefault, out: SampleSet): void {
  for (const storage of ['ram', 'hdd'] as const) {
    const t = p.storageTotals?.[storage];
    if (!t) continue;
    for (const [field, def] of STORAGE_FIELDS) {
      const v = numberFromNumeric(t[field]);
      if (v !== undefined && v >= 0) out.add(def, { storage }, v);
    }
  }
}

function mapNode(n: PoolNode, out: SampleSet, skip: Skip, dynamic: DynamicFamilies | undefined): void {
  const node = n.hostname;
  oneHot(out, F.status, { node }, 'status', NODE_STATUSES, n.status);
  oneHot(out, F.membership, { node }, 'membership', NODE_MEMBERSHIPS, n.clusterMembership);
  out.add(F.info, { node, version: n.version ?? '', services: [...(n.services ?? [])].sort().join(','), server_group: n.serverGroup ?? '' }, 1);
  out.add(F.uptime, { node }, numberFromNumeric(n.uptime));
  const s = n.systemStats;
  if (s) {
    if (typeof s.cpu_utilization_rate === 'number') out.add(F.cpu, { node }, s.cpu_utilization_rate / 100);
    if (typeof s.cpu_stolen_rate === 'number') out.add(F.cpuStolen, { node }, s.cpu_stolen_rate / 100);
    out.add(F.cores, { node }, s.cpu_cores_available);
    out.add(F.memTotal, { node }, s.mem_total);
    out.add(F.memFree, { node }, s.mem_free);
    out.add(F.memLimit, { node }, s.mem_limit);
    out.add(F.swapTotal, { node }, s.swap_total);
    out.add(F.swapUsed, { node }, s.swap_used);
    out.add(F.allocstall, { node }, s.allocstall);
  } else {
    // A node that is down or still joining may come without systemStats: its other series stay.
    skip('node_without_system_stats', node);
  }
  if (typeof n.mcdMemoryReserved === 'number') out.add(F.mcdReserved, { node }, n.mcdMemoryReserved * MIB);
  if (typeof n.mcdMemoryAllocated === 'number') out.add(F.mcdAllocated, { node }, n.mcdMemoryAllocated * MIB);
  for (const [name, raw] of Object.entries(n.interestingStats ?? {})) {
    if (raw === null || raw === undefined) continue;
    const v = numberFromNumeric(raw);
    if (v === undefined) {
      skip('interesting_stat_not_a_number', name);
      continue;
    }
    const def = INTERESTING[name];
    if (def) {
      out.add(def, { node }, v);
      continue;
    }
    // An unknown name becomes a `stat` label value: upstream-named too, so it counts against the same cap.
    if (dynamic && dynamic.get(`interesting\u0000${name}`, () => F.otherStat) === 'capped') out.countCap('dynamic_families');
    else out.add(F.otherStat, { node, stat: name }, v);
  }
}

/** nodeServices port names that show a node runs a service (plain or TLS port). */
const SERVICE_PORTS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['kv', ['kv', 'kvSSL']],
  ['n1ql', ['n1ql', 'n1qlSSL']],
  ['index', ['indexAdmin', 'indexHttp', 'indexHttps']],
  ['fts', ['fts', 'ftsSSL']],
  ['cbas', ['cbas', 'cbasSSL']],
  ['eventing', ['eventingAdminPort', 'eventingSSL']],
  ['backup', ['backupAPI', 'backupAPIHTTPS']],
];

/** GET /pools/default/nodeServices → samples. Pure; `managementUrl` names a node that omits its hostname. */
export function mapNodeServices(ns: NodeServices, managementUrl: string, out: SampleSet): void {
  const mgmtHost = new URL(managementUrl).hostname;
  const perService = new Map<string, number>(SERVICE_PORTS.map(([s]) => [s, 0]));
  for (const n of ns.nodesExt) {
    const node = `${urlHost(n.hostname ?? mgmtHost)}:${n.services.mgmt ?? 8091}`;
    for (const [portName, port] of Object.entries(n.services)) out.add(F.servicePort, { node, port_name: portName }, port);
    for (const [service, ports] of SERVICE_PORTS) {
      if (ports.some((p) => n.services[p] !== undefined)) perService.set(service, (perService.get(service) ?? 0) + 1);
    }
    for (const [network, alt] of Object.entries(n.alternateAddresses ?? {})) {
      if (!alt || typeof alt !== 'object') continue;
      const a = alt as { hostname?: unknown; ports?: unknown };
      if (typeof a.hostname === 'string') out.add(F.altAddress, { node, network, hostname: a.hostname }, 1);
      if (a.ports && typeof a.ports === 'object') {
        for (const [portName, port] of Object.entries(a.ports as Record<string, unknown>)) {
          if (typeof port === 'number') out.add(F.altPort, { node, network, port_name: portName }, port);
        }
      }
    }
  }
  for (const [service, count] of perService) out.add(F.serviceNodes, { service }, count);
}

/** GET /pools/default/serverGroups → samples. Pure. */
/** Longest alert message shown on the landing page (ns_server's longest formats fit with their values). */
export const ALERT_TEXT_MAX = 300;

/**
 * The `alerts` array → a count per kind (every kind, 0 included, whenever the answer has the array) and, for the
 * landing page, each message through `clean` (redaction and length). Pure. An entry with no message text counts
 * as `other` and has no note.
 */
export function mapClusterAlerts(alerts: readonly unknown[] | null | undefined, out: SampleSet, clean: (text: string) => string): void {
  if (alerts === undefined || alerts === null) return;
  const counts = new Map(CLUSTER_ALERT_KINDS.map((k) => [k, 0]));
  for (const entry of alerts) {
    const message = clusterAlertMessage(entry);
    const kind = message === undefined ? 'other' : clusterAlertKind(message);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    if (message !== undefined) out.note(`Couchbase alert (${kind}): ${clean(message)}`);
  }
  for (const [kind, n] of counts) out.add(F.clusterAlerts, { kind }, n);
}

export function mapServerGroups(sg: ServerGroups, out: SampleSet): void {
  out.add(F.groups, {}, sg.groups.length);
  for (const g of sg.groups) out.add(F.groupNodes, { server_group: g.name }, g.nodes.length);
}

function isNotFound(err: unknown): boolean {
  return (err as Partial<CbwError> | null)?.code === 'CBW_ERR_NOT_FOUND';
}

export const nodesCollector: Collector<'nodes'> = {
  name: 'nodes',
  defaultInterval: 30_000,
  families: [...Object.values(F), ...Object.values(INTERESTING), ...counterFamilies.values()],
  role: 'ro_admin',
  description: 'Node health, membership, services, ports, server groups, system stats and the cluster counters.',
  async collect(ctx) {
    // /pools/default is the poll's list: its failure fails the poll. Its node entries, nodeServices and
    // serverGroups are items: one that fails costs only its own series (see ItemTally).
    const settled = <T>(p: Promise<T>): Promise<{ value: T } | { err: unknown }> => p.then((value) => ({ value }), (err: unknown) => ({ err }));
    const [pools, ns, groups] = await Promise.all([
      fetchPoolsDefault(ctx),
      settled(fetchNodeServices(ctx)),
      // Server groups are an Enterprise Edition feature; Community Edition answers 404.
      settled(ctx.client.requestJson(SERVER_GROUPS_ROUTE, {}, serverGroupsSchema, { allowStatus: [404] })),
    ]);
    const tally = new ItemTally(ctx);
    const skip: Skip = (reason, detail) => ctx.skipped(reason, detail);
    const dynamic = dynamicFamiliesOf(ctx.state, ctx.cluster.maxDynamicFamilies);
    dynamic.beginPoll();
    mapPoolsDefault(pools, ctx.out, skip, tally, dynamic);
    mapClusterAlerts(pools.alerts, ctx.out, (text) => safeExcerpt(text, undefined, ALERT_TEXT_MAX));
    if ('value' in ns) {
      // An entry of nodesExt that did not parse is an item of its own; the others are mapped.
      const bad = ns.value.invalidNodes;
      for (const e of bad?.shown ?? []) {
        const item = `${NODE_SERVICES_ROUTE} node ${e.name ?? `#${e.index}`}`;
        tally.failed(item, new CbwError('CBW_ERR_SCHEMA', `GET ${NODE_SERVICES_ROUTE}: nodesExt[${e.index}]: ${e.message}`));
      }
      const rest = (bad?.count ?? 0) - (bad?.shown.length ?? 0);
      if (rest > 0) tally.failed(`${rest} more ${NODE_SERVICES_ROUTE} nodes`, new CbwError('CBW_ERR_SCHEMA', `GET ${NODE_SERVICES_ROUTE}: ${rest} more nodesExt entries do not parse`), rest);
      mapNodeServices(ns.value, ctx.cluster.url, ctx.out);
      tally.ok();
    } else if (isNotFound(ns.err)) {
      // Not on every version.
      ctx.skipped('node_services_not_found');
    } else {
      tally.failed(NODE_SERVICES_ROUTE, ns.err);
    }
    if (!('value' in groups)) tally.failed(SERVER_GROUPS_ROUTE, groups.err);
    else if (groups.value.data) {
      mapServerGroups(groups.value.data, ctx.out);
      tally.ok();
    } else ctx.skipped('server_groups_not_found');
    tally.settle();
  },
};
