/**
 * The XDCR dashboard (`cbwatch-xdcr`): cross datacenter replication, selected down to one replication and
 * source node.
 */
import { BUCKET_VAR, CLUSTER_VAR } from '../grafana.js';
import type { DashboardSpec, VariableSpec } from '../grafana.js';
import { CL, XRR, XRN, REPL } from './shared.js';

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

export const xdcr: DashboardSpec = {
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
