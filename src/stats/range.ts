/**
 * The range source: statistics of Couchbase 7.0+ from `POST /pools/default/stats/range`. range-source.ts turns a
 * poll's answers into the neutral values (values.ts) that the collectors map, as the envelope source does. Its parts,
 * by role:
 * - range-plan.ts: the window, the sample budget, the queries and their batches;
 * - range-fetch.ts: a poll (fetchRange): the requests, their timeouts and failures, the state kept between polls;
 * - range-nodes.ts: the nodes asked, the nodes missing from the answers, the answers' errors as item errors;
 * - range-grouping.ts: a request's body read query by query and grouped by item and node (AnswerGrouping);
 * - range-reader.ts: one query's answer read from the request's text (with range-interner.ts and json-cursor.ts);
 *   range-tree.ts: the same from JSON.parse's tree, where that reader gives up; range-limits.ts: the bounds on what
 *   an answer may make the exporter keep;
 * - range-groups.ts, row-values.ts and range-values.ts: the rows' parts per item and node, each row's value, and
 *   each series' value.
 * This module gathers their exports under one name.
 */
export { activeBucketNodes, gapsNote, missingNodes, reportRangeErrors, STATS_NODES_MAX_AGE_MS, statsNodes } from './range-nodes.js';
export { fetchRange, MAX_400_TEXT, RANGE_PERMISSION, RANGE_STATE_KEY, rangeStateOf, RangeForbiddenError, RangeUnavailableError, RETRY_NODES_MS, serverTimeoutMs, STATS_RANGE_ROUTE, TIMEOUT_SHARE } from './range-fetch.js';
export type { RangeFetch, RangeState } from './range-fetch.js';
export { AnswerGrouping, groupAnswers, groupSeries, keepShapes, kvItemOf, shapesKept, StagedRequest, stagedRequestSchema, xdcrItemOf } from './range-grouping.js';
export type { RawAnswer } from './range-grouping.js';
export {
  aggregatedMetrics,
  answerWeight,
  balancedBatches,
  buildQueries,
  DESIGN_ITEMS,
  impliedMatchers,
  KV_MISS_OPS,
  MAX_FUTURE_SKEW_MS,
  MAX_QUERIES_PER_REQUEST,
  MAX_WINDOW_SECONDS,
  maxWindowSeconds,
  narrowing,
  newestOnlyMetrics,
  perNodeMetrics,
  planPoll,
  QUERY_MAX_SAMPLES,
  RANGE_SLACK_SECONDS,
  RANGE_STEP_SECONDS,
  rangeWindow,
  SAMPLE_BUDGET,
  seriesPerItem,
  summableMetrics,
  UNNARROWED_DCP_TYPES,
} from './range-plan.js';
export type { PollPlan, QueryOptions, RangeQuery } from './range-plan.js';
export { parseQueryAnswer } from './range-tree.js';
export type { QueryResult, RangeSeries } from './range-tree.js';
