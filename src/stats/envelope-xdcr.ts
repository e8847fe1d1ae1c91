/**
 * The envelope source of XDCR statistics: per replication, one request per XDCR stat due this poll
 * (`GET /pools/default/buckets/{src}/stats/replications%2F{uuid}%2F{src}%2F{dst}%2F{stat}`), each answer reduced to
 * one value per node (values.ts) by the sampling rules (samples.ts).
 *
 * Tiers (planTiers): the fast stats (`fast_stats`) are asked every poll; the others once per `slow_stats_interval`,
 * each at its own poll of that period so the slow requests spread evenly. With the defaults (30 s, 4 fast stats,
 * 16 slow ones, 4 min): 6 stat requests per replication a poll instead of 20. A replication's first poll (after a
 * start, a reload that rebuilt the collector, or its first appearance in the tasks list) asks every stat, so no
 * panel waits a slow period for its first value. Each tier has its own zoom (covering its interval) and each stat
 * its memo: `haveTStamp` a little before its previous newest sample, rates over the samples since that stat's
 * previous answer (a slow-tier rate is exact over its own period), no rate from an answer with no new sample.
 * Between its polls a slow-tier level or count is given again with its last answer's values (a series that came and
 * went with every slow poll would flap in Prometheus), and `kept` says how old the oldest such value is; a slow rate
 * is not (it was the mean of samples that are no longer new), nor anything whose last ask failed. The memos live in
 * ctx.state under the replication id: the collector forgets them when it leaves the tasks list.
 *
 * Failures: a stat request that fails (4xx/5xx, timeout, a body that does not parse) leaves out that stat of that
 * replication (an item error); a 404 on every stat of a replication means it (or its bucket) went away after the
 * tasks list was read (skipped, memo forgotten). Every stat request of the poll failing is the poll's failure.
 */
import { destinationEndpoint, XDCR_STAT_BY_NAME, XDCR_STAT_ROUTE, XDCR_STATS, xdcrStatEnvelopeSchema } from '../couchbase/xdcr.js';
import type { ReplicationId, XdcrStatEnvelope, XdcrStatSpec } from '../couchbase/xdcr.js';
import type { StatsContext, StatsOptions } from './context.js';
import { alignedFrom, haveTStampFor, reduceSamples, sampleWindow, zoomFor } from './samples.js';
import type { SampleMemo, Zoom } from './samples.js';
import { kindOfSample } from './envelope-buckets.js';
import { setOf } from './values.js';
import type { ItemValues, SourceValues } from './values.js';

export interface XdcrStatInput {
  /** The replication's source bucket (for what is skipped). */
  readonly sourceBucket: string;
  readonly stat: string;
  readonly envelope: XdcrStatEnvelope;
  /** The previous answer's memo; undefined on the first poll (then the last interval's samples count). */
  readonly memo?: SampleMemo | undefined;
  /** Exporter clock when the answer arrived (epoch ms); default the memo's time plus one interval. */
  readonly now?: number;
  /** Poll interval, ms; default 60 s. */
  readonly intervalMs?: number;
  /** Sample spacing of the zoom asked for, ms; default 1 s. */
  readonly stepMs?: number;
  readonly skipped?: (reason: string, detail?: string) => void;
}

export interface XdcrStatValues {
  /** Node → this stat's value, in Couchbase's unit, for the nodes that have one. */
  readonly values: ReadonlyMap<string, number>;
  /** What to remember for the next poll (undefined: ask for a full window next time). */
  readonly memo: SampleMemo | undefined;
  /** The answer's newest sample time (epoch ms). */
  readonly last: number | undefined;
}

/**
 * Pure: one stat envelope of one replication as one value per node: the latest sample for levels and counts, the
 * mean of the new samples for rates (none when the answer brought no new sample). Undefined for a stat cbwatch does
 * not know (skipped).
 */
export function envelopeXdcrStatValues(input: XdcrStatInput): XdcrStatValues | undefined {
  const skip = input.skipped ?? (() => undefined);
  const spec = XDCR_STAT_BY_NAME.get(input.stat);
  if (spec === undefined) {
    skip('unknown_stat', input.stat);
    return undefined;
  }
  const env = input.envelope;
  const ts = env.timestamp;
  const intervalMs = input.intervalMs ?? 60_000;
  const now = input.now ?? (input.memo ? input.memo.at + intervalMs : 0);
  const win = sampleWindow(ts, env.lastTStamp, input.memo, now, intervalMs, input.stepMs ?? 1_000);
  const values = new Map<string, number>();
  const nodeStats = env.nodeStats;
  if (nodeStats === undefined) {
    skip('no_node_stats', `${input.sourceBucket} ${input.stat}`);
    return { values, memo: win.memo, last: win.last };
  }
  for (const [node, raw] of Object.entries(nodeStats)) {
    if (!Array.isArray(raw)) {
      skip('bad_node_samples', `${input.stat} on ${node}`);
      continue;
    }
    const arr = raw as unknown[];
    // Arrays are aligned on the newest sample: a node that joined late has a shorter history.
    const from = ts === undefined ? 0 : alignedFrom(win.from, ts.length, arr.length);
    const v = reduceSamples({ kind: spec.kind, scale: 1 }, arr, from, win.fresh);
    if (v === undefined) {
      if (spec.kind !== 'rate' || win.fresh) skip('null_samples', `${input.stat} on ${node}`);
      continue;
    }
    values.set(node, v);
  }
  return { values, memo: win.memo, last: win.last };
}

type StatResult = { kind: 'ok'; stat: string; envelope: XdcrStatEnvelope } | { kind: 'not_found'; stat: string };

async function fetchStat(ctx: StatsContext, zoom: Zoom, r: ReplicationId, stat: string, memo: SampleMemo | undefined): Promise<StatResult> {
  const ask = async (have: number | undefined): Promise<XdcrStatEnvelope | undefined> => {
    const query: Record<string, string | number> = { zoom: zoom.name };
    if (have !== undefined) query.haveTStamp = have;
    const res = await ctx.client.requestJson(
      XDCR_STAT_ROUTE,
      { bucket: r.sourceBucket, destination_endpoint: destinationEndpoint(r, stat) },
      xdcrStatEnvelopeSchema,
      { query, allowStatus: [404] },
    );
    return res.status === 404 ? undefined : res.data;
  };
  const have = haveTStampFor(memo, zoom);
  let env = await ask(have);
  // Nothing at or after haveTStamp: the node's clock may have stepped back; one full window tells.
  if (env !== undefined && have !== undefined && env.timestamp !== undefined && env.timestamp.length === 0) env = await ask(undefined);
  return env === undefined ? { kind: 'not_found', stat } : { kind: 'ok', stat, envelope: env };
}

/**
 * The two tiers of one configuration. Fast stats are asked every poll; slow stats once every `every` polls,
 * each at its `phase` (its position among the slow stats, modulo `every`), so the slow requests spread evenly
 * over the polls instead of landing all on one. Each tier has its own interval, zoom and memos.
 */
export interface TierPlan {
  readonly fast: ReadonlySet<string>;
  /** Slow stat name → the poll (modulo `every`) it is asked at. */
  readonly phase: ReadonlyMap<string, number>;
  /** Polls per slow period (1: no slow tier, every stat every poll). */
  readonly every: number;
  readonly fastZoom: Zoom;
  readonly slowZoom: Zoom;
  /** The slow tier's interval, ms (`every` × the poll interval). */
  readonly slowIntervalMs: number;
}

/** Pure. The slow period is rounded up to a whole number of poll intervals (never faster than configured). */
export function planTiers(fastStats: readonly string[], intervalMs: number, slowIntervalMs: number): TierPlan {
  const every = Math.max(1, Math.ceil(slowIntervalMs / intervalMs));
  const fast = new Set(every === 1 ? XDCR_STATS.map((s) => s.stat) : fastStats);
  const phase = new Map(XDCR_STATS.filter((s) => !fast.has(s.stat)).map((s, j) => [s.stat, j % every] as const));
  return { fast, phase, every, fastZoom: zoomFor(intervalMs), slowZoom: zoomFor(every * intervalMs), slowIntervalMs: every * intervalMs };
}

/**
 * The stats asked at the `poll`-th poll (0-based) of a replication, in table order. The first (0) asks every
 * stat: after a start, a reload that rebuilt the collector, or a replication's first appearance, nothing of the
 * slow tier is known yet, and spreading it over the slow period would leave its panels empty (and an error on
 * one of its stats unseen) for that long. The tiers apply from the second poll on.
 */
export function statsDue(plan: TierPlan, poll: number): XdcrStatSpec[] {
  if (poll === 0) return [...XDCR_STATS];
  return XDCR_STATS.filter((s) => plan.fast.has(s.stat) || plan.phase.get(s.stat) === poll % plan.every);
}

/** The most stats any poll after a replication's first asks per replication (for sizing the requests in flight). */
export function mostStatsPerPoll(plan: TierPlan): number {
  // Phases are dealt round-robin, so phase 0 holds the most slow stats.
  return plan.fast.size + Math.ceil(plan.phase.size / plan.every);
}

/** What is remembered per stat of a replication between polls. */
interface StatMemo {
  /** The sampling memo (samples.ts) of this stat's tier. */
  readonly sample?: SampleMemo | undefined;
  /**
   * Slow tier, levels and counts only: the values of its last answer, given again at the polls in between.
   * A rate is never kept (it is the mean of samples that are no longer new), nor anything after a failed ask.
   */
  readonly held?: ReadonlyMap<string, number> | undefined;
  /** The newest sample time (epoch ms) of the answer `held` came from. */
  readonly heldSampleAt?: number | undefined;
}

/** Per replication, between polls: how many polls it has had, and the memo of each of its stats. */
interface ReplicationMemo {
  polls: number;
  readonly stats: Map<string, StatMemo>;
}

/** The options the XDCR envelope source reads. */
export interface XdcrStatsOptions extends StatsOptions {
  readonly fast_stats: readonly string[];
  readonly slow_stats_interval: number;
}

interface ReplicationOutcome {
  readonly values: ItemValues | undefined;
  readonly failed: number;
  readonly total: number;
  readonly firstError: unknown;
}

/** Polls one replication's stats due this poll. */
async function pollReplication(ctx: StatsContext<XdcrStatsOptions>, plan: TierPlan, r: ReplicationId): Promise<ReplicationOutcome> {
  let memo = ctx.state.get(r.id) as ReplicationMemo | undefined;
  if (memo === undefined) {
    memo = { polls: 0, stats: new Map() };
    ctx.state.set(r.id, memo);
  }
  const m = memo.stats;
  const due = statsDue(plan, memo.polls);
  memo.polls++;
  const zoomOf = (stat: string): Zoom => (plan.fast.has(stat) ? plan.fastZoom : plan.slowZoom);
  const settled = await Promise.allSettled(due.map((s) => fetchStat(ctx, zoomOf(s.stat), r, s.stat, m.get(s.stat)?.sample)));
  let failed = 0;
  let firstError: unknown;
  const results: StatResult[] = [];
  settled.forEach((res, i) => {
    const stat = due[i]?.stat ?? '';
    if (res.status === 'fulfilled') {
      results.push(res.value);
      return;
    }
    // One stat's failure leaves out only that stat of this replication (past the poll's deadline every request
    // fails: that is the poll's failure, not the items'). A slow stat's kept values go too: what it showed is no
    // longer known to be true.
    failed++;
    firstError ??= res.reason;
    const prev = m.get(stat);
    if (prev !== undefined) m.set(stat, { sample: prev.sample });
    if (!ctx.signal.aborted) ctx.itemFailed(`${r.id} ${stat}`, res.reason);
  });
  if (failed === 0 && results.length > 0 && results.every((x) => x.kind === 'not_found')) {
    // The source bucket (or the replication) went away after the tasks list was read.
    ctx.skipped('replication_gone', r.id);
    ctx.state.delete(r.id);
    return { values: undefined, failed, total: due.length, firstError };
  }
  const item: ItemValues = { sets: new Map(), newest: undefined };
  for (const res of results) {
    if (res.kind === 'not_found') {
      ctx.skipped('stat_not_found', `${r.id} ${res.stat}`);
      m.delete(res.stat);
      continue;
    }
    const fast = plan.fast.has(res.stat);
    const got = envelopeXdcrStatValues({
      sourceBucket: r.sourceBucket,
      stat: res.stat,
      envelope: res.envelope,
      memo: m.get(res.stat)?.sample,
      now: ctx.now(),
      intervalMs: fast ? ctx.options.interval : plan.slowIntervalMs,
      stepMs: zoomOf(res.stat).stepMs,
      skipped: (reason, detail) => ctx.skipped(reason, `${r.id}: ${detail ?? ''}`),
    });
    if (got === undefined) continue;
    for (const [node, v] of got.values) setOf(item, node).set(res.stat, v);
    const keep = !fast && XDCR_STAT_BY_NAME.get(res.stat)?.kind !== 'rate';
    m.set(res.stat, keep && got.last !== undefined ? { sample: got.memo, held: got.values, heldSampleAt: got.last } : { sample: got.memo });
    if (got.last !== undefined && (item.newest === undefined || got.last > item.newest)) item.newest = got.last;
  }
  // Slow levels and counts between their polls: the values of their last answer, and how old the oldest is.
  const askedNow = new Set(due.map((s) => s.stat));
  for (const [stat, sm] of m) {
    if (plan.fast.has(stat) || sm.held === undefined || sm.heldSampleAt === undefined) continue;
    if (!askedNow.has(stat)) for (const [node, v] of sm.held) setOf(item, node).set(stat, v);
    if (sm.held.size > 0 && (item.kept === undefined || sm.heldSampleAt < item.kept)) item.kept = sm.heldSampleAt;
  }
  return { values: item, failed, total: due.length, firstError };
}

/**
 * How many replications are polled at once. Each brings `perReplication` requests (at most; 20 without a slow
 * tier); the client pool runs `concurrency` of them at a time, so twice that many queued keeps the pool busy while
 * a finished replication makes room for the next. Starting all replications at once would queue every request
 * of the poll with their closures, abort listeners and half-read envelopes for no gain in speed, only in peak
 * memory.
 */
export function replicationsInFlight(concurrency: number, perReplication: number = XDCR_STATS.length): number {
  return Math.max(2, Math.ceil((2 * Math.max(1, concurrency)) / Math.max(1, perReplication)));
}

/**
 * Run `job` over `items` with at most `limit` at a time, starting none after `signal` aborted; every started job
 * settles before this resolves.
 */
async function forEachBounded<T>(items: readonly T[], limit: number, signal: AbortSignal, job: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !signal.aborted) {
      const i = next++;
      await job(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The envelope source's answer for every replication of the tasks list. */
export async function envelopeXdcrSource(ctx: StatsContext<XdcrStatsOptions>, replications: readonly ReplicationId[]): Promise<SourceValues> {
  const plan = planTiers(ctx.options.fast_stats, ctx.options.interval, ctx.options.slow_stats_interval);
  // A replication's first poll asks every stat (statsDue): size the replications in flight for that.
  const perReplication = replications.some((r) => !ctx.state.has(r.id)) ? XDCR_STATS.length : mostStatsPerPoll(plan);
  let failed = 0;
  let total = 0;
  let firstError: unknown;
  const got: Array<ItemValues | undefined> = [];
  await forEachBounded(replications, replicationsInFlight(ctx.cluster.concurrency, perReplication), ctx.signal, async (r, i) => {
    const res = await pollReplication(ctx, plan, r);
    got[i] = res.values;
    failed += res.failed;
    total += res.total;
    firstError ??= res.firstError;
  });
  if (ctx.signal.aborted) throw ctx.signal.reason;
  // Every stat request of every replication failed: nothing of this poll is true, so the poll fails.
  if (total > 0 && failed === total) throw firstError;
  const items = new Map<string, ItemValues>();
  replications.forEach((r, i) => {
    const v = got[i];
    if (v !== undefined) items.set(r.id, v);
  });
  return { items, kindOf: (stat) => kindOfSample(XDCR_STAT_BY_NAME.get(stat)?.kind) };
}
