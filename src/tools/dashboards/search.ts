/**
 * The Eventing & Search dashboard (`cbwatch-search`): full-text search queries running now per index and node and
 * what the runaway-query cancel policy did (the `search` collector), the statistics of every Search index and the
 * memory of every Search node (`search_index`), and the status and statistics of the Eventing functions
 * (`eventing`). It keeps the uid and file of the Search dashboard it grew from, so links, bookmarks and
 * provisioned copies of that dashboard keep working.
 */
import { CLUSTER_VAR } from '../grafana.js';
import type { DashboardSpec, VariableSpec } from '../grafana.js';
import { CL } from './shared.js';

/** Search indexes: those with statistics, and those with active queries (also when search_index is off). */
const INDEX_VAR: VariableSpec = {
  name: 'index',
  label: 'Search index',
  query: 'label_values({__name__=~"couchbase_search_index_docs|couchbase_search_active_queries", couchbase_cluster=~"$couchbase_cluster"}, index)',
  multi: true,
};
const FUNCTION_VAR: VariableSpec = {
  name: 'function',
  label: 'Function',
  query: 'label_values(couchbase_eventing_function_status{couchbase_cluster=~"$couchbase_cluster"}, function)',
  multi: true,
};
const CLI = `${CL}, index=~"$index"`;
const CLF = `${CL}, function=~"$function"`;
const INDEX_NODE_LEGEND = '{{bucket}} {{index}} on {{node}}';
const INDEX_LEGEND = '{{bucket}} {{index}} ({{couchbase_cluster}})';
const FUNCTION_LEGEND = '{{function}} ({{couchbase_cluster}})';
/** A running total of the eventing service as a per-second rate per function. */
const perSecond = (family: string): string => `sum by (couchbase_cluster, function) (rate(${family}{${CLF}}[$__rate_interval]))`;

export const search: DashboardSpec = {
  uid: 'cbwatch-search',
  title: 'Couchbase / Eventing & Search',
  description:
    'Full-text search: active queries per index and node, the longest-running query, slow queries over the configured threshold, what the runaway-query cancel policy did; per Search index documents, pending mutations, queries and errors, latency and disk size; Search node memory. Eventing: the status of every function, its DCP backlog, and its successes and failures.',
  tags: ['couchbase', 'search', 'eventing'],
  variables: [CLUSTER_VAR, INDEX_VAR, FUNCTION_VAR],
  items: [
    { row: 'Search queries running' },
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
    { row: 'Search indexes' },
    {
      type: 'timeseries',
      title: 'Documents per Search index',
      description: 'Documents in each Search index, per Search node holding its partitions.',
      unit: 'short',
      targets: [{ expr: `couchbase_search_index_docs{${CLI}}`, legendFormat: INDEX_NODE_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Mutations pending per Search index',
      description: 'Mutations not yet indexed by each Search index, per Search node. Growing means the index falls behind its bucket.',
      unit: 'short',
      targets: [{ expr: `couchbase_search_index_pending_mutations{${CLI}}`, legendFormat: INDEX_NODE_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Search queries and errors',
      description: 'Queries per second and queries that ended in an error per second, per Search index, summed over the Search nodes.',
      unit: 'reqps',
      targets: [
        { expr: `sum by (couchbase_cluster, bucket, index) (couchbase_search_index_queries_per_second{${CLI}})`, legendFormat: `queries ${INDEX_LEGEND}` },
        { expr: `sum by (couchbase_cluster, bucket, index) (couchbase_search_index_query_errors_per_second{${CLI}})`, legendFormat: `errors ${INDEX_LEGEND}` },
      ],
    },
    {
      type: 'timeseries',
      title: 'Search query latency',
      description: 'Mean time per query of each Search index on each Search node. No line while an index gets no query.',
      unit: 's',
      targets: [{ expr: `couchbase_search_index_query_latency_seconds{${CLI}}`, legendFormat: INDEX_NODE_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Disk size per Search index',
      description: 'Disk space used by each Search index, summed over the Search nodes.',
      unit: 'bytes',
      targets: [{ expr: `sum by (couchbase_cluster, bucket, index) (couchbase_search_index_disk_size_bytes{${CLI}})`, legendFormat: INDEX_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Search node memory',
      description: 'Memory used by the Search service on each Search node.',
      unit: 'bytes',
      targets: [{ expr: `couchbase_search_node_memory_bytes{${CL}}`, legendFormat: '{{node}} ({{couchbase_cluster}})' }],
    },
    { row: 'Eventing functions' },
    {
      type: 'stat',
      title: 'Functions',
      description: 'Eventing functions of the selected clusters, as the eventing service lists them.',
      unit: 'none',
      targets: [{ expr: `count(max by (couchbase_cluster, function, function_bucket, function_scope) (couchbase_eventing_function_status{${CLF}}))` }],
    },
    {
      type: 'stat',
      title: 'Functions not deployed',
      description: 'Selected functions whose status is not deployed: undeployed, deploying, undeploying, paused or pausing.',
      unit: 'none',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
      targets: [{ expr: `sum(couchbase_eventing_function_status{${CLF}, status!="deployed"})` }],
    },
    {
      type: 'stat',
      title: 'DCP backlog',
      description: 'Mutations the selected functions have yet to process, summed.',
      unit: 'short',
      targets: [{ expr: `sum(couchbase_eventing_dcp_backlog{${CLF}})` }],
    },
    {
      type: 'stat',
      title: 'Failures',
      description: 'Failures of the selected functions per second: handler failures on update and on delete, and timeouts.',
      unit: 'ops',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.01 }],
      targets: [
        {
          expr: `sum(rate(couchbase_eventing_on_update_failures_total{${CLF}}[$__rate_interval])) + sum(rate(couchbase_eventing_on_delete_failures_total{${CLF}}[$__rate_interval])) + sum(rate(couchbase_eventing_timeouts_total{${CLF}}[$__rate_interval]))`,
        },
      ],
    },
    {
      type: 'table',
      title: 'Function status',
      description: 'The status of every selected function: deployed, paused, undeployed, deploying, undeploying or pausing, with the bucket and scope it belongs to (7.0+).',
      unit: 'none',
      hideColumns: ['Value'],
      targets: [{ expr: `couchbase_eventing_function_status{${CLF}} == 1` }],
    },
    {
      type: 'timeseries',
      title: 'DCP backlog per function',
      description: 'Mutations each function has yet to process, summed over the eventing nodes. Only deployed functions have statistics: a paused function has none.',
      unit: 'short',
      targets: [{ expr: `couchbase_eventing_dcp_backlog{${CLF}}`, legendFormat: FUNCTION_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Successes per function',
      description: 'Handler calls per second that succeeded, on update and on delete, per function (from the running totals the service keeps).',
      unit: 'ops',
      targets: [
        { expr: perSecond('couchbase_eventing_on_update_success_total'), legendFormat: `on update ${FUNCTION_LEGEND}` },
        { expr: perSecond('couchbase_eventing_on_delete_success_total'), legendFormat: `on delete ${FUNCTION_LEGEND}` },
      ],
    },
    {
      type: 'timeseries',
      title: 'Failures per function',
      description: 'Handler calls per second that failed, on update and on delete, and handler timeouts, per function (from the running totals the service keeps).',
      unit: 'ops',
      targets: [
        { expr: perSecond('couchbase_eventing_on_update_failures_total'), legendFormat: `on update ${FUNCTION_LEGEND}` },
        { expr: perSecond('couchbase_eventing_on_delete_failures_total'), legendFormat: `on delete ${FUNCTION_LEGEND}` },
        { expr: perSecond('couchbase_eventing_timeouts_total'), legendFormat: `timeouts ${FUNCTION_LEGEND}` },
      ],
    },
  ],
};
