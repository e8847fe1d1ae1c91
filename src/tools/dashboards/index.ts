/**
 * The Index dashboard (`cbwatch-index`): the index service as the `index` collector exports it: the state of
 * every index replica (from /indexStatus) with the build progress of those building, the statistics per index
 * and node (items, pending and queued mutations, resident and fragmentation ratios, sizes, scan latency,
 * requests, rows and cache hits), and per index node the memory used against the quota.
 *
 * Two kinds of series meet here: the state families are per index replica (label `replica`, the N1QL name in
 * `index`), the statistics per index and node, where a replica carries its own display name (`idx (replica 1)`)
 * and each node holding partitions of a partitioned index a series of its own. The `index` variable lists the
 * N1QL names; the statistics match them with or without the replica suffix.
 */
import { CLUSTER_VAR } from '../grafana.js';
import type { DashboardSpec, VariableSpec } from '../grafana.js';
import { CL } from './shared.js';

const BUCKET_VAR: VariableSpec = {
  name: 'bucket',
  label: 'Bucket',
  query: 'label_values(couchbase_index_state{couchbase_cluster=~"$couchbase_cluster"}, bucket)',
  multi: true,
};
const INDEX_VAR: VariableSpec = {
  name: 'index',
  label: 'Index',
  query: 'label_values(couchbase_index_state{couchbase_cluster=~"$couchbase_cluster", bucket=~"$bucket"}, index)',
  multi: true,
};
const NODE_VAR: VariableSpec = {
  name: 'node',
  label: 'Index node',
  query: 'label_values(couchbase_index_node_memory_quota_bytes{couchbase_cluster=~"$couchbase_cluster"}, node)',
  multi: true,
};

/** The state families: per index replica. */
const IXS = `${CL}, bucket=~"$bucket", index=~"$index"`;
/** The statistics: per index and node; a replica's display name is the index name with ` (replica N)`. */
const IXN = `${CL}, bucket=~"$bucket", index=~"($index)( .replica [0-9]+.)?", node=~"$node"`;
const NODE = `${CL}, node=~"$node"`;
const INDEX = 'couchbase_cluster, bucket, scope, collection, index';
const REPLICA = `${INDEX}, replica`;
const INDEX_LEGEND = '{{bucket}}.{{scope}}.{{collection}} {{index}}';
const INDEX_NODE_LEGEND = `${INDEX_LEGEND} on {{node}}`;
const NODE_LEGEND = '{{node}} ({{couchbase_cluster}})';

/** Sum over the nodes of a statistic that adds up (partitions of one index on several nodes). */
const perIndex = (family: string): string => `sum by (${INDEX}) (${family}{${IXN}})`;

export const index: DashboardSpec = {
  uid: 'cbwatch-index',
  title: 'Couchbase / Index',
  description:
    'The index service: the state of every index replica and the build progress of those building; per index items, pending and queued mutations, resident and fragmentation ratios, data, disk and memory size, scan latency, requests, rows returned and cache hit ratio; per index node memory used against the quota.',
  tags: ['couchbase', 'index'],
  variables: [CLUSTER_VAR, BUCKET_VAR, INDEX_VAR, NODE_VAR],
  items: [
    { row: 'State' },
    {
      type: 'stat',
      title: 'Index replicas',
      description: 'Index replicas of the selected indexes, as /indexStatus lists them.',
      unit: 'none',
      targets: [{ expr: `count(max by (${REPLICA}) (couchbase_index_state{${IXS}}))` }],
    },
    {
      type: 'stat',
      title: 'Not ready',
      description: 'Index replicas of the selected indexes that are not ready: building, created (deferred, not built), moving, in error, paused, warming up or not available.',
      unit: 'none',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
      targets: [{ expr: `sum(couchbase_index_state{${IXS}, state!="ready"})` }],
    },
    {
      type: 'stat',
      title: 'In error',
      description: 'Index replicas of the selected indexes whose state is error.',
      unit: 'none',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'red', value: 1 }],
      targets: [{ expr: `sum(couchbase_index_state{${IXS}, state="error"})` }],
    },
    {
      type: 'stat',
      title: 'Index status stale',
      description: 'Whether /indexStatus is stale: the cluster manager could not reach an indexer, so the states shown are its last known ones.',
      unit: 'none',
      colorByThreshold: true,
      mappings: [
        { value: '0', text: 'fresh', color: 'green' },
        { value: '1', text: 'stale', color: 'orange' },
      ],
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
      targets: [{ expr: `max(couchbase_index_status_stale{${CL}})` }],
    },
    {
      type: 'table',
      title: 'Index state',
      description: 'The state of every index replica of the selected indexes: ready, building, created (deferred), moving, error, paused, warmup or not_available.',
      unit: 'none',
      hideColumns: ['Value'],
      targets: [{ expr: `couchbase_index_state{${IXS}} == 1` }],
    },
    {
      type: 'timeseries',
      title: 'Build progress',
      description: 'Build progress of the index replicas that are building (the server reports an integer percent). No line when none builds.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      noValue: 'no index building',
      targets: [
        {
          expr: `couchbase_index_build_progress_ratio{${IXS}}\nand on (${REPLICA}) (couchbase_index_state{${IXS}, state="building"} == 1)`,
          legendFormat: `${INDEX_LEGEND} replica {{replica}}`,
        },
      ],
      w: 24,
    },
    { row: 'Per index' },
    {
      type: 'timeseries',
      title: 'Items',
      description: 'Items indexed per index, summed over the nodes holding its partitions (each replica on its own).',
      unit: 'short',
      targets: [{ expr: perIndex('couchbase_index_items'), legendFormat: INDEX_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Mutations pending and queued',
      description: 'Per index, summed over its nodes: mutations not yet sent to the indexer (pending) and mutations queued in the indexer, not yet indexed.',
      unit: 'short',
      targets: [
        { expr: perIndex('couchbase_index_docs_pending'), legendFormat: `pending ${INDEX_LEGEND}` },
        { expr: perIndex('couchbase_index_docs_queued'), legendFormat: `queued ${INDEX_LEGEND}` },
      ],
    },
    {
      type: 'timeseries',
      title: 'Resident ratio',
      description: 'Share of the index held in memory, per index and node. Low values mean scans read from disk.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: [{ color: 'red', value: null }, { color: 'orange', value: 0.1 }, { color: 'green', value: 0.5 }],
      targets: [{ expr: `couchbase_index_resident_ratio{${IXN}}`, legendFormat: INDEX_NODE_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Fragmentation ratio',
      description: 'Fragmentation of the index storage, per index and node.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      targets: [{ expr: `couchbase_index_fragmentation_ratio{${IXN}}`, legendFormat: INDEX_NODE_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Data size',
      description: 'Size of the index data per index, summed over its nodes.',
      unit: 'bytes',
      w: 8,
      targets: [{ expr: perIndex('couchbase_index_data_size_bytes'), legendFormat: INDEX_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Disk size',
      description: 'Disk space taken by the index files per index, summed over its nodes.',
      unit: 'bytes',
      w: 8,
      targets: [{ expr: perIndex('couchbase_index_disk_size_bytes'), legendFormat: INDEX_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Memory used',
      description: 'Memory used by the index per index, summed over its nodes.',
      unit: 'bytes',
      w: 8,
      targets: [{ expr: perIndex('couchbase_index_memory_used_bytes'), legendFormat: INDEX_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Scan latency',
      description: 'Mean scan latency per index and node, as the indexer reports it.',
      unit: 's',
      targets: [{ expr: `couchbase_index_scan_latency_seconds{${IXN}}`, legendFormat: INDEX_NODE_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Cache hit ratio',
      description: 'Share of the index page lookups served from its cache, per index and node. No line while an index is not read.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      targets: [{ expr: `couchbase_index_cache_hit_ratio{${IXN}}`, legendFormat: INDEX_NODE_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Scan requests',
      description: 'Scan requests per second per index, summed over its nodes.',
      unit: 'reqps',
      targets: [{ expr: perIndex('couchbase_index_requests_per_second'), legendFormat: INDEX_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Rows returned',
      description: 'Rows returned by scans per second per index, summed over its nodes.',
      unit: 'short',
      targets: [{ expr: perIndex('couchbase_index_rows_returned_per_second'), legendFormat: INDEX_LEGEND }],
    },
    { row: 'Per index node' },
    {
      type: 'timeseries',
      title: 'Memory used and quota',
      description: 'Per index node: memory the indexer uses and the index service memory quota.',
      unit: 'bytes',
      targets: [
        { expr: `couchbase_index_node_memory_used_bytes{${NODE}}`, legendFormat: `used ${NODE_LEGEND}` },
        { expr: `couchbase_index_node_memory_quota_bytes{${NODE}}`, legendFormat: `quota ${NODE_LEGEND}` },
      ],
    },
    {
      type: 'timeseries',
      title: 'Memory quota used',
      description: 'Per index node, the memory used over the index service memory quota (of that node, never summed over nodes).',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.8 }, { color: 'red', value: 0.95 }],
      targets: [{ expr: `couchbase_index_node_ram_ratio{${NODE}}`, legendFormat: NODE_LEGEND }],
    },
  ],
};
