/**
 * The range source's view of the nodes: which nodes a query asks (the active data nodes, from the bucket list),
 * which of them the answers lack and why (missingNodes: an `errors` entry, or no series of their own), and how the
 * answers' error texts become item errors (one per cause and poll, reportRangeErrors).
 */
import { CbwError } from '../errors.js';
import type { ErrorCode } from '../errors.js';
import { fetchBucketList } from '../couchbase/buckets.js';
import type { BucketEntry } from '../couchbase/buckets.js';
import { fetchPoolsDefault } from '../couchbase/pools.js';
import type { StatsGaps } from '../metrics/family.js';
import type { StatsContext } from './context.js';
import type { RangeItems } from './range-groups.js';
import { RANGE_LIMITS } from './range-limits.js';

/** How long the node list of statsNodes serves both collectors: a failover shows within this. */
export const STATS_NODES_MAX_AGE_MS = 15_000;

/**
 * The nodes a statistics query is asked of: the active members among the buckets' nodes (the data nodes, where
 * the kv and XDCR series live and whose sum ns_server's envelope takes), from the bucket list (which bucket_stats
 * reads every poll; shared, so the list costs bucket_stats no request and xdcr one at most every
 * STATS_NODES_MAX_AGE_MS). A failed-over (inactiveFailed) or not yet rebalanced-in (inactiveAdded) node is left
 * out: it serves no bucket data. Undefined when the list cannot be read or names none: the range API's default
 * (every node, in any membership state) then applies.
 */
export async function statsNodes(ctx: StatsContext): Promise<string[] | undefined> {
  try {
    const nodes = await ctx.shared.get('statsNodes', STATS_NODES_MAX_AGE_MS, async () => activeBucketNodes((await fetchBucketList(ctx)).buckets));
    return nodes.length > 0 ? nodes : undefined;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.debug({ err }, 'statistics: the bucket list could not be read; the range API asks every node');
    return undefined;
  }
}

/**
 * The nodes a host statistic is asked of: every active node of the cluster, of any service (menelaus_stats
 * section_nodes("@system") → ns_cluster_membership:actual_active_nodes), from /pools/default's node list (shared
 * with the nodes collector, and kept STATS_NODES_MAX_AGE_MS like statsNodes). Undefined when the list cannot be read
 * or names none: the data nodes of statsNodes then apply.
 */
export async function clusterNodes(ctx: StatsContext): Promise<string[] | undefined> {
  try {
    const nodes = await ctx.shared.get('statsClusterNodes', STATS_NODES_MAX_AGE_MS, async () => activeNodes((await fetchPoolsDefault(ctx)).nodes));
    return nodes.length > 0 ? nodes : undefined;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.debug({ err }, 'statistics: /pools/default could not be read; host statistics are asked of the data nodes');
    return undefined;
  }
}

/** The hostnames of a node list's active members (membership active or not said), each once, in list order. Pure. */
export function activeNodes(nodes: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const n of nodes) {
    if (n === null || typeof n !== 'object') continue;
    const { hostname, clusterMembership } = n as { hostname?: unknown; clusterMembership?: unknown };
    if (typeof hostname !== 'string' || hostname === '' || (clusterMembership ?? 'active') !== 'active') continue;
    if (!out.includes(hostname)) out.push(hostname);
  }
  return out;
}

/** The hostnames of the buckets' nodes whose membership is active (or not said), each once, in list order. Pure. */
export function activeBucketNodes(buckets: readonly BucketEntry[]): string[] {
  const out: string[] = [];
  for (const b of buckets)
    for (const n of b.nodes ?? []) {
      if (n.hostname === undefined || n.hostname === '' || (n.clusterMembership ?? 'active') !== 'active') continue;
      if (!out.includes(n.hostname)) out.push(n.hostname);
    }
  return out;
}

/** An `errors` entry's reason that means the node did not answer at all (down, unreachable, or slower than `timeout`). */
export const NODE_DOWN = /timed out|timeout|not available|is down|connect/i;

/** The error code an item error for a node missing from the answer carries, by its reason. */
export function missingCode(why: string): ErrorCode {
  return /timed out|timeout/i.test(why) ? 'CBW_ERR_TIMEOUT' : NODE_DOWN.test(why) ? 'CBW_ERR_NETWORK' : 'CBW_ERR_HTTP';
}

/** Distinct causes of range item errors logged one by one per poll; the rest under one line. */
const MAX_ERROR_CAUSES = 20;

/**
 * The answers' error texts as item errors, aggregated per poll: one per cause (text), with the number of metrics it
 * failed as its count, so an answer full of errors entries makes a few lines, not an item error (and a debug line)
 * per entry and metric. Past MAX_ERROR_CAUSES causes, the rest are one more, counted.
 */
export function reportRangeErrors(ctx: Pick<StatsContext, 'itemFailed'>, errors: ReadonlyArray<{ metric: string; errors: string[] }>): void {
  const causes = new Map<string, string[]>();
  let others = 0;
  for (const r of errors) {
    for (const e of r.errors) {
      const metrics = causes.get(e);
      if (metrics !== undefined) metrics.push(r.metric);
      else if (causes.size < MAX_ERROR_CAUSES) causes.set(e, [r.metric]);
      else others++;
    }
  }
  for (const [text, metrics] of causes) {
    // The entry's text comes from upstream: bounded (RANGE_LIMITS.errorChars), and kept out of the brief a page may show.
    const names = metrics.length > 3 ? `${metrics.slice(0, 3).join(', ')} and ${metrics.length - 3} more` : metrics.join(', ');
    const err = new CbwError('CBW_ERR_HTTP', `range API error for ${names}: ${text.slice(0, RANGE_LIMITS.errorChars)}`);
    err.brief = `range API error for ${names}`;
    ctx.itemFailed(`range ${names}`, err, metrics.length);
  }
  if (others > 0) {
    const err = new CbwError('CBW_ERR_HTTP', `range API errors of ${others} more metric answers (past ${MAX_ERROR_CAUSES} causes in this poll)`);
    err.brief = 'range API errors';
    ctx.itemFailed('range (more causes)', err, others);
  }
}

/**
 * The nodes whose statistics this poll's answer lacks, with the reason: those an `errors` entry named and the asked
 * nodes that answered no series of their own while another node did, when they should have: always (`silent`:
 * bucket stats, where every data node has series of its own, its host's at least), or when they had some in the
 * previous poll (`previous`: XDCR, where a node may legitimately have none, but a node that had series and has none
 * now while its neighbours still do has gone silent: a clock far ahead, a stuck goxdcr). Pure.
 */
export function missingNodes(groups: RangeItems, asked: readonly string[] | undefined, silent: boolean, previous?: ReadonlySet<string>): Map<string, string> {
  const missing = new Map<string, string>();
  for (const [n, why] of groups.nodeErrors) missing.set(n, why);
  // Silent: answered no series of its own while another node did (a poll of sums alone names no node).
  if (asked !== undefined && groups.nodes.size > 0)
    for (const n of asked) {
      if (groups.nodes.has(n) || missing.has(n) || !(silent || previous?.has(n) === true)) continue;
      missing.set(n, groups.future.has(n) ? 'every point in the future: its clock is ahead?' : silent ? 'no statistics in the answer' : 'no statistics in the answer, though it had some before');
    }
  return missing;
}

/** The gaps of a collector's last poll through the range API, for the poll's note. Pure. */
export function gapsNote(g: StatsGaps | undefined): string {
  if (g === undefined) return '';
  const parts: string[] = [];
  if (g.missing.size > 0) parts.push(`partial: ${[...g.missing].map(([n, why]) => `node ${n} missing (${why})`).join(', ')}`);
  if (g.futurePoints.size > 0) parts.push(`clock ahead: ${[...g.futurePoints].map(([n, k]) => `node ${n} (${k} future points dropped)`).join(', ')}`);
  return parts.join('; ');
}
