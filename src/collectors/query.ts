/**
 * Collector `query`: the Query service (N1QL), per query node (label `node`).
 *
 * 7.0+: the range API's n1ql_* metrics of the query nodes, in the shared service request (src/stats/service-range.ts);
 * before 7.0 (and with `stats_source: envelope`): each query node's `@query` section,
 * GET /pools/default/buckets/@query/nodes/<host:port>/stats. Counters are per second since the previous poll; the
 * means per request (request time, service time, results, response bytes) are the ratio of the two counters'
 * increases over the same window, absent when no request completed (ns_server@7.6.2:src/menelaus_stats.erl computes
 * query_avg_req_time as request_time × 1e-9 / requests the same way). Timeouts, cancelled and prepared requests,
 * memory and load are served by 7.0+ only: absent before.
 *
 * A cluster where no node runs the Query service (`n1ql` in /pools/default's `services`) is not applicable: no
 * request, no error.
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef } from '../metrics/family.js';
import { addServiceFamilies } from '../stats/service-families.js';
import type { ServiceFamily } from '../stats/service-families.js';
import { declareServiceStats, serviceValues } from '../stats/service-values.js';
import type { ServiceStatRow } from '../stats/service-values.js';
import type { Collector } from './types.js';

const C = 'query';
const NODE = ['node'] as const;
const SRC = 'Source: n1ql_* of the range API (7.0+), the @query section per node (before 7.0)';

/** A counter's rows: `query_<x>` in the envelope (per second), `n1ql_<x>` native. */
const rate = (x: string, o: Partial<ServiceStatRow> = {}): ServiceStatRow => ({ stat: `query_${x}`, kind: 'rate', native: `n1ql_${x}`, ...o });
/** A mean per request of a counter: its increase over the requests' increase. */
const perRequest = (stat: string, x: string, scale = 1): ServiceStatRow => ({ stat, kind: 'mean_of_two', native: `n1ql_${x}`, legacy: `query_${x}`, per: { legacy: 'query_requests', native: 'n1ql_requests' }, scale });

/** The duration bands of the slow-request counters: the counter's suffix and the `over` label (seconds). */
export const QUERY_BANDS = [
  ['250ms', '0.25'],
  ['500ms', '0.5'],
  ['1000ms', '1'],
  ['5000ms', '5'],
] as const;

/**
 * The Query service's stats (ns_server@6.6.5:src/query_stats_collector.erl Q_GAUGES and Q_COUNTERS;
 * ns_server@7.6.2:src/stat_names_mappings.erl maps `query_<x>` to rate(n1ql_<x>) but for the two gauges).
 */
export const QUERY_STATS = declareServiceStats({
  id: 'query',
  collector: 'query',
  service: 'n1ql',
  itemLabels: [],
  perNode: true,
  rows: [
    rate('requests'),
    rate('errors'),
    rate('invalid_requests'),
    rate('warnings'),
    rate('selects'),
    ...QUERY_BANDS.map(([b]) => rate(`requests_${b}`)),
    perRequest('query_avg_req_time', 'request_time', 1e-9),
    perRequest('query_avg_svc_time', 'service_time', 1e-9),
    perRequest('query_avg_result_count', 'result_count'),
    perRequest('query_avg_response_size', 'result_size'),
    { stat: 'query_active_requests', kind: 'level', native: 'n1ql_active_requests' },
    { stat: 'query_queued_requests', kind: 'level', native: 'n1ql_queued_requests' },
    // 7.0+ only: no legacy stat.
    rate('timeouts', { legacy: null }),
    rate('cancelled', { legacy: null }),
    rate('prepared', { legacy: null }),
    { stat: 'query_node_memory', kind: 'level', native: 'n1ql_node_memory', legacy: null },
    { stat: 'query_load', kind: 'level', native: 'n1ql_load', legacy: null },
  ],
  envelope: { sections: ['query'] },
});

const g = (name: string, help: string, unit: string, labels: readonly string[] = NODE): FamilyDef => defineFamily(C, name, 'gauge', `${help}. ${SRC}.`, labels, unit);
const seven = 'served by Couchbase 7.0+ only, absent before 7.0';

export const F = {
  requests: g('couchbase_query_requests_per_second', 'Requests completed per second on the query node since the previous poll', 'per_second'),
  errors: g('couchbase_query_errors_per_second', 'Requests that ended in an error, per second since the previous poll', 'per_second'),
  invalid: g('couchbase_query_invalid_requests_per_second', 'Requests refused as invalid, per second since the previous poll', 'per_second'),
  warnings: g('couchbase_query_warnings_per_second', 'Requests that ended with a warning, per second since the previous poll', 'per_second'),
  selects: g('couchbase_query_selects_per_second', 'SELECT requests per second since the previous poll', 'per_second'),
  slow: g('couchbase_query_slow_requests_per_second', 'Requests that took longer than `over` seconds (0.25, 0.5, 1, 5), per second since the previous poll', 'per_second', [...NODE, 'over']),
  requestTime: g('couchbase_query_request_time_seconds', 'Mean request time of the requests completed since the previous poll, seconds; absent when none completed', 'seconds'),
  serviceTime: g('couchbase_query_service_time_seconds', 'Mean service (execution) time of the requests completed since the previous poll, seconds; absent when none completed', 'seconds'),
  results: g('couchbase_query_results_per_request', 'Mean result count per request completed since the previous poll; absent when none completed', 'count'),
  responseBytes: g('couchbase_query_response_bytes_per_request', 'Mean response size per request completed since the previous poll, bytes; absent when none completed', 'bytes'),
  active: g('couchbase_query_active_requests', 'Requests running on the query node now', 'count'),
  queued: g('couchbase_query_queued_requests', 'Requests queued on the query node now', 'count'),
  timeouts: g('couchbase_query_timeouts_per_second', `Requests that timed out, per second since the previous poll; ${seven}`, 'per_second'),
  cancelled: g('couchbase_query_cancelled_per_second', `Requests cancelled, per second since the previous poll; ${seven}`, 'per_second'),
  prepared: g('couchbase_query_prepared_per_second', `Prepared-statement executions per second since the previous poll; ${seven}`, 'per_second'),
  memory: g('couchbase_query_memory_bytes', `Memory the query service uses on the node, bytes (n1ql_node_memory); ${seven}`, 'bytes'),
  load: g('couchbase_query_load', `Load of the query service on the node (n1ql_load); ${seven}`, ''),
} as const satisfies Record<string, FamilyDef>;

/** Each family's stat. */
export const QUERY_FAMILIES: readonly ServiceFamily[] = [
  { def: F.requests, stat: 'query_requests' },
  { def: F.errors, stat: 'query_errors' },
  { def: F.invalid, stat: 'query_invalid_requests' },
  { def: F.warnings, stat: 'query_warnings' },
  { def: F.selects, stat: 'query_selects' },
  ...QUERY_BANDS.map(([b, over]) => ({ def: F.slow, stat: `query_requests_${b}`, labels: { over } })),
  { def: F.requestTime, stat: 'query_avg_req_time' },
  { def: F.serviceTime, stat: 'query_avg_svc_time' },
  { def: F.results, stat: 'query_avg_result_count' },
  { def: F.responseBytes, stat: 'query_avg_response_size' },
  { def: F.active, stat: 'query_active_requests' },
  { def: F.queued, stat: 'query_queued_requests' },
  { def: F.timeouts, stat: 'query_timeouts' },
  { def: F.cancelled, stat: 'query_cancelled' },
  { def: F.prepared, stat: 'query_prepared' },
  { def: F.memory, stat: 'query_node_memory' },
  { def: F.load, stat: 'query_load' },
];

/** Node-level labels: the node is the set's key. */
export const nodeLabels = (_parts: readonly string[], set: string): { node: string } => ({ node: set });

export const queryCollector: Collector<'query'> = {
  name: 'query',
  defaultInterval: 30_000,
  families: Object.values(F),
  role: 'Read-Only Admin (ro_admin), or any role that may read the statistics of at least one bucket',
  description: 'Query service, per query node: requests, errors, invalid requests, warnings and selects per second, requests over 0.25/0.5/1/5 s, mean request and service time, results and bytes per request, active and queued requests; on 7.0+ also timeouts, cancelled and prepared requests, memory and load.',
  async collect(ctx) {
    const values = await serviceValues(ctx, QUERY_STATS);
    if (values !== undefined) addServiceFamilies(ctx.out, values, QUERY_FAMILIES, nodeLabels);
  },
};
