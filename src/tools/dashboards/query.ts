/**
 * The Query dashboard (`cbwatch-query`): the query service (N1QL) per query node, as the `query` collector
 * exports it: request, error and invalid-request rates, mean request and service time, the share of requests
 * slower than 250 ms, 500 ms, 1 s and 5 s, active and queued requests, results and bytes per request, and the
 * figures only 7.0+ serves (timeouts, cancelled, prepared, memory, load).
 */
import { CLUSTER_VAR } from '../grafana.js';
import type { DashboardSpec, VariableSpec } from '../grafana.js';
import { CLN } from './shared.js';

const NODE_VAR: VariableSpec = {
  name: 'node',
  label: 'Query node',
  query: 'label_values(couchbase_query_active_requests{couchbase_cluster=~"$couchbase_cluster"}, node)',
  multi: true,
};

const BY_NODE = 'couchbase_cluster, node';
const NODE_LEGEND = '{{node}} ({{couchbase_cluster}})';
/** Shown by the panels of families the server serves from 7.0 on only. */
const ONLY_7X = 'absent (served from Couchbase 7.0 on)';

/**
 * Share of requests slower than `over` seconds: the band's rate over the request rate, per node (the bands are
 * cumulative: a request over 5 s is counted in every band). No line while a node serves no request.
 */
const slowShare = (over: string, by: string): string =>
  `sum by (${by}) (couchbase_query_slow_requests_per_second{${CLN}, over="${over}"})\n/ (sum by (${by}) (couchbase_query_requests_per_second{${CLN}}) > 0)`;

export const query: DashboardSpec = {
  uid: 'cbwatch-query',
  title: 'Couchbase / Query',
  description:
    'The query service (N1QL) per query node: requests, errors and invalid requests per second, mean request and service time, the share of requests over 250 ms, 500 ms, 1 s and 5 s, active and queued requests, results and bytes per request; on 7.0+ also timeouts, cancelled and prepared requests, memory and load.',
  tags: ['couchbase', 'query'],
  variables: [CLUSTER_VAR, NODE_VAR],
  items: [
    { row: 'Requests' },
    {
      type: 'stat',
      title: 'Requests',
      description: 'Query requests per second over the selected query nodes.',
      unit: 'reqps',
      targets: [{ expr: `sum(couchbase_query_requests_per_second{${CLN}})` }],
    },
    {
      type: 'stat',
      title: 'Errors',
      description: 'Query requests that ended in an error, per second, over the selected query nodes.',
      unit: 'reqps',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.1 }, { color: 'red', value: 1 }],
      targets: [{ expr: `sum(couchbase_query_errors_per_second{${CLN}})` }],
    },
    {
      type: 'stat',
      title: 'Requests over 5 s',
      description: 'Share of the query requests of the selected nodes that took longer than 5 seconds.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 0.01 }, { color: 'red', value: 0.05 }],
      noValue: 'no request',
      targets: [{ expr: slowShare('5', 'couchbase_cluster') }],
    },
    {
      type: 'stat',
      title: 'Queued requests',
      description: 'Query requests waiting for a free worker on the selected query nodes.',
      unit: 'none',
      colorByThreshold: true,
      thresholds: [{ color: 'green', value: null }, { color: 'orange', value: 1 }, { color: 'red', value: 50 }],
      targets: [{ expr: `sum(couchbase_query_queued_requests{${CLN}})` }],
    },
    {
      type: 'timeseries',
      title: 'Requests per node',
      description: 'Query requests per second per query node, and the SELECT statements among them.',
      unit: 'reqps',
      targets: [
        { expr: `couchbase_query_requests_per_second{${CLN}}`, legendFormat: `requests ${NODE_LEGEND}` },
        { expr: `couchbase_query_selects_per_second{${CLN}}`, legendFormat: `selects ${NODE_LEGEND}` },
      ],
    },
    {
      type: 'timeseries',
      title: 'Errors, invalid requests and warnings',
      description: 'Per query node, per second: requests that ended in an error, requests the service refused as invalid, and warnings returned.',
      unit: 'reqps',
      targets: [
        { expr: `couchbase_query_errors_per_second{${CLN}}`, legendFormat: `errors ${NODE_LEGEND}` },
        { expr: `couchbase_query_invalid_requests_per_second{${CLN}}`, legendFormat: `invalid ${NODE_LEGEND}` },
        { expr: `couchbase_query_warnings_per_second{${CLN}}`, legendFormat: `warnings ${NODE_LEGEND}` },
      ],
    },
    { row: 'Latency' },
    {
      type: 'timeseries',
      title: 'Request and service time',
      description:
        'Mean time per request on each query node: request time (from receipt to the last result sent) and service time (executing). No line while a node serves no request.',
      unit: 's',
      targets: [
        { expr: `couchbase_query_request_time_seconds{${CLN}}`, legendFormat: `request ${NODE_LEGEND}` },
        { expr: `couchbase_query_service_time_seconds{${CLN}}`, legendFormat: `service ${NODE_LEGEND}` },
      ],
    },
    {
      type: 'timeseries',
      title: 'Share of requests over 250 ms, 500 ms, 1 s and 5 s',
      description:
        'Per query node, the share of its requests that took longer than each duration (a request over 5 s is counted in every band). No line while a node serves no request.',
      unit: 'percentunit',
      min: 0,
      max: 1,
      targets: [
        { expr: slowShare('0.25', BY_NODE), legendFormat: `over 250 ms ${NODE_LEGEND}` },
        { expr: slowShare('0.5', BY_NODE), legendFormat: `over 500 ms ${NODE_LEGEND}` },
        { expr: slowShare('1', BY_NODE), legendFormat: `over 1 s ${NODE_LEGEND}` },
        { expr: slowShare('5', BY_NODE), legendFormat: `over 5 s ${NODE_LEGEND}` },
      ],
    },
    {
      type: 'timeseries',
      title: 'Active and queued requests',
      description: 'Per query node: requests being executed and requests waiting for a free worker.',
      unit: 'short',
      targets: [
        { expr: `couchbase_query_active_requests{${CLN}}`, legendFormat: `active ${NODE_LEGEND}` },
        { expr: `couchbase_query_queued_requests{${CLN}}`, legendFormat: `queued ${NODE_LEGEND}` },
      ],
    },
    {
      type: 'timeseries',
      title: 'Requests slower than 5 s',
      description: 'Per query node, requests per second that took longer than 5 seconds.',
      unit: 'reqps',
      targets: [{ expr: `couchbase_query_slow_requests_per_second{${CLN}, over="5"}`, legendFormat: NODE_LEGEND }],
    },
    { row: 'Results' },
    {
      type: 'timeseries',
      title: 'Results per request',
      description: 'Mean number of result documents returned per request, per query node. No line while a node serves no request.',
      unit: 'short',
      targets: [{ expr: `couchbase_query_results_per_request{${CLN}}`, legendFormat: NODE_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Response size per request',
      description: 'Mean size of the results returned per request, per query node. No line while a node serves no request.',
      unit: 'bytes',
      targets: [{ expr: `couchbase_query_response_bytes_per_request{${CLN}}`, legendFormat: NODE_LEGEND }],
    },
    { row: 'Couchbase 7.0 and later' },
    {
      type: 'timeseries',
      title: 'Timeouts, cancelled and prepared',
      description: 'Per query node, per second: requests that timed out, requests cancelled, and prepared statements executed. Served from Couchbase 7.0 on; absent before.',
      unit: 'reqps',
      noValue: ONLY_7X,
      targets: [
        { expr: `couchbase_query_timeouts_per_second{${CLN}}`, legendFormat: `timeouts ${NODE_LEGEND}` },
        { expr: `couchbase_query_cancelled_per_second{${CLN}}`, legendFormat: `cancelled ${NODE_LEGEND}` },
        { expr: `couchbase_query_prepared_per_second{${CLN}}`, legendFormat: `prepared ${NODE_LEGEND}` },
      ],
    },
    {
      type: 'timeseries',
      title: 'Memory',
      description: 'Memory in use by the query service on each query node (n1ql_node_memory). Served from Couchbase 7.6 on; absent before.',
      unit: 'bytes',
      noValue: 'absent (served from Couchbase 7.6 on)',
      targets: [{ expr: `couchbase_query_memory_bytes{${CLN}}`, legendFormat: NODE_LEGEND }],
    },
    {
      type: 'timeseries',
      title: 'Load',
      description: 'Utilization of the servicers of each query node as the service reports it (n1ql_load): 0 when none is busy, 100 when all are, above 100 when requests queue. Served from Couchbase 7.0 on; absent before.',
      unit: 'short',
      noValue: ONLY_7X,
      w: 24,
      targets: [{ expr: `couchbase_query_load{${CLN}}`, legendFormat: NODE_LEGEND }],
    },
  ],
};
