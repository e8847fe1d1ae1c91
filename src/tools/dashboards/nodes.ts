/**
 * The Nodes dashboard (`cbwatch-nodes`): per node as the cluster manager reports it, and per cluster disk
 * capacity and data service quota.
 */
import { CLUSTER_VAR } from '../grafana.js';
import type { DashboardSpec, VariableSpec } from '../grafana.js';
import { CL, CLN, HDD, RAM, DISK_FREE_RATIO, DISK_FREE_STEPS } from './shared.js';

const NODE_VAR: VariableSpec = {
  name: 'node',
  label: 'Node',
  query: 'label_values(couchbase_node_status{couchbase_cluster=~"$couchbase_cluster"}, node)',
  multi: true,
};

export const nodes: DashboardSpec = {
  uid: 'cbwatch-nodes',
  title: 'Couchbase / Nodes',
  description: 'Per node, as the cluster manager reports it (nodes collector): status and membership, services, version and server group, CPU, memory, swap, disk used by data, views and indexes, and load; and per cluster, disk capacity and the data service quota given to buckets.',
  tags: ['couchbase', 'nodes'],
  variables: [CLUSTER_VAR, NODE_VAR],
  items: [
    { row: 'Status' },
    {
      type: 'stat',
      title: 'Nodes',
      description: 'Nodes of the selected clusters, as listed by /pools/default.',
      unit: 'none',
      targets: [{ expr: `count(couchbase_node_info{${CLN}})` }],
    },
    {
      type: 'stat',
      title: 'Not healthy',
      description: 'Selected nodes whose status is not healthy (unhealthy or warming up).',
      unit: 'none',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'red', value: 1 }],
      targets: [{ expr: `sum(couchbase_node_status{${CLN}, status!="healthy"}) or vector(0)` }],
    },
    {
      type: 'stat',
      title: 'Not active',
      description: 'Selected nodes that are not active members: added and awaiting a rebalance, or failed over.',
      unit: 'none',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
      targets: [{ expr: `sum(couchbase_node_membership{${CLN}, membership!="active"}) or vector(0)` }],
    },
    {
      type: 'stat',
      title: 'Cluster balanced',
      description: 'Whether the cluster manager reports the cluster as balanced; "needs rebalance" after a failover or an added node.',
      unit: 'none',
      colorByThreshold: true,
      mappings: [
        { value: '1', text: 'balanced', color: 'green' },
        { value: '0', text: 'needs rebalance', color: 'orange' },
      ],
      thresholds: [{ color: 'orange', value: null }, { color: 'green', value: 1 }],
      targets: [{ expr: `min(couchbase_cluster_balanced{${CL}})` }],
    },
    {
      type: 'state-timeline',
      title: 'Node status',
      description: 'Health of each node over time as the cluster manager saw it: healthy, unhealthy or warmup.',
      unit: 'none',
      mappings: [
        { value: '0', text: 'healthy', color: 'green' },
        { value: '1', text: 'warmup', color: 'orange' },
        { value: '2', text: 'unhealthy', color: 'red' },
      ],
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }, { color: 'red', value: 2 }],
      targets: [
        {
          expr: `max by (couchbase_cluster, node) (couchbase_node_status{${CLN}, status="warmup"}) + 2 * max by (couchbase_cluster, node) (couchbase_node_status{${CLN}, status!~"healthy|warmup"})`,
          legendFormat: '{{node}} ({{couchbase_cluster}})',
        },
      ],
    },
    {
      type: 'table',
      title: 'Nodes, services and versions',
      description: 'Each node with its Couchbase version, services (kv = data, n1ql = query, index, fts = search, cbas = analytics, eventing, backup) and server group.',
      unit: 'none',
      hideColumns: ['Value'],
      targets: [{ expr: `couchbase_node_info{${CLN}}` }],
    },
    {
      type: 'table',
      title: 'Membership',
      description: 'Cluster membership of each node: active, inactiveAdded (awaiting rebalance) or inactiveFailed (failed over).',
      unit: 'none',
      hideColumns: ['Value'],
      targets: [{ expr: `couchbase_node_membership{${CLN}} == 1` }],
      w: 12,
    },
    {
      type: 'table',
      title: 'Service ports',
      description: 'Ports of the service endpoints each node offers (nodeServices), e.g. kv 11210, kvSSL 11207, mgmt 8091.',
      unit: 'none',
      valueName: 'Port',
      targets: [{ expr: `couchbase_node_service_port{${CLN}}` }],
      w: 12,
    },
    { row: 'CPU' },
    {
      type: 'timeseries',
      title: 'CPU utilization',
      description: 'CPU utilization of each node (systemStats cpu_utilization_rate). Sustained values above 80% leave no headroom for rebalance or compaction.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.8 }, { color: 'red', value: 0.95 }],
      targets: [{ expr: `couchbase_node_cpu_utilization_ratio{${CLN}}`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'CPU stolen',
      description: 'CPU time the hypervisor gave to other guests. Above a few percent the node is starved by its neighbours.',
      unit: 'percentunit',
      min: 0,
      targets: [{ expr: `couchbase_node_cpu_stolen_ratio{${CLN}}`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
    },
    { row: 'Memory' },
    {
      type: 'timeseries',
      title: 'Memory used',
      description: 'Memory in use (physical memory minus free memory) per node, against the memory limit (the cgroup limit in containers).',
      unit: 'bytes',
      targets: [
        { expr: `couchbase_node_memory_total_bytes{${CLN}} - couchbase_node_memory_free_bytes{${CLN}}`, legendFormat: 'used {{node}}' },
        { expr: `couchbase_node_memory_limit_bytes{${CLN}}`, legendFormat: 'limit {{node}}' },
      ],
    },
    {
      type: 'timeseries',
      title: 'Free memory',
      description: 'Share of physical memory that is free per node. Low values mean the page cache and the services compete for memory.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: [{ color: 'red', value: null }, { color: 'orange', value: 0.1 }, { color: 'green', value: 0.2 }],
      targets: [{ expr: `couchbase_node_memory_free_bytes{${CLN}} / couchbase_node_memory_total_bytes{${CLN}}`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Swap used',
      description: 'Swap space in use per node. Couchbase recommends little or no swapping: any growth slows the data service.',
      unit: 'bytes',
      targets: [
        { expr: `couchbase_node_swap_used_bytes{${CLN}}`, legendFormat: 'used {{node}}' },
        { expr: `couchbase_node_swap_total_bytes{${CLN}}`, legendFormat: 'total {{node}}' },
      ],
    },
    {
      type: 'timeseries',
      title: 'Allocation stalls',
      description: 'Times per second the kernel stalled an allocation to reclaim memory (allocstall): a sign of memory pressure.',
      unit: 'ops',
      targets: [{ expr: `rate(couchbase_node_allocstall_total{${CLN}}[$__rate_interval])`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Data service memory',
      description: 'Memory used by the data service per node, and what memcached has allocated and reserved.',
      unit: 'bytes',
      targets: [
        { expr: `couchbase_node_mem_used_bytes{${CLN}}`, legendFormat: 'used {{node}}' },
        { expr: `couchbase_node_memcached_memory_allocated_bytes{${CLN}}`, legendFormat: 'allocated {{node}}' },
        { expr: `couchbase_node_memcached_memory_reserved_bytes{${CLN}}`, legendFormat: 'reserved {{node}}' },
      ],
    },
    {
      type: 'bargauge',
      title: 'Service memory quotas',
      description: 'Per-node memory quota of each service (kv, index, fts, cbas, eventing), cluster-wide settings.',
      unit: 'bytes',
      targets: [{ expr: `couchbase_cluster_memory_quota_bytes{${CL}}`, legendFormat: '{{service}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Data service quota given to buckets',
      description:
        'Per cluster (storageTotals ram, summed over the data service nodes; the node selection does not apply): the RAM quota given to buckets against the data service memory quota. At the quota, no bucket can be created or grown.',
      unit: 'bytes',
      w: 24,
      targets: [
        { expr: `couchbase_cluster_storage_quota_used_bytes{${RAM}}`, legendFormat: 'given to buckets {{couchbase_cluster}}' },
        { expr: `couchbase_cluster_storage_quota_total_bytes{${RAM}}`, legendFormat: 'data service quota {{couchbase_cluster}}' },
      ],
    },
    // The capacity panels are per cluster: /pools/default storageTotals sums the nodes, and no per-node
    // capacity is exported (the node variable does not apply to them; their descriptions say so).
    { row: 'Disk' },
    {
      type: 'timeseries',
      title: 'Disk space free',
      description:
        'Per cluster (storageTotals hdd, summed over the nodes; the node selection does not apply): share of the disk space holding the data that is free. Orange under 20% (CouchbaseDiskSpaceLow), red under 10% (CouchbaseDiskSpaceCritical). Compaction needs free space to run.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: DISK_FREE_STEPS,
      w: 8,
      targets: [{ expr: DISK_FREE_RATIO, legendFormat: '{{couchbase_cluster}}' }],
    },
    {
      type: 'timeseries',
      title: 'Disk space',
      description:
        'Per cluster (storageTotals hdd, summed over the nodes; the node selection does not apply): size of the file systems holding the data paths, the space in use on them and the space free.',
      unit: 'bytes',
      w: 8,
      targets: [
        { expr: `couchbase_cluster_storage_total_bytes{${HDD}}`, legendFormat: 'total {{couchbase_cluster}}' },
        { expr: `couchbase_cluster_storage_used_bytes{${HDD}}`, legendFormat: 'used {{couchbase_cluster}}' },
        { expr: `couchbase_cluster_storage_free_bytes{${HDD}}`, legendFormat: 'free {{couchbase_cluster}}' },
      ],
    },
    {
      type: 'timeseries',
      title: 'Disk used by Couchbase and by other files',
      description:
        'Per cluster (storageTotals hdd, summed over the nodes; the node selection does not apply): space used by Couchbase data, and the rest of the used space (logs, other software). A growing "other" share is not solved by compaction.',
      unit: 'bytes',
      w: 8,
      targets: [
        { expr: `couchbase_cluster_storage_used_by_data_bytes{${HDD}}`, legendFormat: 'Couchbase data {{couchbase_cluster}}' },
        {
          expr: `couchbase_cluster_storage_used_bytes{${HDD}} - couchbase_cluster_storage_used_by_data_bytes{${HDD}}`,
          legendFormat: 'other {{couchbase_cluster}}',
        },
      ],
    },
    {
      type: 'timeseries',
      title: 'Data files on disk',
      description: 'Disk space used by data files per node, and the live data in them; the gap is what compaction can reclaim.',
      unit: 'bytes',
      targets: [
        { expr: `couchbase_node_couch_docs_actual_disk_size_bytes{${CLN}}`, legendFormat: 'on disk {{node}}' },
        { expr: `couchbase_node_couch_docs_data_size_bytes{${CLN}}`, legendFormat: 'live data {{node}}' },
      ],
    },
    {
      type: 'timeseries',
      title: 'Views and indexes on disk',
      description: 'Disk space used by view indexes and by GSI indexes per node.',
      unit: 'bytes',
      targets: [
        { expr: `couchbase_node_couch_views_actual_disk_size_bytes{${CLN}}`, legendFormat: 'views {{node}}' },
        { expr: `couchbase_node_index_disk_size_bytes{${CLN}}`, legendFormat: 'indexes {{node}}' },
      ],
    },
    { row: 'Load' },
    {
      type: 'timeseries',
      title: 'Operations per node',
      description: 'Data operations per second per node, and gets per second.',
      unit: 'ops',
      targets: [
        { expr: `couchbase_node_ops_per_second{${CLN}}`, legendFormat: 'ops {{node}}' },
        { expr: `couchbase_node_cmd_get_per_second{${CLN}}`, legendFormat: 'gets {{node}}' },
      ],
    },
    {
      type: 'timeseries',
      title: 'Items per node',
      description: 'Active items, and active plus replica items, per node.',
      unit: 'short',
      targets: [
        { expr: `couchbase_node_curr_items{${CLN}}`, legendFormat: 'active {{node}}' },
        { expr: `couchbase_node_curr_items_tot{${CLN}}`, legendFormat: 'active + replica {{node}}' },
      ],
    },
    {
      type: 'timeseries',
      title: 'Uptime',
      description: 'Time since each node\'s cluster manager started. A drop to zero is a restart.',
      unit: 's',
      targets: [{ expr: `couchbase_node_uptime_seconds{${CLN}}`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Background fetches per node',
      description: 'Items fetched from disk per second per node because they were not resident in memory.',
      unit: 'ops',
      targets: [{ expr: `couchbase_node_ep_bg_fetched_per_second{${CLN}}`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
    },
  ],
};
