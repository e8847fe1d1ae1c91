/**
 * The Buckets dashboard (`cbwatch-buckets`): per bucket, and per node with the bucket_stats option
 * per_node: true.
 */
import { BUCKET_VAR, CLUSTER_VAR } from '../grafana.js';
import type { DashboardSpec, VariableSpec } from '../grafana.js';
import { CLB, PER_NODE_OFF, RAM } from './shared.js';

/** Nodes of the per-node bucket stats (present only with the bucket_stats option per_node: true). */
const BUCKET_NODE_VAR: VariableSpec = {
  name: 'node',
  label: 'Node',
  query: 'label_values(couchbase_bucket_node_ops_per_second{couchbase_cluster=~"$couchbase_cluster", bucket=~"$bucket"}, node)',
  multi: true,
};

export const buckets: DashboardSpec = {
  uid: 'cbwatch-buckets',
  title: 'Couchbase / Buckets',
  description: 'Per bucket (and per node when the bucket_stats collector runs with per_node: true): operations, items, memory against the quota, residency, disk queues and cache misses.',
  tags: ['couchbase', 'buckets'],
  variables: [CLUSTER_VAR, BUCKET_VAR, BUCKET_NODE_VAR],
  items: [
    { row: 'Operations' },
    {
      type: 'timeseries',
      title: 'Operations per bucket',
      description: 'All operations per second (gets, sets, incr/decr, deletes, XDCR metadata operations).',
      unit: 'ops',
      targets: [{ expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_ops_per_second{${CLB}})`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Gets and sets',
      description: 'Get and set operations per second per bucket.',
      unit: 'ops',
      targets: [
        { expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_cmd_get_per_second{${CLB}})`, legendFormat: 'get {{bucket}}' },
        { expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_cmd_set_per_second{${CLB}})`, legendFormat: 'set {{bucket}}' },
      ],
    },
    {
      type: 'timeseries',
      title: 'Items',
      description: 'Items in active vBuckets (the bucket\'s document count).',
      unit: 'short',
      targets: [{ expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_curr_items{${CLB}})`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Cache miss ratio',
      description: 'Share of get operations served from disk instead of memory (ep_cache_miss_rate). Rising values mean the working set no longer fits the quota.',
      unit: 'percentunit',
      min: 0,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.1 }],
      targets: [{ expr: `couchbase_bucket_ep_cache_miss_ratio{${CLB}}`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
    },
    { row: 'Memory' },
    {
      type: 'timeseries',
      title: 'Memory used vs quota',
      description: 'Memory used by each bucket against its RAM quota and its high water mark (ejection starts above it).',
      unit: 'bytes',
      targets: [
        { expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_mem_used_bytes{${CLB}})`, legendFormat: 'used {{bucket}}' },
        { expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_ep_mem_high_wat_bytes{${CLB}})`, legendFormat: 'high water mark {{bucket}}' },
        { expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_quota_ram_bytes{${CLB}})`, legendFormat: 'quota {{bucket}}' },
      ],
    },
    {
      type: 'bargauge',
      title: 'Quota used',
      description: 'Share of the RAM quota in use per bucket (basicStats.quotaPercentUsed).',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.85 }, { color: 'red', value: 0.95 }],
      targets: [{ expr: `couchbase_bucket_quota_used_ratio{${CLB}}`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Active resident ratio',
      description: 'Share of active items whose value is in memory. Low values mean reads go to disk.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: [{ color: 'red', value: null }, { color: 'orange', value: 0.2 }, { color: 'green', value: 0.5 }],
      targets: [{ expr: `couchbase_bucket_vb_active_resident_items_ratio{${CLB}}`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Temporary out-of-memory errors',
      description: 'Operations refused with a temporary out-of-memory error per second: clients see ETMPFAIL.',
      unit: 'ops',
      targets: [{ expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_ep_tmp_oom_errors_per_second{${CLB}})`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
    },
    { row: 'Disk' },
    {
      type: 'timeseries',
      title: 'Disk write queue',
      description: 'Items waiting to be written to disk (ep_queue_size + ep_flusher_todo).',
      unit: 'short',
      targets: [{ expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_disk_write_queue{${CLB}})`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Disk queue fill and drain',
      description: 'Items enqueued for disk write and items written per second. Fill above drain for long means the queue grows.',
      unit: 'ops',
      targets: [
        { expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_ep_diskqueue_fill_per_second{${CLB}})`, legendFormat: 'fill {{bucket}}' },
        { expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_ep_diskqueue_drain_per_second{${CLB}})`, legendFormat: 'drain {{bucket}}' },
      ],
    },
    {
      type: 'timeseries',
      title: 'Background fetches',
      description: 'Items fetched from disk per second because they were not resident (cache misses).',
      unit: 'ops',
      targets: [{ expr: `sum by (couchbase_cluster, bucket) (couchbase_bucket_ep_bg_fetched_per_second{${CLB}})`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Disk used',
      description: 'Disk space used by each bucket (data and views).',
      unit: 'bytes',
      targets: [{ expr: `couchbase_bucket_basic_disk_used_bytes{${CLB}}`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Replicas configured and available',
      description: 'Replicas each bucket is configured for (replicaNumber) and the replicas every one of its vBuckets has (the fewest replica copies in the vBucket map). Available below configured: too few data nodes for the replicas, or a failover not yet followed by a rebalance.',
      unit: 'short',
      targets: [
        { expr: `couchbase_bucket_replicas{${CLB}}`, legendFormat: 'configured {{bucket}} ({{couchbase_cluster}})' },
        { expr: `couchbase_bucket_replicas_available{${CLB}}`, legendFormat: 'available {{bucket}} ({{couchbase_cluster}})' },
      ],
    },
    { row: 'Per node (bucket_stats per_node: true)' },
    {
      type: 'timeseries',
      title: 'Operations per node',
      description: 'Operations per second per bucket and node. Needs the bucket_stats option per_node: true.',
      unit: 'ops',
      noValue: PER_NODE_OFF,
      targets: [{ expr: `couchbase_bucket_node_ops_per_second{${CLB}, node=~"$node"}`, legendFormat: '{{bucket}} {{node}}' }],
    },
    {
      type: 'timeseries',
      title: 'Memory used per node',
      description: 'Memory used per bucket and node. Needs the bucket_stats option per_node: true.',
      unit: 'bytes',
      noValue: PER_NODE_OFF,
      targets: [{ expr: `couchbase_bucket_node_mem_used_bytes{${CLB}, node=~"$node"}`, legendFormat: '{{bucket}} {{node}}' }],
    },
    {
      type: 'timeseries',
      title: 'Active resident ratio per node',
      description: 'Share of active items resident in memory per bucket and node. Needs per_node: true.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      noValue: PER_NODE_OFF,
      targets: [{ expr: `couchbase_bucket_node_vb_active_resident_items_ratio{${CLB}, node=~"$node"}`, legendFormat: '{{bucket}} {{node}}' }],
    },
    {
      type: 'timeseries',
      title: 'Disk write queue per node',
      description: 'Items waiting to be written to disk per bucket and node. Needs per_node: true.',
      unit: 'short',
      noValue: PER_NODE_OFF,
      targets: [{ expr: `couchbase_bucket_node_disk_write_queue{${CLB}, node=~"$node"}`, legendFormat: '{{bucket}} {{node}}' }],
    },
  ],
};
