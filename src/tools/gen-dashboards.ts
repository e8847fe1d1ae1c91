/**
 * Dashboard generator: the seven cbwatch Grafana dashboards and the Grafana provisioning examples.
 * `renderDashboards()` is pure; `generate.ts` writes its files and a test fails when they are stale.
 *
 * Conventions (STYLE.md): uid `cbwatch-<name>`, the shared tag `cbwatch` with a dashboards link by that tag,
 * a `datasource` variable, chained `couchbase_cluster` → `bucket` variables (label_values), `$__rate_interval`
 * in every rate, a unit and a description on every panel. Metric names are cbwatch's catalog names
 * (src/metrics/catalog.ts); a test checks every one of them.
 */
import { yamlText } from './gen-alerts.js';
import type { Files } from './files.js';
import { BUCKET_VAR, CLUSTER_VAR, EXPIRY_STEPS, OK_FAIL, ON_OFF_BAD, ON_OFF_GOOD, dashboardJson, jsonText } from './grafana.js';
import type { DashboardSpec, DrillDown, Item, ThresholdStep, VariableSpec } from './grafana.js';

/** Selector fragments, so every query filters the same way. */
const CL = 'couchbase_cluster=~"$couchbase_cluster"';
const CLB = `${CL}, bucket=~"$bucket"`;
const XR = `${CL}, source_bucket=~"$bucket"`;
/** The XDCR dashboard also selects the remote cluster and target bucket (one replication), and the node. */
const XRR = `${XR}, target_cluster_name=~"$remote_cluster", target_bucket=~"$target_bucket"`;
const XRN = `${XRR}, node=~"$node"`;
const CLN = `${CL}, node=~"$node"`;
const REPL = 'couchbase_cluster, source_bucket, target_cluster_name, target_bucket';
const DAY = 86400;
/** Shown instead of "No data" by panels of a feature that is switched off. */
const OFF = 'off';
const PER_NODE_OFF = 'off (bucket_stats per_node: false)';

/**
 * Free share of the disks holding the data (storageTotals hdd), per cluster. Coloured at the defaults of
 * CouchbaseDiskSpaceLow (20%) and CouchbaseDiskSpaceCritical (10%) in alerts/parameters.yml (a test compares them).
 */
const HDD = `${CL}, storage="hdd"`;
const RAM = `${CL}, storage="ram"`;
const DISK_FREE_RATIO = `couchbase_cluster_storage_free_bytes{${HDD}} / couchbase_cluster_storage_total_bytes{${HDD}}`;
export const DISK_FREE_STEPS: readonly ThresholdStep[] = [
  { color: 'red', value: null },
  { color: 'orange', value: 0.1 },
  { color: 'green', value: 0.2 },
];

const NODE_VAR: VariableSpec = {
  name: 'node',
  label: 'Node',
  query: 'label_values(couchbase_node_status{couchbase_cluster=~"$couchbase_cluster"}, node)',
  multi: true,
};

/** Nodes of the per-node bucket stats (present only with the bucket_stats option per_node: true). */
const BUCKET_NODE_VAR: VariableSpec = {
  name: 'node',
  label: 'Node',
  query: 'label_values(couchbase_bucket_node_ops_per_second{couchbase_cluster=~"$couchbase_cluster", bucket=~"$bucket"}, node)',
  multi: true,
};

const REMOTE_CLUSTER_VAR: VariableSpec = {
  name: 'remote_cluster',
  label: 'Remote cluster',
  query: 'label_values(couchbase_xdcr_replication_paused{couchbase_cluster=~"$couchbase_cluster", source_bucket=~"$bucket"}, target_cluster_name)',
  multi: true,
};

/** With bucket and remote_cluster, the target bucket picks out one replication. */
const TARGET_BUCKET_VAR: VariableSpec = {
  name: 'target_bucket',
  label: 'Target bucket',
  query: 'label_values(couchbase_xdcr_replication_paused{couchbase_cluster=~"$couchbase_cluster", source_bucket=~"$bucket", target_cluster_name=~"$remote_cluster"}, target_bucket)',
  multi: true,
};

const XDCR_NODE_VAR: VariableSpec = {
  name: 'node',
  label: 'Source node',
  query: 'label_values(couchbase_xdcr_changes_left{couchbase_cluster=~"$couchbase_cluster", source_bucket=~"$bucket"}, node)',
  multi: true,
};

/** Drill-downs from the Overview to the dashboard of the clicked bucket, replication or node. */
const TO_BUCKET: DrillDown = { title: 'Open this bucket', uid: 'cbwatch-buckets', vars: { couchbase_cluster: 'couchbase_cluster', bucket: 'bucket' } };
const TO_REPLICATION: DrillDown = {
  title: 'Open this replication',
  uid: 'cbwatch-xdcr',
  vars: { couchbase_cluster: 'couchbase_cluster', bucket: 'source_bucket', remote_cluster: 'target_cluster_name', target_bucket: 'target_bucket' },
};
const TO_NODE: DrillDown = { title: 'Open this node', uid: 'cbwatch-nodes', vars: { couchbase_cluster: 'couchbase_cluster', node: 'node' } };
const TO_CLUSTER_NODES: DrillDown = { title: 'Open the nodes of this cluster', uid: 'cbwatch-nodes', vars: { couchbase_cluster: 'couchbase_cluster' } };

const overview: DashboardSpec = {
  uid: 'cbwatch-overview',
  title: 'Couchbase / Overview',
  description: 'Every Couchbase cluster cbwatch watches at a glance: reachability, node health, firing alerts, free disk space, certificate expiry, XDCR backlog and the exporter itself.',
  tags: ['couchbase', 'overview'],
  variables: [CLUSTER_VAR, BUCKET_VAR],
  items: [
    { row: 'Clusters' },
    {
      type: 'stat',
      title: 'Clusters reachable',
      description: 'Clusters whose REST API answered cbwatch\'s latest polls (couchbase_up = 1).',
      unit: 'none',
      w: 4,
      targets: [{ expr: `sum(couchbase_up{${CL}})` }],
    },
    {
      type: 'stat',
      title: 'Clusters unreachable',
      description: 'Clusters cbwatch cannot reach (couchbase_up = 0): CouchbaseDown fires for them.',
      unit: 'none',
      w: 4,
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'red', value: 1 }],
      targets: [{ expr: `count(couchbase_up{${CL}} == 0) or vector(0)` }],
    },
    {
      type: 'stat',
      title: 'Nodes not healthy',
      description: 'Nodes the cluster manager reports as unhealthy or warming up.',
      unit: 'none',
      w: 4,
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'red', value: 1 }],
      targets: [{ expr: `sum(couchbase_node_status{${CL}, status!="healthy"}) or vector(0)` }],
    },
    {
      type: 'stat',
      title: 'Firing alerts',
      description: 'cbwatch alerts (Couchbase* and Cbwatch*) firing in this Prometheus.',
      unit: 'none',
      w: 4,
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
      targets: [{ expr: 'count(ALERTS{alertstate="firing", alertname=~"Couchbase.+|Cbwatch.+"}) or vector(0)' }],
    },
    {
      type: 'stat',
      title: 'Disk space free',
      description:
        'Share of the disk space holding the data that is free, summed over the nodes of each cluster (storageTotals hdd). Orange under 20% (CouchbaseDiskSpaceLow), red under 10% (CouchbaseDiskSpaceCritical). Click a value to open the nodes of that cluster.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      colorByThreshold: true,
      thresholds: DISK_FREE_STEPS,
      targets: [{ expr: `min by (couchbase_cluster) (${DISK_FREE_RATIO})`, legendFormat: '{{couchbase_cluster}}' }],
      drillDown: [TO_CLUSTER_NODES],
      w: 8,
    },
    {
      type: 'bargauge',
      title: 'Nodes by status',
      description: 'Nodes per health status (healthy, unhealthy, warmup) over the selected clusters.',
      unit: 'none',
      targets: [{ expr: `sum by (status) (couchbase_node_status{${CL}})`, legendFormat: '{{status}}' }],
      w: 8,
    },
    {
      type: 'bargauge',
      title: 'Nodes by membership',
      description: 'Nodes per cluster membership: active, inactiveAdded (awaiting rebalance), inactiveFailed (failed over, rebalance needed).',
      unit: 'none',
      targets: [{ expr: `sum by (membership) (couchbase_node_membership{${CL}})`, legendFormat: '{{membership}}' }],
      w: 8,
    },
    {
      type: 'bargauge',
      title: 'Auto-failover budget used',
      description: 'Automatic failovers used since the last reset, relative to maxCount. At 100% no further node is failed over automatically until an administrator resets the count.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.5 }, { color: 'red', value: 1 }],
      targets: [{ expr: `couchbase_autofailover_events{${CL}} / couchbase_autofailover_max_events{${CL}}`, legendFormat: '{{couchbase_cluster}}' }],
      drillDown: [TO_CLUSTER_NODES],
      w: 8,
    },
    {
      type: 'table',
      title: 'Nodes not healthy',
      description: 'Nodes whose status is not healthy (unhealthy, warmup), with their membership. Click a row to open the node.',
      unit: 'none',
      hideColumns: ['Value'],
      noValue: 'all healthy',
      targets: [{ expr: `couchbase_node_status{${CL}, status!="healthy"} == 1` }],
      drillDown: [TO_NODE],
      w: 12,
      h: 6,
    },
    {
      type: 'bargauge',
      title: 'Busiest nodes (CPU, top 10)',
      description: 'The ten nodes with the highest CPU utilization. Click a bar to open the node.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.8 }, { color: 'red', value: 0.95 }],
      targets: [{ expr: `topk(10, couchbase_node_cpu_utilization_ratio{${CL}})`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
      drillDown: [TO_NODE],
      w: 12,
      h: 6,
    },
    {
      type: 'table',
      title: 'Firing alerts by cluster',
      description: 'Alerts firing now, with their severity and cluster (from the ALERTS series of this Prometheus).',
      unit: 'none',
      hideColumns: ['alertstate'],
      valueName: 'Series',
      targets: [{ expr: 'sum by (alertname, severity, couchbase_cluster) (ALERTS{alertstate="firing", alertname=~"Couchbase.+|Cbwatch.+"})' }],
      noValue: 'none firing',
      drillDown: [TO_CLUSTER_NODES],
      h: 6,
    },
    {
      type: 'table',
      title: "Couchbase's own alerts",
      description: "Alerts Couchbase raised and nobody has dismissed in its web console, by kind (the alerts array of /pools/default). The messages are on cbwatch's landing page.",
      unit: 'none',
      valueName: 'Alerts',
      targets: [{ expr: `couchbase_cluster_alerts{${CL}} > 0` }],
      noValue: 'none listed',
      drillDown: [TO_CLUSTER_NODES],
      h: 6,
    },
    { row: 'Certificates and XDCR' },
    {
      type: 'bargauge',
      title: 'Certificate time left (soonest per cluster)',
      description: 'Time until the soonest expiry among the trusted CAs and node certificates (including their chains) of each cluster. Red under 7 days, orange under 28.',
      unit: 's',
      thresholds: EXPIRY_STEPS,
      targets: [
        { expr: `min by (couchbase_cluster) (couchbase_trusted_ca_not_after_timestamp_seconds{${CL}}) - time()`, legendFormat: '{{couchbase_cluster}} trusted CA' },
        { expr: `min by (couchbase_cluster) (couchbase_node_certificate_earliest_not_after_timestamp_seconds{${CL}}) - time()`, legendFormat: '{{couchbase_cluster}} node certificate' },
      ],
    },
    {
      type: 'timeseries',
      title: 'XDCR backlog, top 5 replications',
      description: 'Mutations still to replicate (changes_left summed over nodes) of the five largest replications.',
      unit: 'short',
      targets: [{ expr: `topk(5, sum by (${REPL}) (couchbase_xdcr_changes_left{${XR}}))`, legendFormat: '{{couchbase_cluster}} {{source_bucket}} → {{target_cluster_name}}/{{target_bucket}}' }],
      noValue: 'no replications',
      drillDown: [TO_REPLICATION],
    },
    {
      type: 'bargauge',
      title: 'Fullest buckets (RAM quota used, top 10)',
      description: 'The ten buckets using the largest share of their RAM quota. Click a bar to open the bucket.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.85 }, { color: 'red', value: 0.95 }],
      targets: [{ expr: `topk(10, couchbase_bucket_quota_used_ratio{${CLB}})`, legendFormat: '{{bucket}} ({{couchbase_cluster}})' }],
      drillDown: [TO_BUCKET],
      w: 24,
    },
    { row: 'Load' },
    {
      type: 'timeseries',
      title: 'Operations per cluster',
      description: 'Bucket operations per second summed over the selected buckets of each cluster.',
      drillDown: [TO_CLUSTER_NODES],
      unit: 'ops',
      targets: [{ expr: `sum by (couchbase_cluster) (couchbase_bucket_ops_per_second{${CLB}})`, legendFormat: '{{couchbase_cluster}}' }],
    },
    {
      type: 'timeseries',
      title: 'Rebalance progress',
      description: 'Progress of a running rebalance (0 to 100%); no line when none runs.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      targets: [{ expr: `couchbase_rebalance_progress_ratio{${CL}}`, legendFormat: '{{couchbase_cluster}}' }],
      noValue: 'no rebalance running',
    },
    { row: 'Exporter' },
    {
      type: 'stat',
      title: 'Collectors succeeding',
      description: 'Share of cbwatch collectors whose latest poll succeeded. Open the cbwatch dashboard for details.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      colorByThreshold: true,
      thresholds: [{ color: 'red', value: null }, { color: 'orange', value: 0.9 }, { color: 'green', value: 1 }],
      targets: [{ expr: `avg(cbwatch_collector_success{${CL}})` }],
    },
    {
      type: 'stat',
      title: 'Oldest successful poll',
      description: 'Age of the stalest collector result: how old the freshest data of the worst collector is.',
      unit: 's',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 600 }, { color: 'red', value: 900 }],
      targets: [{ expr: `max(time() - cbwatch_collector_last_success_timestamp_seconds{${CL}})` }],
    },
    {
      type: 'stat',
      title: 'Requests to Couchbase',
      description: 'Requests per second cbwatch makes to the selected clusters (all endpoints and status codes).',
      unit: 'reqps',
      targets: [{ expr: `sum(rate(cbwatch_couchbase_requests_total{${CL}}[$__rate_interval]))` }],
    },
    {
      type: 'stat',
      title: 'Failed requests to Couchbase',
      description: 'Share of requests to Couchbase that did not answer 2xx (errors, timeouts, network failures).',
      unit: 'percentunit',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.01 }, { color: 'red', value: 0.1 }],
      targets: [
        {
          expr: `(sum(rate(cbwatch_couchbase_requests_total{${CL}, code!~"2.."}[$__rate_interval])) or vector(0)) / sum(rate(cbwatch_couchbase_requests_total{${CL}}[$__rate_interval]))`,
        },
      ],
    },
  ],
};

const buckets: DashboardSpec = {
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

const xdcr: DashboardSpec = {
  uid: 'cbwatch-xdcr',
  title: 'Couchbase / XDCR',
  description: 'Cross datacenter replication: backlog (changes_left) per replication and node, throughput, latency, errors, paused replications and remote cluster references. The bucket variable selects the source bucket; with the remote cluster and target bucket it selects one replication.',
  tags: ['couchbase', 'xdcr'],
  variables: [CLUSTER_VAR, BUCKET_VAR, REMOTE_CLUSTER_VAR, TARGET_BUCKET_VAR, XDCR_NODE_VAR],
  items: [
    { row: 'Backlog' },
    {
      type: 'timeseries',
      title: 'Changes left per replication',
      description: 'Mutations still to replicate, summed over the source nodes. A steadily rising line means the replication is losing the race.',
      unit: 'short',
      targets: [{ expr: `sum by (${REPL}) (couchbase_xdcr_changes_left{${XRR}})`, legendFormat: '{{source_bucket}} → {{target_cluster_name}}/{{target_bucket}}' }],
    },
    {
      type: 'timeseries',
      title: 'Changes left per node',
      description: 'Mutations still to replicate per source node: one node far above the others points at that node.',
      unit: 'short',
      targets: [{ expr: `sum by (couchbase_cluster, node) (couchbase_xdcr_changes_left{${XRN}})`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Backlog growth',
      description: 'Change of changes_left per second over 15 minutes (deriv over a subquery at the evaluation interval of Prometheus, as CouchbaseXdcrBacklogGrowing does): above 0 the backlog grows.',
      unit: 'short',
      targets: [{ expr: `deriv(sum by (${REPL}) (couchbase_xdcr_changes_left{${XRR}})[15m:])`, legendFormat: '{{source_bucket}} → {{target_cluster_name}}/{{target_bucket}}' }],
    },
    {
      type: 'timeseries',
      title: 'Replication queue',
      description: 'Documents waiting in the replication queue per replication.',
      unit: 'short',
      targets: [{ expr: `sum by (${REPL}) (couchbase_xdcr_docs_rep_queue{${XRR}})`, legendFormat: '{{source_bucket}} → {{target_cluster_name}}/{{target_bucket}}' }],
    },
    { row: 'Throughput and latency' },
    {
      type: 'timeseries',
      title: 'Documents replicated',
      description: 'Documents per second replicated to the destination (rate_replicated).',
      unit: 'ops',
      targets: [{ expr: `sum by (${REPL}) (couchbase_xdcr_rate_replicated_per_second{${XRR}})`, legendFormat: '{{source_bucket}} → {{target_cluster_name}}/{{target_bucket}}' }],
    },
    {
      type: 'timeseries',
      title: 'Bandwidth',
      description: 'Bytes per second sent by the replication (bandwidth_usage).',
      unit: 'Bps',
      targets: [{ expr: `sum by (${REPL}) (couchbase_xdcr_bandwidth_usage_bytes_per_second{${XRR}})`, legendFormat: '{{source_bucket}} → {{target_cluster_name}}/{{target_bucket}}' }],
    },
    {
      type: 'timeseries',
      title: 'Document latency',
      description: 'Weighted average latency of sending changes to the destination (wtavg_docs_latency), worst node.',
      unit: 's',
      targets: [{ expr: `max by (${REPL}) (couchbase_xdcr_wtavg_docs_latency_seconds{${XRR}})`, legendFormat: '{{source_bucket}} → {{target_cluster_name}}/{{target_bucket}}' }],
    },
    {
      type: 'timeseries',
      title: 'Metadata latency',
      description: 'Weighted average time to request document metadata for conflict resolution (wtavg_meta_latency), worst node.',
      unit: 's',
      targets: [{ expr: `max by (${REPL}) (couchbase_xdcr_wtavg_meta_latency_seconds{${XRR}})`, legendFormat: '{{source_bucket}} → {{target_cluster_name}}/{{target_bucket}}' }],
    },
    { row: 'Errors and state' },
    {
      type: 'timeseries',
      title: 'Replication errors',
      description: 'Errors Couchbase lists for each replication (tasks list). Any value above 0 needs a look at the XDCR log.',
      unit: 'short',
      thresholds: [{ color: 'green', value: null }, { color: 'red', value: 1 }],
      targets: [{ expr: `couchbase_xdcr_replication_errors{${XRR}}`, legendFormat: '{{source_bucket}} → {{target_cluster_name}}/{{target_bucket}}' }],
    },
    {
      type: 'table',
      title: 'Paused replications',
      description: 'Replications and whether they are paused (1). A paused replication builds a backlog by design.',
      unit: 'none',
      valueName: 'Paused',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
      mappings: [
        { value: '1', text: 'paused', color: 'orange' },
        { value: '0', text: 'running', color: 'green' },
      ],
      noValue: 'no replications',
      targets: [{ expr: `couchbase_xdcr_replication_paused{${XRR}}` }],
      w: 12,
    },
    {
      type: 'table',
      title: 'Remote clusters',
      description: 'Remote cluster references (XDCR destinations) and whether they are marked deleted while replications may still point at them.',
      unit: 'none',
      valueName: 'Deleted',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'red', value: 1 }],
      mappings: [
        { value: '1', text: 'deleted', color: 'red' },
        { value: '0', text: 'present', color: 'green' },
      ],
      noValue: 'no remote clusters',
      targets: [{ expr: `couchbase_xdcr_remote_cluster_deleted{${CL}, target_cluster_name=~"$remote_cluster"}` }],
      w: 12,
    },
    {
      type: 'table',
      title: 'Remote cluster encryption',
      description: 'How each remote cluster reference is secured: none (password and data in clear), half (password protected, data in clear) or full (TLS for the data too).',
      unit: 'none',
      hideColumns: ['Value'],
      noValue: 'no remote clusters, or none that reports it',
      targets: [{ expr: `couchbase_xdcr_remote_cluster_secure_type{${CL}, target_cluster_name=~"$remote_cluster"} == 1` }],
      w: 12,
    },
  ],
};

const certificates: DashboardSpec = {
  uid: 'cbwatch-certificates',
  title: 'Couchbase / Certificates & security',
  description: 'Time left on every trusted CA, node certificate and certificate of a node\'s chain, and the security posture: TLS minimum versions, cipher order, console over http, node-to-node encryption, LDAP.',
  tags: ['couchbase', 'certificates', 'security'],
  variables: [CLUSTER_VAR],
  time: 'now-7d',
  items: [
    { row: 'Certificates' },
    {
      type: 'table',
      title: 'Trusted CAs',
      description: 'Time left until each trusted CA certificate expires. Red under 7 days, orange under 28 (the alert thresholds).',
      unit: 's',
      valueName: 'Time left',
      colorByThreshold: true,
      thresholds: EXPIRY_STEPS,
      targets: [{ expr: `couchbase_trusted_ca_not_after_timestamp_seconds{${CL}} - time()` }],
    },
    {
      type: 'table',
      title: 'Node certificates',
      description: 'Time left until each node certificate expires; origin says whether Couchbase generated it or an administrator uploaded it.',
      unit: 's',
      valueName: 'Time left',
      colorByThreshold: true,
      thresholds: EXPIRY_STEPS,
      targets: [{ expr: `couchbase_node_certificate_not_after_timestamp_seconds{${CL}} - time()` }],
    },
    {
      type: 'table',
      title: 'Node certificate chains',
      description: 'Time left for every certificate of each node\'s PEM chain (position 0 is the node certificate, then its issuers).',
      unit: 's',
      valueName: 'Time left',
      colorByThreshold: true,
      thresholds: EXPIRY_STEPS,
      targets: [{ expr: `couchbase_node_certificate_chain_not_after_timestamp_seconds{${CL}} - time()` }],
    },
    {
      type: 'timeseries',
      title: 'Days left, soonest per cluster',
      description: 'Days until the soonest expiry of a trusted CA and of a node certificate chain, per cluster.',
      unit: 'd',
      thresholds: [{ color: 'red', value: null }, { color: 'orange', value: 7 }, { color: 'green', value: 28 }],
      targets: [
        { expr: `(min by (couchbase_cluster) (couchbase_trusted_ca_not_after_timestamp_seconds{${CL}}) - time()) / ${DAY}`, legendFormat: '{{couchbase_cluster}} trusted CA' },
        { expr: `(min by (couchbase_cluster) (couchbase_node_certificate_earliest_not_after_timestamp_seconds{${CL}}) - time()) / ${DAY}`, legendFormat: '{{couchbase_cluster}} node chain' },
      ],
    },
    {
      type: 'bargauge',
      title: 'Certificate warnings',
      description: 'Warnings Couchbase reports per trusted CA and node certificate (self-signed, not signed by a cluster CA, expiring…).',
      unit: 'none',
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
      targets: [
        { expr: `sum by (couchbase_cluster, subject) (couchbase_trusted_ca_warnings{${CL}})`, legendFormat: 'CA {{subject}}' },
        { expr: `sum by (couchbase_cluster, node) (couchbase_node_certificate_warnings{${CL}})`, legendFormat: 'node {{node}}' },
      ],
    },
    { row: 'TLS and console' },
    {
      type: 'table',
      title: 'TLS minimum version',
      description: 'The minimum TLS version accepted, cluster-wide (service="global") and effective per service. tlsv1 and tlsv1.1 are weak.',
      unit: 'none',
      valueName: 'Active',
      hideColumns: [],
      targets: [{ expr: `couchbase_security_tls_min_version{${CL}} == 1` }],
      w: 12,
    },
    {
      type: 'table',
      title: 'Cipher order honoured',
      description: 'Whether the server\'s cipher-suite order is preferred over the client\'s, per service.',
      unit: 'none',
      valueName: 'Honoured',
      colorByThreshold: true,
      mappings: ON_OFF_GOOD,
      thresholds: [{ color: 'orange', value: null }, { color: 'green', value: 1 }],
      targets: [{ expr: `couchbase_security_honor_cipher_order{${CL}}` }],
      w: 12,
    },
    {
      type: 'stat',
      title: 'Console over plain http disabled',
      description: 'Whether the web console is disabled over plain http (disableUIOverHttp). Off means credentials may travel unencrypted.',
      unit: 'none',
      colorByThreshold: true,
      mappings: ON_OFF_GOOD,
      thresholds: [{ color: 'orange', value: null }, { color: 'green', value: 1 }],
      targets: [{ expr: `couchbase_security_ui_over_http_disabled{${CL}}`, legendFormat: '{{couchbase_cluster}}' }],
    },
    {
      type: 'stat',
      title: 'Node-to-node encryption',
      description: 'Node-to-node encryption level (control, all, strict); "off" when encryption is off.',
      unit: 'none',
      noValue: OFF,
      targets: [{ expr: `couchbase_security_cluster_encryption_level{${CL}} == 1`, legendFormat: '{{couchbase_cluster}} {{level}}' }],
    },
    { row: 'LDAP' },
    {
      type: 'stat',
      title: 'LDAP authentication',
      description: 'Whether LDAP authenticates users.',
      unit: 'none',
      mappings: [
        { value: '1', text: 'on', color: 'blue' },
        { value: '0', text: 'off', color: 'text' },
      ],
      targets: [{ expr: `couchbase_ldap_authentication_enabled{${CL}}`, legendFormat: '{{couchbase_cluster}}' }],
    },
    {
      type: 'stat',
      title: 'LDAP encryption',
      description: 'Encryption to the LDAP servers: starttls, tls or none. none sends bind credentials in clear.',
      unit: 'none',
      targets: [{ expr: `couchbase_ldap_encryption{${CL}} == 1`, legendFormat: '{{couchbase_cluster}} {{encryption}}' }],
    },
    {
      type: 'stat',
      title: 'LDAP server certificate validation',
      description: 'Whether the LDAP server certificate is validated. Off allows a man in the middle.',
      unit: 'none',
      colorByThreshold: true,
      mappings: ON_OFF_GOOD,
      thresholds: [{ color: 'orange', value: null }, { color: 'green', value: 1 }],
      targets: [{ expr: `couchbase_ldap_server_cert_validation{${CL}}`, legendFormat: '{{couchbase_cluster}}' }],
    },
    {
      type: 'stat',
      title: 'Plain private-key passphrases',
      description: 'Nodes whose certificate key passphrase is registered as plain text (meant for pre-production only).',
      unit: 'none',
      colorByThreshold: true,
      mappings: ON_OFF_BAD,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
      targets: [{ expr: `sum(couchbase_node_certificate_plain_passphrase{${CL}})` }],
    },
  ],
};

const nodes: DashboardSpec = {
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

const INDEX_VAR: VariableSpec = {
  name: 'index',
  label: 'Index',
  query: 'label_values(couchbase_search_active_queries{couchbase_cluster=~"$couchbase_cluster"}, index)',
  multi: true,
};
const CLI = `${CL}, index=~"$index"`;

const search: DashboardSpec = {
  uid: 'cbwatch-search',
  title: 'Couchbase / Search',
  description: 'Full-text search: active queries per index and node, the longest-running query, slow queries over the configured threshold, and what the runaway-query cancel policy did.',
  tags: ['couchbase', 'search'],
  variables: [CLUSTER_VAR, INDEX_VAR],
  items: [
    {
      type: 'stat',
      title: 'Active queries',
      description: 'Active search queries in the whole cluster, as the Search service counts them.',
      unit: 'none',
      targets: [{ expr: `sum(couchbase_search_total_active_queries{${CL}})` }],
    },
    {
      type: 'stat',
      title: 'Slow queries',
      description: 'Active queries running longer than the slow-query threshold, over the selected indexes.',
      unit: 'none',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
      targets: [{ expr: `sum(couchbase_search_slow_queries{${CLI}}) or vector(0)` }],
    },
    {
      type: 'stat',
      title: 'Longest running query',
      description: 'Execution time of the longest-running active query over the selected indexes.',
      unit: 's',
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 10 }, { color: 'red', value: 60 }],
      colorByThreshold: true,
      targets: [{ expr: `max(couchbase_search_active_query_max_duration_seconds{${CLI}}) or vector(0)` }],
    },
    {
      type: 'stat',
      title: 'Slow-query threshold',
      description: 'The threshold the search collector uses (its slow_query_threshold option).',
      unit: 's',
      targets: [{ expr: `max(couchbase_search_slow_query_threshold_seconds{${CL}})` }],
    },
    {
      type: 'timeseries',
      title: 'Active queries per index',
      description: 'Active search queries per index.',
      unit: 'short',
      targets: [{ expr: `couchbase_search_active_queries{${CLI}}`, legendFormat: '{{index}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Slow queries per index',
      description: 'Active queries per index running longer than the slow-query threshold.',
      unit: 'short',
      targets: [{ expr: `couchbase_search_slow_queries{${CLI}}`, legendFormat: '{{index}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Longest running query per index',
      description: 'Execution time of the longest-running active query per index; no line when none runs.',
      unit: 's',
      targets: [{ expr: `couchbase_search_active_query_max_duration_seconds{${CLI}}`, legendFormat: '{{index}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Active queries per node',
      description: 'Active search queries per Search node (node is host:port, node_uuid the uuid from the query keys; a node the node list does not know shows its uuid as node).',
      unit: 'short',
      targets: [{ expr: `couchbase_search_node_active_queries{${CL}}`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
    },
    {
      type: 'timeseries',
      title: 'Cancel policy actions',
      description: 'Runaway queries the opt-in cancel policy acted on, per result (cancelled, dry_run, failed, forbidden, not_found), per minute.',
      unit: 'short',
      w: 24,
      noValue: 'off (or nothing to cancel)',
      targets: [{ expr: `sum by (couchbase_cluster, index, result) (increase(couchbase_search_queries_cancelled_total{${CLI}}[$__rate_interval]))`, legendFormat: '{{result}} {{index}}' }],
    },
  ],
};

const exporter: DashboardSpec = {
  uid: 'cbwatch-exporter',
  title: 'Couchbase / cbwatch',
  description: 'The exporter itself: per collector success, poll duration and staleness, the requests it makes to Couchbase by endpoint and status code, and the Sync Gateway webhooks it receives.',
  tags: ['exporter'],
  variables: [CLUSTER_VAR],
  time: 'now-3h',
  items: [
    { row: 'Collectors' },
    {
      type: 'state-timeline',
      title: 'Collector success',
      description: 'Whether each collector\'s latest poll succeeded. A failed collector drops its series until it succeeds again.',
      unit: 'none',
      mappings: OK_FAIL,
      thresholds: [{ color: 'red', value: null }, { color: 'green', value: 1 }],
      targets: [{ expr: `cbwatch_collector_success{${CL}}`, legendFormat: '{{couchbase_cluster}} {{collector}}' }],
    },
    {
      type: 'timeseries',
      title: 'Poll duration',
      description: 'Wall time of each collector\'s latest poll. Close to the interval means the collector is about to miss polls.',
      unit: 's',
      targets: [{ expr: `cbwatch_collector_duration_seconds{${CL}}`, legendFormat: '{{couchbase_cluster}} {{collector}}' }],
    },
    {
      type: 'timeseries',
      title: 'Staleness',
      description: 'Time since each collector last succeeded. It saw-tooths up to the collector\'s interval; a line that keeps climbing is a stuck or failing collector.',
      unit: 's',
      thresholds: [{ color: 'green', value: null }, { color: 'red', value: 900 }],
      targets: [{ expr: `time() - cbwatch_collector_last_success_timestamp_seconds{${CL}}`, legendFormat: '{{couchbase_cluster}} {{collector}}' }],
    },
    {
      type: 'timeseries',
      title: 'Series per collector',
      description: 'Series each collector produced in its latest poll.',
      unit: 'short',
      targets: [{ expr: `cbwatch_collector_series{${CL}}`, legendFormat: '{{couchbase_cluster}} {{collector}}' }],
    },
    {
      type: 'timeseries',
      title: 'Requests per poll',
      description: 'Requests the latest poll of each collector made to Couchbase (XDCR costs one request per replication and stat).',
      unit: 'short',
      targets: [{ expr: `cbwatch_collector_requests{${CL}}`, legendFormat: '{{couchbase_cluster}} {{collector}}' }],
    },
    {
      type: 'table',
      title: 'Skipped items',
      description: 'Items the latest poll skipped because they did not parse or no longer exist, by reason (details at debug log level).',
      unit: 'short',
      valueName: 'Skipped',
      targets: [{ expr: `cbwatch_collector_skipped_items{${CL}} > 0` }],
      w: 12,
    },
    {
      type: 'table',
      title: 'Collectors not applicable',
      description: 'Collectors that do not apply to a cluster (e.g. no Search or Backup service): they succeed with no series.',
      unit: 'none',
      valueName: 'Applicable',
      targets: [{ expr: `cbwatch_collector_applicable{${CL}} == 0` }],
      w: 12,
    },
    { row: 'Requests to Couchbase' },
    {
      type: 'timeseries',
      title: 'Requests by endpoint',
      description: 'Requests per second to Couchbase per route template.',
      unit: 'reqps',
      targets: [{ expr: `sum by (endpoint) (rate(cbwatch_couchbase_requests_total{${CL}}[$__rate_interval]))`, legendFormat: '{{endpoint}}' }],
    },
    {
      type: 'timeseries',
      title: 'Requests by status code',
      description: 'Requests per second to Couchbase per status code (or timeout, network, aborted, too_large).',
      unit: 'reqps',
      targets: [{ expr: `sum by (code) (rate(cbwatch_couchbase_requests_total{${CL}}[$__rate_interval]))`, legendFormat: '{{code}}' }],
    },
    {
      type: 'timeseries',
      title: 'Failed requests by endpoint',
      description: 'Requests per second that did not answer 2xx, per route template and code.',
      unit: 'reqps',
      targets: [{ expr: `sum by (endpoint, code) (rate(cbwatch_couchbase_requests_total{${CL}, code!~"2.."}[$__rate_interval]))`, legendFormat: '{{endpoint}} {{code}}' }],
    },
    {
      type: 'timeseries',
      title: 'Request latency p90',
      description: '90th percentile latency of requests to Couchbase per route template.',
      unit: 's',
      targets: [{ expr: `histogram_quantile(0.9, sum by (endpoint, le) (rate(cbwatch_couchbase_request_duration_seconds_bucket{${CL}}[$__rate_interval])))`, legendFormat: '{{endpoint}}' }],
    },
    { row: 'Requests served (not per cluster)' },
    {
      type: 'timeseries',
      title: 'Requests served by handler and code',
      description: 'HTTP requests per second this exporter answered, per route template (the telemetry path counts the scrapes) and status code; 401, 429 and 503 are refusals (basic auth, rate limit, too many requests in flight).',
      unit: 'reqps',
      targets: [{ expr: 'sum by (handler, code) (rate(cbwatch_http_requests_served_total[$__rate_interval]))', legendFormat: '{{handler}} {{code}}' }],
      w: 24,
    },
    { row: 'Sync Gateway webhooks (not per cluster)' },
    {
      type: 'timeseries',
      title: 'Webhook documents by result',
      description: 'Sync Gateway document_changed posts per second, per database and result: accepted, or why they were refused (bad_json, too_large, unauthorized, overloaded…).',
      unit: 'ops',
      noValue: 'off (receiver disabled) or no posts yet',
      targets: [{ expr: 'sum by (database, result) (rate(cbwatch_webhook_documents_total[$__rate_interval]))', legendFormat: '{{database}} {{result}}' }],
    },
    {
      type: 'timeseries',
      title: 'Webhook documents by type',
      description: 'Accepted documents per second by the value of the configured type field (type_field), per database.',
      unit: 'ops',
      noValue: 'off (receiver disabled) or no posts yet',
      targets: [{ expr: 'sum by (database, doc_type) (rate(cbwatch_webhook_document_types_total[$__rate_interval]))', legendFormat: '{{database}} {{doc_type}}' }],
    },
    {
      type: 'timeseries',
      title: 'Webhook bytes and deletions',
      description: 'Bytes of accepted document bodies per second, and accepted deletions per second, per database.',
      unit: 'Bps',
      noValue: 'off (receiver disabled) or no posts yet',
      targets: [
        { expr: 'sum by (database) (rate(cbwatch_webhook_body_bytes_total[$__rate_interval]))', legendFormat: 'bytes {{database}}' },
        { expr: 'sum by (database) (rate(cbwatch_webhook_deleted_documents_total[$__rate_interval]))', legendFormat: 'deletions/s {{database}}' },
      ],
    },
    {
      type: 'timeseries',
      title: 'Time since the last webhook document',
      description: 'Time since the receiver last accepted a document per database: a database that goes quiet may have lost its webhook.',
      unit: 's',
      noValue: 'off (receiver disabled) or no posts yet',
      targets: [{ expr: 'time() - cbwatch_webhook_last_document_timestamp_seconds', legendFormat: '{{database}}' }],
    },
    { row: 'Build' },
    {
      type: 'table',
      title: 'cbwatch versions',
      description: 'Running cbwatch instances with their version, revision and Node.js version.',
      unit: 'none',
      valueName: 'Instances',
      targets: [{ expr: 'count by (version, revision, nodejs_version) (cbwatch_build_info)' }],
      h: 5,
    },
  ],
};

/** Every dashboard, by file stem. */
export const DASHBOARDS: Readonly<Record<string, DashboardSpec>> = {
  'cbwatch-overview': overview,
  'cbwatch-buckets': buckets,
  'cbwatch-nodes': nodes,
  'cbwatch-xdcr': xdcr,
  'cbwatch-certificates': certificates,
  'cbwatch-search': search,
  'cbwatch-exporter': exporter,
};

/** Items of all dashboards (for tests that walk the specs rather than the JSON). */
export function allItems(): { dashboard: string; item: Item }[] {
  return Object.entries(DASHBOARDS).flatMap(([dashboard, d]) => d.items.map((item) => ({ dashboard, item })));
}

const PROVISIONING_HEADER = '# Generated by `npm run generate` (src/tools/gen-dashboards.ts). Copy and adapt.\n';

function datasourceProvisioning(): string {
  return (
    PROVISIONING_HEADER +
    '# Grafana data source provisioning: put this file in /etc/grafana/provisioning/datasources/.\n' +
    "# The dashboards pick their data source through their `datasource` variable, so any Prometheus works;\n" +
    '# timeInterval should match the scrape interval of the cbwatch job (it sets $__rate_interval).\n' +
    yamlText({
      apiVersion: 1,
      datasources: [
        {
          name: 'Prometheus',
          uid: 'prometheus',
          type: 'prometheus',
          access: 'proxy',
          url: 'http://prometheus:9090',
          isDefault: true,
          editable: false,
          jsonData: { timeInterval: '30s', httpMethod: 'POST' },
        },
      ],
    })
  );
}

function dashboardProvisioning(): string {
  return (
    PROVISIONING_HEADER +
    '# Grafana dashboard provisioning: put this file in /etc/grafana/provisioning/dashboards/ and the\n' +
    '# dashboards/*.json files of cbwatch in the directory named by options.path.\n' +
    yamlText({
      apiVersion: 1,
      providers: [
        {
          name: 'cbwatch',
          orgId: 1,
          folder: 'Couchbase',
          folderUid: 'cbwatch',
          type: 'file',
          disableDeletion: false,
          allowUiUpdates: false,
          updateIntervalSeconds: 60,
          options: { path: '/var/lib/grafana/dashboards/cbwatch', foldersFromFilesStructure: false },
        },
      ],
    })
  );
}

export function renderDashboards(): Files {
  const files: Files = {};
  for (const [stem, spec] of Object.entries(DASHBOARDS)) files[`dashboards/${stem}.json`] = jsonText(dashboardJson(spec));
  files['dashboards/provisioning/datasources/cbwatch-prometheus.yml'] = datasourceProvisioning();
  files['dashboards/provisioning/dashboards/cbwatch.yml'] = dashboardProvisioning();
  return files;
}
