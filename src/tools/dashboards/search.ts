/**
 * The Search dashboard (`cbwatch-search`): full-text search queries per index and node, and what the
 * runaway-query cancel policy did.
 */
import { CLUSTER_VAR } from '../grafana.js';
import type { DashboardSpec, VariableSpec } from '../grafana.js';
import { CL } from './shared.js';

const INDEX_VAR: VariableSpec = {
  name: 'index',
  label: 'Index',
  query: 'label_values(couchbase_search_active_queries{couchbase_cluster=~"$couchbase_cluster"}, index)',
  multi: true,
};
const CLI = `${CL}, index=~"$index"`;

export const search: DashboardSpec = {
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
