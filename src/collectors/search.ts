/**
 * Search service active queries (`{search_url}/api/query`, plus `/api/query/index/{index}` for the indexes
 * listed in `indexes`), and the opt-in runaway-query policy (`cancel`), which cancels queries running longer
 * than `cancel.longer_than` with `POST /api/query/{queryID}/cancel`.
 *
 * The policy never acts twice on one query: every query it has acted on (cancelled, dry run, failed) is
 * remembered in `ctx.state` until it leaves the active list, so a failing cancel is logged and counted once,
 * not retried every poll. Its counter lives in `ctx.state` too, because the snapshot model replaces a
 * collector's series on every poll.
 */
import { CronSpec } from '../cron.js';
import type { Log } from '../log-core.js';
import { allowedCredentialHosts, fetchNodeServices, serviceUrl } from '../couchbase/nodeServices.js';
import { tryParseGoDuration } from '../couchbase/goduration.js';
import {
  SEARCH_CANCEL_ROUTE,
  SEARCH_INDEX_QUERIES_ROUTE,
  SEARCH_QUERIES_ROUTE,
  activeQueriesSchema,
  activeQuerySchema,
  cancelResponseSchema,
  splitQueryKey,
} from '../couchbase/search.js';
import type { ActiveQueries } from '../couchbase/search.js';
import type { CouchbaseClient } from '../couchbase/client.js';
import { boundedText, CbwError, describeError, isCbwError } from '../errors.js';
import { defineFamily } from '../metrics/family.js';
import type { SampleSet } from '../metrics/family.js';
import { byCodeUnit } from '../text-order.js';
import { fetchPoolsDefault, POOLS_DEFAULT_ROUTE, poolNodeSchema } from '../couchbase/pools.js';
import type { PoolsDefault } from '../couchbase/pools.js';
import { collectItems, isPollFatal } from './helpers.js';
import type { CollectContext, Collector, Skip } from './types.js';

const C = 'search';

export const SEARCH = {
  totalActive: defineFamily(C, 'couchbase_search_total_active_queries', 'gauge', 'Active search queries in the whole cluster, as the Search service counts them (totalActiveQueryCount).', [], 'count'),
  active: defineFamily(C, 'couchbase_search_active_queries', 'gauge', 'Active search queries per index (0 for an index listed in the collector\'s indexes option with none running).', ['index'], 'count'),
  maxDuration: defineFamily(C, 'couchbase_search_active_query_max_duration_seconds', 'gauge', 'Execution time of the longest-running active query on the index (absent when none runs).', ['index'], 'seconds'),
  slow: defineFamily(C, 'couchbase_search_slow_queries', 'gauge', 'Active queries on the index running longer than the slow-query threshold (couchbase_search_slow_query_threshold_seconds).', ['index'], 'count'),
  slowThreshold: defineFamily(C, 'couchbase_search_slow_query_threshold_seconds', 'gauge', 'The slow-query threshold configured for this cluster (search collector option slow_query_threshold).', [], 'seconds'),
  nodeActive: defineFamily(C, 'couchbase_search_node_active_queries', 'gauge', 'Active search queries per node (7.1+; 7.0 query keys carry no node). node is host:port as in every other family, resolved from the node uuid of the query key through the cluster\'s node list; node_uuid is that uuid. A uuid the node list does not know keeps it as node too.', ['node', 'node_uuid'], 'count'),
  cancelled: defineFamily(C, 'couchbase_search_queries_cancelled_total', 'counter', 'Runaway queries the cancel policy acted on, by result: cancelled, dry_run (logged only), failed, forbidden (missing permission), not_found (finished before the cancel).', ['index', 'result'], 'count'),
} as const;

/** One entry of `filteredActiveQueries.queryMap`, parsed. */
export interface SearchQuery {
  /** The queryMap key, unique in the cluster. */
  readonly key: string;
  readonly node: string | undefined;
  readonly id: string;
  readonly index: string;
  /** Execution time, or undefined when it did not parse. */
  readonly seconds: number | undefined;
  /** The query object: user input, never a label, logged only with `log_query_text`. */
  readonly query: unknown;
}

/** Parse the queryMap of an active-query response; entries that make no sense are skipped, not fatal. */
export function parseActiveQueries(payload: ActiveQueries, skip: Skip): SearchQuery[] {
  const out: SearchQuery[] = [];
  const map = payload.filteredActiveQueries?.queryMap ?? {};
  for (const [key, raw] of Object.entries(map)) {
    const parsed = activeQuerySchema.safeParse(raw);
    if (!parsed.success) {
      skip('bad_query_entry', key);
      continue;
    }
    const index = parsed.data.QueryContext?.index;
    if (index === undefined || index === '') {
      skip('query_without_index', key);
      continue;
    }
    const { node, id } = splitQueryKey(key);
    const text = parsed.data.executionTime;
    const seconds = text === undefined ? undefined : tryParseGoDuration(text);
    if (seconds === undefined) skip('bad_execution_time', key);
    out.push({ key, node, id, index, seconds, query: parsed.data.QueryContext?.query });
  }
  return out;
}

export interface SearchMapOptions {
  /** totalActiveQueryCount of the cluster-wide view. */
  readonly total: number | undefined;
  readonly slowThresholdSeconds: number;
  /** Indexes that always get series (0 when idle). */
  readonly indexes: readonly string[];
}

/**
 * Pure: parsed queries → samples. `nodeNames` maps node uuids to `host:port`; without it (the node list could
 * not be read) no per-node series is exported, since its `node` label would not join with any other family.
 */
export function mapActiveQueries(out: SampleSet, queries: readonly SearchQuery[], opts: SearchMapOptions, nodeNames?: ReadonlyMap<string, string>): void {
  out.add(SEARCH.totalActive, {}, opts.total);
  out.add(SEARCH.slowThreshold, {}, opts.slowThresholdSeconds);
  const byIndex = new Map<string, { active: number; slow: number; max: number | undefined }>();
  for (const name of opts.indexes) byIndex.set(name, { active: 0, slow: 0, max: undefined });
  const byNode = new Map<string, number>();
  for (const q of queries) {
    let s = byIndex.get(q.index);
    if (!s) {
      s = { active: 0, slow: 0, max: undefined };
      byIndex.set(q.index, s);
    }
    s.active++;
    if (q.seconds !== undefined) {
      if (q.seconds > opts.slowThresholdSeconds) s.slow++;
      s.max = s.max === undefined ? q.seconds : Math.max(s.max, q.seconds);
    }
    if (q.node !== undefined) byNode.set(q.node, (byNode.get(q.node) ?? 0) + 1);
  }
  for (const [index, s] of [...byIndex].sort(([a], [b]) => byCodeUnit(a, b))) {
    out.add(SEARCH.active, { index }, s.active);
    out.add(SEARCH.slow, { index }, s.slow);
    out.add(SEARCH.maxDuration, { index }, s.max);
  }
  if (nodeNames === undefined) return;
  for (const [uuid, n] of [...byNode].sort(([a], [b]) => byCodeUnit(a, b))) out.add(SEARCH.nodeActive, { node: nodeNames.get(uuid) ?? uuid, node_uuid: uuid }, n);
}

/** Node uuid → `host:port` from the node list of GET /pools/default. Pure. */
export function nodeNamesByUuid(p: PoolsDefault): Map<string, string> {
  const m = new Map<string, string>();
  for (const raw of p.nodes) {
    const n = poolNodeSchema.safeParse(raw);
    if (n.success && n.data.nodeUUID !== undefined) m.set(n.data.nodeUUID, n.data.hostname);
  }
  return m;
}

// ---- runaway-query policy -------------------------------------------------------------------------------

export type CancelResult = 'cancelled' | 'dry_run' | 'failed' | 'forbidden' | 'not_found';

export interface CancelPolicy {
  readonly enabled: boolean;
  /** ms */
  readonly longer_than: number;
  /** Empty: every index. */
  readonly indexes: readonly string[];
  readonly dry_run: boolean;
  readonly log_query_text: boolean;
  /** Cron windows (cancelWindowOpen): the policy acts only in a minute `active` matches and `inactive` does not. */
  readonly active?: string | undefined;
  readonly inactive?: string | undefined;
  /** IANA zone of the windows; absent: the process's local zone. */
  readonly timezone?: string | undefined;
}

/**
 * Whether the policy's cron windows let it act at `atMs` (wall-clock epoch ms). A window is a cron expression read
 * per minute (src/cron.ts): it is open for the whole of every minute the expression matches, in the policy's time
 * zone. `active: "* 9-17 * * 1-5"` is open from 09:00:00 to 17:59:59 on weekdays; `inactive: "* 1-4 * * *"` closes
 * the policy from 01:00:00 to 04:59:59 every day. Both given: open when `active` matches and `inactive` does not.
 * Neither: always open.
 */
export function cancelWindowOpen(policy: Pick<CancelPolicy, 'active' | 'inactive' | 'timezone'>, atMs: number): boolean {
  const matches = (expression: string): boolean => {
    const spec = new CronSpec(expression, policy.timezone);
    try {
      return spec.activeAt(atMs);
    } finally {
      spec.dispose();
    }
  };
  if (policy.active !== undefined && !matches(policy.active)) return false;
  return policy.inactive === undefined || !matches(policy.inactive);
}

/** Keys in `ctx.state`. */
const STATE_ATTEMPTED = 'cancel.attempted';
const STATE_COUNTS = 'cancel.counts';
const STATE_DECLARED = 'cancel.indexes';

/** Cancels per poll at most: a burst of runaways is worked off over a few polls, within the poll deadline. */
export const MAX_CANCELS_PER_POLL = 10;
const QUERY_TEXT_MAX = 2000;

/**
 * Pure: the queries the policy should act on at `atMs` (wall clock, for its windows), oldest first. Outside its
 * windows none: a runaway found then is not remembered, and is acted on at the first poll inside a window.
 */
export function cancelCandidates(queries: readonly SearchQuery[], policy: CancelPolicy, attempted: ReadonlySet<string>, atMs: number = Date.now()): SearchQuery[] {
  if (!policy.enabled) return [];
  if (!cancelWindowOpen(policy, atMs)) return [];
  const limit = policy.longer_than / 1000;
  const allowed = new Set(policy.indexes);
  return queries
    .filter((q) => q.seconds !== undefined && q.seconds > limit)
    .filter((q) => allowed.size === 0 || allowed.has(q.index))
    .filter((q) => !attempted.has(q.key))
    .sort((a, b) => (b.seconds ?? 0) - (a.seconds ?? 0));
}

interface CancelDeps {
  readonly client: CouchbaseClient;
  readonly baseUrl: string;
  readonly log: Log;
  readonly state: Map<string, unknown>;
  readonly skip: Skip;
  /**
   * Indexes the cancel counters may cover (max_dynamic_families; default 5,000): index names come from
   * Couchbase and the counters are kept for the process's life, so a new index beyond it is not counted.
   */
  readonly maxIndexes?: number | undefined;
  /** Called for each count left out by that cap. */
  readonly capped?: (() => void) | undefined;
}

/** Indexes the cancel counters cover: those counted (keys are `index\0result`) and those declared at 0. */
function coveredIndexes(state: Map<string, unknown>): Set<string> {
  const counts = (state.get(STATE_COUNTS) as Map<string, number> | undefined) ?? new Map<string, number>();
  const have = new Set([...counts.keys()].map((k) => k.slice(0, k.indexOf('\u0000'))));
  for (const i of (state.get(STATE_DECLARED) as Set<string> | undefined) ?? []) have.add(i);
  return have;
}

function stateOf<T>(state: Map<string, unknown>, key: string, init: () => T): T {
  let v = state.get(key) as T | undefined;
  if (v === undefined) {
    v = init();
    state.set(key, v);
  }
  return v;
}

function countKey(index: string, result: CancelResult): string {
  return `${index}\u0000${result}`;
}

function queryText(q: unknown): string {
  let t: string;
  try {
    t = typeof q === 'string' ? q : (JSON.stringify(q) ?? '');
  } catch {
    t = '';
  }
  // User input as Couchbase reports it: redacted before it is cut, like every upstream string.
  return boundedText(t, QUERY_TEXT_MAX);
}

async function cancelOne(deps: CancelDeps, q: SearchQuery): Promise<{ result: CancelResult; error?: string }> {
  try {
    const body = await deps.client.getJson(SEARCH_CANCEL_ROUTE, { queryID: q.id }, cancelResponseSchema, {
      baseUrl: deps.baseUrl,
      method: 'POST',
      // The node uuid tells the service which node runs the query; 7.0 keys carry none (the node we ask).
      json: q.node !== undefined ? { uuid: q.node } : {},
    });
    if (body.status !== undefined && body.status !== 'ok') return { result: 'failed', error: `status ${body.status}` };
    return { result: 'cancelled' };
  } catch (err) {
    const code = isCbwError(err) ? err.code : undefined;
    const result: CancelResult = code === 'CBW_ERR_FORBIDDEN' ? 'forbidden' : code === 'CBW_ERR_NOT_FOUND' ? 'not_found' : 'failed';
    return { result, error: describeError(err) };
  }
}

/**
 * Apply the policy to this poll's queries: prune remembered ids that are no longer active, act on new
 * runaways (at most MAX_CANCELS_PER_POLL), count each result. Never throws: a failing cancel must not fail
 * the metrics of the poll.
 */
export async function applyCancelPolicy(deps: CancelDeps, queries: readonly SearchQuery[], policy: CancelPolicy, atMs: number = Date.now()): Promise<void> {
  const attempted = stateOf(deps.state, STATE_ATTEMPTED, () => new Set<string>());
  const counts = stateOf(deps.state, STATE_COUNTS, () => new Map<string, number>());
  const active = new Set(queries.map((q) => q.key));
  for (const key of attempted) if (!active.has(key)) attempted.delete(key);

  const todo = cancelCandidates(queries, policy, attempted, atMs);
  for (const q of todo.slice(0, MAX_CANCELS_PER_POLL)) {
    if (!/^\d+$/.test(q.id)) {
      // The cancel route takes an integer id; anything else cannot be cancelled (and is not retried).
      attempted.add(q.key);
      deps.skip('uncancellable_query_id', q.key);
      continue;
    }
    // Remember before the request: whatever happens, this query is never acted on again.
    attempted.add(q.key);
    const outcome = policy.dry_run ? { result: 'dry_run' as const } : await cancelOne(deps, q);
    const ck = countKey(q.index, outcome.result);
    const covered = coveredIndexes(deps.state);
    if (!covered.has(q.index) && covered.size >= (deps.maxIndexes ?? 5000)) deps.capped?.();
    else counts.set(ck, (counts.get(ck) ?? 0) + 1);
    // The index, the query's id and its node come from the answer's keys: redacted and bounded.
    const fields: Record<string, unknown> = {
      index: boundedText(q.index, 300),
      query_id: boundedText(q.id, 300),
      node: boundedText(q.node ?? '', 300),
      duration_seconds: q.seconds,
      longer_than_seconds: policy.longer_than / 1000,
      result: outcome.result,
    };
    if ('error' in outcome && outcome.error !== undefined) fields.error = outcome.error;
    if (policy.log_query_text) fields.query = queryText(q.query);
    const msg =
      outcome.result === 'dry_run'
        ? 'runaway search query found (dry run: not cancelled)'
        : outcome.result === 'cancelled'
          ? 'cancelled a runaway search query'
          : 'could not cancel a runaway search query (not retried)';
    deps.log.warn(fields, msg);
  }
  if (todo.length > MAX_CANCELS_PER_POLL) {
    deps.log.warn({ pending: todo.length - MAX_CANCELS_PER_POLL }, 'more runaway search queries than one poll acts on; the rest wait for the next poll');
  }
}

/**
 * Emit the running totals. While the policy is on, every index it could act on (the listed ones, or every
 * index seen with an active query since it was turned on) also gets 0 for each possible result, so that
 * rate() and increase() see the first cancellation or failure instead of a series born at 1.
 */
export function emitCancelCounts(out: SampleSet, state: Map<string, unknown>, policy: CancelPolicy, queries: readonly SearchQuery[] = [], maxIndexes = 5000): void {
  const counts = (state.get(STATE_COUNTS) as Map<string, number> | undefined) ?? new Map<string, number>();
  const rows = new Map(counts);
  if (policy.enabled) {
    const declared = stateOf(state, STATE_DECLARED, () => new Set<string>());
    const allowed = new Set(policy.indexes);
    for (const index of policy.indexes) declared.add(index);
    // Index names come from Couchbase: at most maxIndexes are declared (the rest counted as capped).
    if (allowed.size === 0) {
      const covered = coveredIndexes(state);
      for (const q of queries) {
        if (covered.has(q.index)) continue;
        if (covered.size >= maxIndexes) out.countCap('dynamic_families');
        else {
          declared.add(q.index);
          covered.add(q.index);
        }
      }
    }
    const results: CancelResult[] = policy.dry_run ? ['dry_run'] : ['cancelled', 'failed', 'forbidden', 'not_found'];
    for (const index of declared) for (const r of results) if (!rows.has(countKey(index, r))) rows.set(countKey(index, r), 0);
  }
  for (const [key, value] of [...rows].sort(([a], [b]) => byCodeUnit(a, b))) {
    const [index, result] = key.split('\u0000') as [string, string];
    out.add(SEARCH.cancelled, { index, result }, value);
  }
}

// ---- the collector --------------------------------------------------------------------------------------

async function searchBaseUrl(ctx: CollectContext<'search'>): Promise<string | undefined> {
  if (ctx.cluster.searchUrl !== undefined) return ctx.cluster.searchUrl;
  const only = ctx.cluster.credentialsHosts === 'configured' ? allowedCredentialHosts(ctx.cluster) : undefined;
  return serviceUrl(await fetchNodeServices(ctx), ctx.cluster.url, 'fts', 'ftsSSL', only);
}

/**
 * How long the optional node-name lookup may wait: a quarter of the poll deadline, and never more than half of
 * what is left of it, so a hanging /pools/default costs the per-node series and not the poll. Whole milliseconds
 * (the elapsed time is fractional, and AbortSignal.timeout refuses a fraction), never negative.
 */
export function nodeNamesBudgetMs(timeoutMs: number, elapsedMs: number): number {
  const ms = Math.floor(Math.min(timeoutMs / 4, (timeoutMs - elapsedMs) / 2));
  return Number.isFinite(ms) ? Math.max(0, ms) : 0;
}

/**
 * Node uuid → host:port for the per-node series, or undefined (an item failure, counted) when the node list
 * fails or does not answer within `budgetMs`. Only the poll's own end (deadline, shutdown) and bad credentials
 * fail the poll. The list may be a fetch another collector started (shared for 10 s), which this bound does
 * not cancel: it only stops waiting for it.
 */
async function lookupNodeNames(ctx: CollectContext<'search'>, budgetMs: number): Promise<Map<string, string> | undefined> {
  const item = `${POOLS_DEFAULT_ROUTE} (node names)`;
  const bound = AbortSignal.timeout(Math.max(1, budgetMs));
  const client = ctx.client.scoped({ signal: bound });
  let onBound: (() => void) | undefined;
  try {
    const list = await Promise.race([
      fetchPoolsDefault({ client, shared: ctx.shared }),
      new Promise<never>((_, reject) => {
        onBound = () => reject(bound.reason);
        bound.addEventListener('abort', onBound, { once: true });
      }),
    ]);
    return nodeNamesByUuid(list);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (bound.aborted) {
      ctx.itemFailed(item, new CbwError('CBW_ERR_TIMEOUT', `GET ${POOLS_DEFAULT_ROUTE} (node names): no answer within ${(budgetMs / 1000).toFixed(1)}s; per-node series left out`, { cause: err }));
      return undefined;
    }
    if (isPollFatal(err)) throw err;
    ctx.itemFailed(item, err);
    return undefined;
  } finally {
    if (onBound !== undefined) bound.removeEventListener('abort', onBound);
  }
}

export const searchCollector: Collector<'search'> = {
  name: 'search',
  defaultInterval: 15_000,
  families: Object.values(SEARCH),
  role: 'Search Reader or Read-Only Admin (cluster.fts!read); the cancel policy needs Search Admin (cluster.fts!manage)',
  description: 'Active search queries per index and node, the longest and the slow ones; an opt-in policy that cancels runaway queries.',
  async collect(ctx) {
    const started = performance.now();
    const baseUrl = await searchBaseUrl(ctx);
    if (baseUrl === undefined) {
      ctx.notApplicable('no search service');
      return;
    }
    const all = await ctx.client.getJson(SEARCH_QUERIES_ROUTE, {}, activeQueriesSchema, { baseUrl });
    const byKey = new Map<string, SearchQuery>();
    for (const q of parseActiveQueries(all, (r, d) => ctx.skipped(r, d))) byKey.set(q.key, q);

    // Per-index views: listed indexes always get series, and their queries are merged in (same keys). Each
    // listed index is an item: when its call fails, that index has no series this poll (its count from the
    // cluster-wide view alone could be short), the others keep theirs.
    const known: string[] = [];
    const failed = new Set<string>();
    await collectItems(
      ctx,
      ctx.options.indexes,
      (index) => `index ${index}`,
      async (index) => {
        let res;
        try {
          res = await ctx.client.requestJson(SEARCH_INDEX_QUERIES_ROUTE, { index }, activeQueriesSchema, { baseUrl, allowStatus: [400, 404] });
        } catch (err) {
          failed.add(index);
          throw err;
        }
        if (res.data === undefined) {
          // A configured index that does not exist: configuration, not a failure.
          ctx.skipped('index_not_found', index);
          return;
        }
        known.push(index);
        for (const q of parseActiveQueries(res.data, () => undefined)) if (!byKey.has(q.key)) byKey.set(q.key, q);
      },
      { sequential: true },
    );
    const everyQuery = [...byKey.values()];
    const queries = everyQuery.filter((q) => !failed.has(q.index));

    // Node uuids → host:port through the node list (shared with the nodes collector), only when a query
    // names a node. Failing that lookup is an item error and costs only the per-node series.
    let nodeNames: Map<string, string> | undefined = new Map();
    if (queries.some((q) => q.node !== undefined)) nodeNames = await lookupNodeNames(ctx, nodeNamesBudgetMs(ctx.options.timeout, performance.now() - started));
    mapActiveQueries(
      ctx.out,
      queries,
      { total: all.totalActiveQueryCount, slowThresholdSeconds: ctx.options.slow_query_threshold / 1000, indexes: known },
      nodeNames,
    );

    const policy = ctx.options.cancel;
    const attempted = ctx.state.get(STATE_ATTEMPTED);
    if (policy.enabled || attempted !== undefined) {
      // The policy acts on every query known, also those of an index whose own view failed this poll.
      await applyCancelPolicy(
        {
          client: ctx.client,
          baseUrl,
          log: ctx.log,
          state: ctx.state,
          skip: (r, d) => ctx.skipped(r, d),
          maxIndexes: ctx.cluster.maxDynamicFamilies,
          capped: () => ctx.out.countCap('dynamic_families'),
        },
        everyQuery,
        policy,
        ctx.now(),
      );
    }
    emitCancelCounts(ctx.out, ctx.state, policy, everyQuery, ctx.cluster.maxDynamicFamilies);
  },
};
