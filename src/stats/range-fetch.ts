/**
 * One poll of the range source: the poll's plan (range-plan.ts) asked batch after batch of `POST
 * /pools/default/stats/range`, each answer grouped as soon as it is read (range-grouping.ts), and what the poll
 * could not read reported.
 *
 * Each request asks only the active data nodes (range-nodes.ts statsNodes; host statistics: every active node of any
 * service, clusterNodes, as ns_server sums them) and lets the server wait for them a share
 * of the poll's remaining time (serverTimeoutMs). A node that an `errors` entry names (down, slow past `timeout`) or
 * that answers no series of its own loses that node's values only: bucket-wide and XDCR values are the merge over
 * the nodes that answered, as ns_server's envelope merges its live bucket nodes, and the node is not asked again in
 * the poll's later requests. The gap is named once per node and poll: an item error, `ctx.out.statsGaps` and the
 * poll's note. An entry naming no node, or a request that fails, fails the metrics it carries (item errors); every
 * request failing fails the poll. 404 and 405 mean the cluster (or a proxy in front of it) does not offer the range
 * API (RangeUnavailableError, which `auto` answers by falling back to the envelopes, source.ts); 403 is a missing
 * permission (RangeForbiddenError).
 */
import { boundedText, CbwError } from '../errors.js';
import { MAX_GAP_NODES } from '../metrics/family.js';
import type { StatsGaps } from '../metrics/family.js';
import type { StatsContext } from './context.js';
import type { NativeMapRow } from './native-map.js';
import type { RangeItems } from './range-groups.js';
import { AnswerGrouping, keepShapes, stagedRequestSchema } from './range-grouping.js';
import type { RawAnswer } from './range-grouping.js';
import { clusterNodes, missingCode, missingNodes, NODE_DOWN, reportRangeErrors, statsNodes } from './range-nodes.js';
import { buildQueries, isHostMetric, MAX_FUTURE_SKEW_MS, planPoll } from './range-plan.js';
import { CounterMemo } from './counter-memo.js';

export const STATS_RANGE_ROUTE = '/pools/default/stats/range';

/** The endpoint is not there (404, 405): the cluster, or a proxy in front of it, does not offer it. */
export class RangeUnavailableError extends CbwError {
  readonly status: number;
  constructor(status: number) {
    super('CBW_ERR_HTTP', `POST ${STATS_RANGE_ROUTE} answered ${status}: the range API is not available on this cluster (or a proxy in front of it refuses it)`);
    this.status = status;
  }
}

/**
 * What the range API needs (menelaus_web_stats handle_range_post: 403 when the user may read the statistics of no
 * bucket, collection_perm: `{[{collection, [B, S, C]}, stats], read}`), and the roles that grant it.
 */
export const RANGE_PERMISSION = 'cluster.collection[<bucket>:.:.].stats!read on at least one bucket (role Read-Only Admin, or Data Monitoring / Bucket Admin on the buckets to watch)';

/**
 * The range API answered 403: the user lacks a permission, which is not "the range API is missing": the poll fails
 * naming it (no silent fallback to the envelopes, which would need the same permission). Read like a
 * ForbiddenError: `permissions` is what `cbwatch check` and the landing page show.
 */
export class RangeForbiddenError extends CbwError {
  readonly status = 403;
  readonly permissions: readonly string[] = [RANGE_PERMISSION];
  constructor() {
    super('CBW_ERR_FORBIDDEN', `POST ${STATS_RANGE_ROUTE} answered 403: forbidden (403): missing permission ${RANGE_PERMISSION}`);
  }
}

/** Longest 400 answer text logged (redacted first). */
export const MAX_400_TEXT = 300;

/** How long no `nodes` is sent after the server refused the list. */
export const RETRY_NODES_MS = 600_000;

/** What the range source remembers per collector between polls (in ctx.state under RANGE_STATE_KEY). */
export interface RangeState {
  readonly memo: CounterMemo;
  /**
   * When the previous poll started, on the poll's own clock (epoch ms): the next window starts at the instant after
   * it on the grid (rangeWindow). Never an upstream time: one node's point from the future must not move it.
   */
  lastPoll: number | undefined;
  /** Nodes already warned about for points in the future (once per node for the life of the collector). */
  readonly warnedFuture: Set<string>;
  /** Items (buckets, replications) the previous poll's answer held: the sample bound's multiplier. */
  items?: number;
  /** Until when (epoch ms) no `nodes` is sent, after the server refused the list (400). */
  noNodesUntil?: number;
  /** The last 400 text logged at warn (a repeat is logged at debug). */
  last400?: string;
  /** Each native metric's answer length in the previous poll (characters): how the next poll's batches are dealt. */
  readonly sizes: Map<string, number>;
  /** What the last poll could not read (for its note). */
  gaps?: StatsGaps | undefined;
  /** Nodes that answered series of their own in the previous poll, or have been missing since they did (missingNodes). */
  ownNodes?: ReadonlySet<string>;
}

/** NUL-prefixed: forgetGone keeps it. */
export const RANGE_STATE_KEY = '\u0000range';

export function rangeStateOf(state: Map<string, unknown>, key: string = RANGE_STATE_KEY): RangeState {
  let s = state.get(key) as RangeState | undefined;
  if (s === undefined) {
    s = { memo: new CounterMemo(), lastPoll: undefined, sizes: new Map(), warnedFuture: new Set() };
    state.set(key, s);
  }
  return s;
}

/** A poll's groups, and how many requests it made. */
export interface RangeFetch {
  readonly groups: RangeItems;
  /** Requests made. */
  readonly requests: number;
}

/** Share of the poll's remaining time a range request lets the server wait for its nodes (`timeout`). */
export const TIMEOUT_SHARE = 0.8;

/** The range API's bounds on `timeout` (menelaus_web_stats validators), ms. */
const MAX_SERVER_TIMEOUT_MS = 300_000;

/**
 * The `timeout` of a request sent now: TIMEOUT_SHARE of the poll's remaining time and of the client's own request
 * timeout, within the server's bounds. The server sends its headers at once and each query's answer as it has it
 * (menelaus_web_stats reply_with_chunked_json_array): a query held for a slow node is a pause in the body, which
 * the client's body timeout (`request_timeout`, 10 s by default) would end, failing the whole request. Pure.
 */
export function serverTimeoutMs(remainingMs: number, requestTimeoutMs: number = Number.POSITIVE_INFINITY): number {
  return Math.max(1, Math.min(MAX_SERVER_TIMEOUT_MS, Math.floor(TIMEOUT_SHARE * remainingMs), Math.floor(TIMEOUT_SHARE * requestTimeoutMs)));
}

/**
 * Ask the range API for every native metric of `rows`, in batches, and group the answers. Throws
 * RangeUnavailableError on 404/405, RangeForbiddenError on 403, and the first error when every request failed; a
 * request that fails when others did not costs its metrics (an item error each), never the poll.
 *
 * Partial answers: each request asks only the active data nodes (statsNodes; host metrics, isHostMetric: every
 * active node, clusterNodes) and lets the server wait for them
 * TIMEOUT_SHARE of the poll's remaining time (and of the request timeout: serverTimeoutMs). A node an `errors` entry
 * names (down: "Node is not available"; slow: "Request timed out"), or that answers nothing, leaves the bucket-wide
 * and XDCR values as the merge over the nodes that answered (range-groups.ts), as ns_server's envelope merges its
 * live bucket nodes. A node found down or slow is not asked again in this poll's later requests (as ns_server skips
 * its DownHosts within a request). The gap is named: one item error per node and poll, `ctx.out.statsGaps`
 * (cbwatch_stats_nodes_missing, the landing page) and the poll's note (`cbwatch check`).
 */
export async function fetchRange(
  ctx: StatsContext,
  rows: readonly NativeMapRow[],
  extra: Readonly<Record<string, string>>,
  itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
  sumOverNodes = false,
): Promise<RangeFetch> {
  keepShapes();
  const st = rangeStateOf(ctx.state);
  const now = ctx.now();
  const plan = planPoll(rows, { nowMs: now, lastPollMs: st.lastPoll, intervalMs: ctx.options.interval, items: st.items, sizes: st.sizes, sumOverNodes });
  const { batches, summed } = plan;
  const active = st.noNodesUntil !== undefined && now < st.noNodesUntil ? undefined : await statsNodes(ctx);
  const collector = rows[0]?.section === 'xdcr' ? 'xdcr' : 'bucket_stats';
  // Host stats (isHostMetric) are asked of every active node of any service, as ns_server sums them; the rest of
  // the data nodes only.
  const cluster = active !== undefined && collector === 'bucket_stats' && rows.some((r) => [...r.series, ...(r.denominator ?? [])].some((x) => isHostMetric(x.metric))) ? await clusterNodes(ctx) : undefined;
  let asked = active;
  let hostAsked = cluster === undefined || active === undefined ? undefined : [...active, ...cluster.filter((n) => !active.includes(n))];
  // Nodes found down or slow in this poll: not asked again by its later requests.
  const down = new Set<string>();
  // One request after the other, each answer grouped as soon as it is read, and read query by query (readTextSliced,
  // which lets a scrape in between two queries' answers): one request's answer and one query's parsed JSON are
  // alive at a time, rather than every batch's: a few round trips more, within the poll's deadline.
  const grouping = new AnswerGrouping(rows, itemOf, st.memo, st.sizes, { nowMs: now, maxT: now + MAX_FUTURE_SKEW_MS });
  // The asked nodes are the cluster's (the data nodes, and every active node for host stats): a series of any other
  // node is dropped and counted.
  if (active !== undefined) grouping.members = new Set(hostAsked ?? active);
  let failed = 0;
  let first: unknown;
  // What the bounds cut or refused, counted as each request is read: a poll that then misses its deadline still
  // shows them.
  const flushCaps = (): void => {
    for (const [what, n] of grouping.caps.counts) ctx.out.countCap(what, n);
    grouping.caps.counts.clear();
    for (const [why, n] of grouping.caps.points) ctx.out.countDropped?.(why, n);
    grouping.caps.points.clear();
  };
  for (const names of batches) {
    flushCaps();
    if (ctx.signal.aborted) throw ctx.signal.reason;
    try {
      for (let attempt = 0; ; attempt++) {
        const up = asked?.filter((n) => !down.has(n));
        const nodes = up === undefined || up.length === 0 ? asked : up;
        const hostUp = hostAsked?.filter((n) => !down.has(n));
        const hostNodes = hostUp === undefined || hostUp.length === 0 ? hostAsked : hostUp;
        const remaining = ctx.deadline === undefined ? ctx.options.timeout : ctx.deadline - performance.now();
        const res = await ctx.client.requestJson(STATS_RANGE_ROUTE, {}, stagedRequestSchema, {
          method: 'POST',
          json: buildQueries(names, extra, plan.window, { narrow: plan.narrow, from: plan.from, end: plan.end, fromByMetric: plan.fromByMetric, aggregated: plan.aggregated, ...(nodes !== undefined ? { nodes } : {}), ...(hostNodes !== undefined ? { hostNodes } : {}), timeoutMs: serverTimeoutMs(remaining, ctx.cluster.requestTimeout) }),
          allowStatus: [400, 403, 404, 405],
          parseBody: (text, signal) => grouping.readTextSliced(text, names, summed, { signal }),
        });
        if (res.status === 403) throw new RangeForbiddenError();
        if (res.status === 404 || res.status === 405) throw new RangeUnavailableError(res.status);
        if (res.status === 400) {
          const why = boundedText(res.text, MAX_400_TEXT);
          // The node list refused (a node renamed or removed since it was read): once without it, and none sent for a while.
          if (nodes !== undefined && attempt === 0 && /node|hostname/i.test(res.text)) {
            ctx.log.warn({ status: 400, body: why }, 'statistics: the range API refused the node list; asking without it for 10 minutes');
            asked = undefined;
            hostAsked = undefined;
            st.noNodesUntil = now + RETRY_NODES_MS;
            continue;
          }
          if (st.last400 !== why) ctx.log.warn({ status: 400, body: why, metrics: names.length }, 'statistics: the range API refused a request (400)');
          else ctx.log.debug({ status: 400, body: why }, 'statistics: the range API refused a request (400), as before');
          st.last400 = why;
          const err = new CbwError('CBW_ERR_HTTP', `POST ${STATS_RANGE_ROUTE} answered 400: ${why}`);
          err.brief = `POST ${STATS_RANGE_ROUTE} answered 400`;
          (err as CbwError & { status: number }).status = 400;
          throw err;
        }
        if (res.data !== undefined) grouping.commit(res.data);
        for (const [n, why] of grouping.nodeErrors) if (NODE_DOWN.test(why)) down.add(n);
        break;
      }
    } catch (err) {
      if (err instanceof RangeUnavailableError || err instanceof RangeForbiddenError) throw err;
      failed++;
      first ??= err;
      grouping.add(names.map((name): RawAnswer => ({ metric: name, failed: true })));
      if (!ctx.signal.aborted) ctx.itemFailed(`range request (${names.length} metrics)`, err);
    }
  }
  flushCaps();
  if (ctx.signal.aborted) throw ctx.signal.reason;
  if (failed > 0 && failed === batches.length) throw first;
  const groups = grouping.done();
  // Errors that name no node, aggregated per cause; a node's, one item error per node (below).
  reportRangeErrors(ctx, grouping.errorTexts);
  const missing = missingNodes(groups, hostAsked ?? asked, collector === 'bucket_stats', st.ownNodes);
  // The nodes with series of their own, and those still silent since they had some: the next poll's `previous`.
  st.ownNodes = new Set([...groups.nodes, ...[...missing.keys()].filter((n) => st.ownNodes?.has(n) === true || groups.nodes.has(n))]);
  for (const [n, why] of missing) {
    const err = new CbwError(missingCode(why), `range API: the statistics of node ${n} are missing from the answer (${why}); bucket-wide values are sums over the nodes that answered`);
    err.brief = `range API: the statistics of node ${n} are missing`;
    ctx.itemFailed(`range node ${n}`, err);
  }
  const gaps: StatsGaps = { collector, missing, futurePoints: groups.future };
  ctx.out.statsGaps = gaps;
  st.gaps = gaps;
  for (const [n, k] of groups.future) {
    if (st.warnedFuture.has(n) || st.warnedFuture.size >= MAX_GAP_NODES) continue;
    st.warnedFuture.add(n);
    ctx.log.warn({ node: n, points: k, collector }, `statistics: node ${n} answered points more than ${MAX_FUTURE_SKEW_MS / 1000} s ahead of this exporter's clock (is its clock ahead?); they are dropped and counted in cbwatch_stats_future_points_dropped_total (warned once per node)`);
  }
  st.lastPoll = now;
  st.items = groups.items.size;
  return { groups, requests: batches.length };
}
