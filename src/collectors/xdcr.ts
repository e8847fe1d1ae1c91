/**
 * Collector `xdcr`: every outgoing XDCR replication of the cluster, per source node, with the 20 XDCR stat
 * names of the REST reference; the remote cluster references; each replication's state from the tasks list.
 *
 * Requests per poll (request planning): 1 tasks list (shared with the `tasks` collector through `fetchTasks`)
 * + 1 remote cluster list + per replication the stats due this poll, all through the cluster's bounded client
 * pool. The stats come in two tiers (planTiers): the fast tier (`fast_stats`, by default the XDCR stats the alerts
 * and the XDCR dashboard's first row read, and the rates a dashboard graphs) every poll; the others once per
 * `slow_stats_interval`, each at its own poll of that period so the slow requests spread evenly. Defaults (30 s,
 * 4 fast stats, 16 slow ones, 4 min): 6 stat requests per replication every poll, instead of 20.
 * Sampling follows samples.ts, per tier: the zoom covers the tier's interval; after a stat's first answer each
 * request carries `haveTStamp` (a little before its previous newest sample), levels are the latest sample, rates
 * the mean of the samples since that stat's previous answer (so a slow-tier rate is exact over its own period),
 * and an answer with no new sample leaves the rates out (it never re-emits old values as fresh).
 * Between its polls a slow-tier level or count is exported again with its last answer's values (a series that
 * came and went with every slow poll would flap in Prometheus); a slow-tier rate is not (it was the mean of
 * samples that are no longer new), nor anything whose last ask failed. `couchbase_xdcr_slow_stats_sample_timestamp_seconds`
 * says how old the oldest kept value is; `couchbase_xdcr_last_sample_timestamp_seconds` is the newest sample among
 * the replication's answers of this poll. The memos live in ctx.state under the replication id, forgotten when it
 * leaves the tasks list.
 *
 * Why the per-stat endpoint and not the bucket stats envelope: some server versions also list cluster-wide
 * replication sums among the source bucket's samples (keys `replications/…`), but only the per-stat endpoint
 * gives the per-node breakdown. `GET /settings/replications/{id}` is not read: its one state field
 * (`pauseRequested`) is in the tasks list too, and reading it would add a request per replication.
 *
 * Labels: `source_bucket`, `target_cluster_uuid`, `target_cluster_name` (from the remote cluster reference
 * with that uuid; empty when none is known), `target_bucket` (+ `node` for the stat families). The uuid is in
 * every label set, so two replications from one bucket to two remote clusters whose buckets share a name stay
 * two series even when both references carry the same name.
 *
 * Bad input is skipped and counted (ctx.skipped), never fatal and never blanking the other replications: an
 * id that does not split into three parts, a duplicate id, a node whose samples are all null, a 404 on a
 * replication's stats (the source bucket or the replication went away between the tasks list and the stats
 * request). A stat request that fails (4xx/5xx, timeout, a body that does not parse) leaves out only that
 * stat's series of that replication and is counted by ctx.itemFailed. The poll fails when the tasks list or the
 * remote cluster list fails, or when every stat request of the poll failed.
 */
import { fetchTasks } from '../couchbase/tasks.js';
import type { Task } from '../couchbase/tasks.js';
import {
  destinationEndpoint,
  parseReplicationId,
  REMOTE_CLUSTERS_ROUTE,
  remoteClusterSchema,
  remoteClustersSchema,
  XDCR_STAT_BY_NAME,
  XDCR_STAT_ROUTE,
  XDCR_STATS,
  xdcrStatEnvelopeSchema,
} from '../couchbase/xdcr.js';
import type { ReplicationId, XdcrStatEnvelope, XdcrStatSpec } from '../couchbase/xdcr.js';
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, Labels, SampleSet } from '../metrics/family.js';
import { oneHot } from './helpers.js';
import { alignedFrom, haveTStampFor, reduceSamples, sampleWindow, zoomFor } from './samples.js';
import type { SampleMemo, Zoom } from './samples.js';
import type { CollectContext, Collector, Skip } from './types.js';
import { forgetGone, settleAll } from './util.js';
import { fetchXdcrRange } from '../stats/envelopes.js';
import type { XdcrRange } from '../stats/envelopes.js';
import { rangeOrEnvelope } from '../stats/source.js';

const C = 'xdcr';

export const REPLICATION_LABELS = ['source_bucket', 'target_cluster_uuid', 'target_cluster_name', 'target_bucket'] as const;
const NODE_LABELS = [...REPLICATION_LABELS, 'node'];

/** One family per XDCR stat name, keyed by Couchbase's stat name. */
export const STAT_FAMILIES: ReadonlyMap<string, FamilyDef> = new Map(
  XDCR_STATS.map((s) => [s.stat, defineFamily(C, s.metric, s.kind === 'cumulative' ? 'counter' : 'gauge', s.help, NODE_LABELS, s.unit)]),
);

/** Replication states Couchbase's tasks list uses; another value appears under its own name. */
export const REPLICATION_STATUSES = ['running', 'paused', 'notRunning'] as const;
/** Remote reference connectivity (7.1+); another value appears under its own name. */
export const CONNECTIVITY_STATUSES = ['RC_OK', 'RC_DEGRADED', 'RC_AUTH_ERR', 'RC_ERROR'] as const;

export const F = {
  remoteInfo: defineFamily(
    C,
    'couchbase_xdcr_remote_cluster_info',
    'gauge',
    'A remote cluster reference (XDCR destination), value 1, with its host.',
    ['target_cluster_name', 'target_cluster_uuid', 'hostname'],
    'info',
  ),
  remoteDeleted: defineFamily(
    C,
    'couchbase_xdcr_remote_cluster_deleted',
    'gauge',
    'Whether the remote cluster reference is marked deleted (replications may still point at its uuid).',
    ['target_cluster_name', 'target_cluster_uuid'],
  ),
  remoteConnectivity: defineFamily(
    C,
    'couchbase_xdcr_remote_cluster_connectivity_status',
    'gauge',
    'Connectivity of the remote cluster reference as Couchbase 7.1+ reports it, one-hot over RC_OK, RC_DEGRADED, RC_AUTH_ERR and RC_ERROR.',
    ['target_cluster_name', 'target_cluster_uuid', 'status'],
  ),
  paused: defineFamily(
    C,
    'couchbase_xdcr_replication_paused',
    'gauge',
    'Whether the replication is paused (pause requested, or status paused in the tasks list).',
    REPLICATION_LABELS,
  ),
  errors: defineFamily(
    C,
    'couchbase_xdcr_replication_errors',
    'gauge',
    'Number of errors the tasks list currently shows for the replication (the messages themselves are in the XDCR log).',
    REPLICATION_LABELS,
    'count',
  ),
  status: defineFamily(
    C,
    'couchbase_xdcr_replication_status',
    'gauge',
    'Replication state from the tasks list, one-hot over running, paused and notRunning.',
    [...REPLICATION_LABELS, 'status'],
  ),
  taskChangesLeft: defineFamily(
    C,
    'couchbase_xdcr_task_changes_left',
    'gauge',
    'Mutations still to be replicated, cluster-wide, as the tasks list reports it (changesLeft); couchbase_xdcr_changes_left has the per-node breakdown.',
    REPLICATION_LABELS,
    'count',
  ),
  taskDocsChecked: defineFamily(
    C,
    'couchbase_xdcr_task_docs_checked_total',
    'counter',
    'Documents checked, cluster-wide, as the tasks list reports it (docsChecked). Counts since the pipeline last started; a restart reads as a counter reset.',
    REPLICATION_LABELS,
    'count',
  ),
  taskDocsWritten: defineFamily(
    C,
    'couchbase_xdcr_task_docs_written_total',
    'counter',
    'Documents written to the destination, cluster-wide, as the tasks list reports it (docsWritten). Counts since the pipeline last started; a restart reads as a counter reset.',
    REPLICATION_LABELS,
    'count',
  ),
  lastSample: defineFamily(
    C,
    'couchbase_xdcr_last_sample_timestamp_seconds',
    'gauge',
    "Time of the newest sample among the replication's stat answers (lastTStamp, on the answering node's clock). It stops moving when Couchbase's XDCR stats stop advancing, while the exporter keeps polling successfully.",
    REPLICATION_LABELS,
    'timestamp_seconds',
  ),
  slowSample: defineFamily(
    C,
    'couchbase_xdcr_slow_stats_sample_timestamp_seconds',
    'gauge',
    "Time of the oldest sample among the replication's slow-tier levels and counts exported now (lastTStamp of the answer each came from; between a stat's polls its last answer's values are exported again): those series are no older than this.",
    REPLICATION_LABELS,
    'timestamp_seconds',
  ),
} as const satisfies Record<string, FamilyDef>;


/** Where a mapper writes its samples: a SampleSet, or a stand-in that also records them. */
export type SampleSink = Pick<SampleSet, 'add'>;

export interface Replication extends ReplicationId {
  readonly labels: Labels;
}

/**
 * GET /pools/default/remoteClusters → samples. Pure. Returns uuid → reference name, preferring a live
 * reference over a deleted one with the same uuid.
 */
export function mapRemoteClusters(raw: readonly unknown[], out: SampleSet, skip: Skip): Map<string, string> {
  const names = new Map<string, { name: string; deleted: boolean }>();
  const seen = new Set<string>();
  // Live references first, so one deleted and one live reference with the same name and uuid keep the live one.
  const parsed = raw
    .map((r, i) => {
      const p = remoteClusterSchema.safeParse(r);
      if (!p.success) skip('bad_remote_cluster', `entry #${i}: ${p.error.issues[0]?.message ?? 'does not parse'}`);
      return p.success ? p.data : undefined;
    })
    .filter((r) => r !== undefined)
    .sort((a, b) => Number(a.deleted === true) - Number(b.deleted === true));
  for (const r of parsed) {
    const key = `${r.name}\u0000${r.uuid}`;
    if (seen.has(key)) {
      skip('duplicate_remote_cluster', `${r.name} (${r.uuid})`);
      continue;
    }
    seen.add(key);
    const deleted = r.deleted === true;
    const base = { target_cluster_name: r.name, target_cluster_uuid: r.uuid };
    out.add(F.remoteInfo, { ...base, hostname: r.hostname ?? '' }, 1);
    out.add(F.remoteDeleted, base, r.deleted);
    oneHot(out, F.remoteConnectivity, base, 'status', CONNECTIVITY_STATUSES, r.connectivityStatus);
    const prev = names.get(r.uuid);
    if (prev === undefined || (prev.deleted && !deleted)) names.set(r.uuid, { name: r.name, deleted });
  }
  return new Map([...names].map(([uuid, v]) => [uuid, v.name]));
}

function pausedOf(t: Task): boolean | undefined {
  if (t.pauseRequested === undefined && t.status === undefined) return undefined;
  return t.pauseRequested === true || t.status === 'paused';
}

/**
 * The XDCR entries of the tasks list → the replications to poll, plus their task-level samples. Pure.
 * `names` maps a remote cluster uuid to its reference name.
 */
export function mapReplicationTasks(tasks: readonly Task[], names: ReadonlyMap<string, string>, out: SampleSet, skip: Skip): Replication[] {
  const out_: Replication[] = [];
  const ids = new Set<string>();
  for (const t of tasks) {
    if (t.type !== 'xdcr') continue;
    const r = t.id === undefined ? undefined : parseReplicationId(t.id);
    if (r === undefined) {
      skip('bad_replication_id', t.id ?? '(no id)');
      continue;
    }
    if (ids.has(r.id)) {
      skip('duplicate_replication', r.id);
      continue;
    }
    ids.add(r.id);
    const labels: Labels = {
      source_bucket: r.sourceBucket,
      target_cluster_uuid: r.remoteUuid,
      target_cluster_name: names.get(r.remoteUuid) ?? '',
      target_bucket: r.targetBucket,
    };
    out.add(F.paused, labels, pausedOf(t));
    out.add(F.errors, labels, t.errors?.length);
    oneHot(out, F.status, labels, 'status', REPLICATION_STATUSES, t.status);
    out.add(F.taskChangesLeft, labels, t.changesLeft);
    out.add(F.taskDocsChecked, labels, t.docsChecked);
    out.add(F.taskDocsWritten, labels, t.docsWritten);
    out_.push({ ...r, labels });
  }
  return out_;
}

export interface MapStatInput {
  readonly labels: Labels;
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
  readonly skipped?: Skip;
  /**
   * The labels of one node's series: `labels` plus `node`. A poll passes one labels object per node for all of
   * a replication's stats, so the renderer formats each once (default: a new object per series).
   */
  readonly nodeLabels?: (node: string) => Labels;
}

/** `labels` plus `node`, one object per node for as long as this function is kept (one replication's poll). */
export function nodeLabelsOf(labels: Labels): (node: string) => Labels {
  const byNode = new Map<string, Labels>();
  return (node) => {
    let l = byNode.get(node);
    if (l === undefined) {
      l = { ...labels, node };
      byNode.set(node, l);
    }
    return l;
  };
}

export interface MapStatResult {
  /** What to remember for the next poll (undefined: ask for a full window next time). */
  readonly memo: SampleMemo | undefined;
  /** The answer's newest sample time (epoch ms). */
  readonly last: number | undefined;
}

/**
 * Pure mapping of one stat envelope of one replication to one sample per node: the latest sample for levels
 * and counts, the mean of the new samples for rates (none when the answer brought no new sample).
 */
export function mapReplicationStat(input: MapStatInput, out: SampleSink): MapStatResult {
  const skip = input.skipped ?? (() => undefined);
  const spec = XDCR_STAT_BY_NAME.get(input.stat);
  const family = STAT_FAMILIES.get(input.stat);
  if (spec === undefined || family === undefined) {
    skip('unknown_stat', input.stat);
    return { memo: undefined, last: undefined };
  }
  const env = input.envelope;
  const ts = env.timestamp;
  const intervalMs = input.intervalMs ?? 60_000;
  const now = input.now ?? (input.memo ? input.memo.at + intervalMs : 0);
  const win = sampleWindow(ts, env.lastTStamp, input.memo, now, intervalMs, input.stepMs ?? 1_000);
  const nodeStats = env.nodeStats;
  if (nodeStats === undefined) {
    skip('no_node_stats', `${input.labels.source_bucket ?? ''} ${input.stat}`);
    return { memo: win.memo, last: win.last };
  }
  for (const [node, raw] of Object.entries(nodeStats)) {
    if (!Array.isArray(raw)) {
      skip('bad_node_samples', `${input.stat} on ${node}`);
      continue;
    }
    const arr = raw as unknown[];
    // Arrays are aligned on the newest sample: a node that joined late has a shorter history.
    const from = ts === undefined ? 0 : alignedFrom(win.from, ts.length, arr.length);
    const v = reduceSamples(spec, arr, from, win.fresh);
    if (v === undefined) {
      if (spec.kind !== 'rate' || win.fresh) skip('null_samples', `${input.stat} on ${node}`);
      continue;
    }
    out.add(family, input.nodeLabels ? input.nodeLabels(node) : { ...input.labels, node }, v);
  }
  return { memo: win.memo, last: win.last };
}

type StatResult = { kind: 'ok'; stat: string; envelope: XdcrStatEnvelope } | { kind: 'not_found'; stat: string };

async function fetchStat(ctx: CollectContext<'xdcr'>, zoom: Zoom, r: Replication, stat: string, memo: SampleMemo | undefined): Promise<StatResult> {
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
  const phase = new Map(
    XDCR_STATS.filter((s) => !fast.has(s.stat)).map((s, j) => [s.stat, j % every] as const),
  );
  return { fast, phase, every, fastZoom: zoomFor(intervalMs), slowZoom: zoomFor(every * intervalMs), slowIntervalMs: every * intervalMs };
}

/** The stats asked at the `poll`-th poll (0-based) of a replication, in table order. */
export function statsDue(plan: TierPlan, poll: number): XdcrStatSpec[] {
  return XDCR_STATS.filter((s) => plan.fast.has(s.stat) || plan.phase.get(s.stat) === poll % plan.every);
}

/** The most stats any one poll asks per replication (for sizing the requests in flight). */
export function mostStatsPerPoll(plan: TierPlan): number {
  // Phases are dealt round-robin, so phase 0 holds the most slow stats.
  return plan.fast.size + Math.ceil(plan.phase.size / plan.every);
}

/** What is remembered per stat of a replication between polls. */
interface StatMemo {
  /** The sampling memo (samples.ts) of this stat's tier. */
  readonly sample?: SampleMemo | undefined;
  /**
   * Slow tier, levels and counts only: the values of its last answer, exported again at the polls in between.
   * A rate is never kept (it is the mean of samples that are no longer new), nor anything after a failed ask.
   */
  readonly held?: readonly { readonly node: string; readonly value: number }[] | undefined;
  /** The newest sample time (epoch ms) of the answer `held` came from. */
  readonly heldSampleAt?: number | undefined;
}

/** Per replication, between polls: how many polls it has had, and the memo of each of its stats. */
interface ReplicationMemo {
  polls: number;
  readonly stats: Map<string, StatMemo>;
}

/**
 * A SampleSet stand-in that records what a slow-tier stat emitted per node, and passes it on. Only the node is
 * kept, not the labels: the replication's labels are rebuilt every poll (a renamed remote cluster reference must
 * not leave kept series under its old name).
 */
function recording(out: SampleSink, into: { node: string; value: number }[]): SampleSink {
  return {
    add(def: FamilyDef, labels: Labels, value: number | null | undefined | boolean) {
      if (typeof value === 'number' && Number.isFinite(value)) into.push({ node: labels.node ?? '', value });
      out.add(def, labels, value);
    },
  };
}

/** Polls one replication's stats due this poll; returns how many stat requests failed and how many were made. */
async function pollReplication(ctx: CollectContext<'xdcr'>, plan: TierPlan, r: Replication, range?: XdcrRange): Promise<{ failed: number; total: number; firstError: unknown }> {
  let memo = ctx.state.get(r.id) as ReplicationMemo | undefined;
  if (memo === undefined) {
    memo = { polls: 0, stats: new Map() };
    ctx.state.set(r.id, memo);
  }
  const m = memo.stats;
  // With the range source, every stat that has a native equivalent, every poll, from this poll's batch.
  const due = range === undefined ? statsDue(plan, memo.polls) : statsDue(plan, memo.polls).filter((s) => range.envelope(r.id, s.stat) !== undefined);
  memo.polls++;
  const zoomOf = (stat: string): Zoom => (plan.fast.has(stat) ? plan.fastZoom : plan.slowZoom);
  const settled = await settleAll(
    due.map((s) =>
      range === undefined
        ? fetchStat(ctx, zoomOf(s.stat), r, s.stat, m.get(s.stat)?.sample)
        : Promise.resolve<StatResult>({ kind: 'ok', stat: s.stat, envelope: range.envelope(r.id, s.stat) as XdcrStatEnvelope }),
    ),
  );
  let failed = 0;
  let firstError: unknown;
  const results: StatResult[] = [];
  settled.forEach((res, i) => {
    const stat = due[i]?.stat ?? '';
    if (res.status === 'fulfilled') {
      results.push(res.value);
      return;
    }
    // One stat's failure leaves out only that stat's series of this replication (past the poll's deadline every
    // request fails: that is the poll's failure, not the items'). A slow stat's kept values go too: what it
    // showed is no longer known to be true.
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
    return { failed, total: due.length, firstError };
  }
  let newest: number | undefined;
  const nodeLabels = nodeLabelsOf(r.labels);
  for (const res of results) {
    if (res.kind === 'not_found') {
      ctx.skipped('stat_not_found', `${r.id} ${res.stat}`);
      m.delete(res.stat);
      continue;
    }
    const fast = plan.fast.has(res.stat);
    const spec = XDCR_STAT_BY_NAME.get(res.stat);
    const keep = !fast && spec !== undefined && spec.kind !== 'rate';
    const held: { node: string; value: number }[] = [];
    const { memo: sample, last } = mapReplicationStat(
      {
        labels: r.labels,
        stat: res.stat,
        envelope: res.envelope,
        memo: m.get(res.stat)?.sample,
        now: ctx.now(),
        intervalMs: fast ? ctx.options.interval : plan.slowIntervalMs,
        stepMs: zoomOf(res.stat).stepMs,
        skipped: (reason, detail) => ctx.skipped(reason, `${r.id}: ${detail ?? ''}`),
        nodeLabels,
      },
      keep ? recording(ctx.out, held) : ctx.out,
    );
    m.set(res.stat, keep && last !== undefined ? { sample, held, heldSampleAt: last } : { sample });
    if (last !== undefined && (newest === undefined || last > newest)) newest = last;
  }
  if (newest !== undefined) ctx.out.add(F.lastSample, r.labels, newest / 1000);
  // Slow levels and counts between their polls: the values of their last answer, and how old the oldest is.
  const askedNow = new Set(due.map((s) => s.stat));
  let oldestSlow: number | undefined;
  for (const [stat, sm] of m) {
    if (plan.fast.has(stat) || sm.held === undefined || sm.heldSampleAt === undefined) continue;
    const family = STAT_FAMILIES.get(stat);
    if (family === undefined) continue;
    if (!askedNow.has(stat)) for (const h of sm.held) ctx.out.add(family, nodeLabels(h.node), h.value);
    if (sm.held.length > 0 && (oldestSlow === undefined || sm.heldSampleAt < oldestSlow)) oldestSlow = sm.heldSampleAt;
  }
  if (oldestSlow !== undefined) ctx.out.add(F.slowSample, r.labels, oldestSlow / 1000);
  return { failed, total: due.length, firstError };
}

/**
 * How many replications are polled at once. Each brings `perReplication` requests (at most; 20 without a slow
 * tier); the client pool runs `concurrency` of them at a time, so twice that many queued keeps the pool busy while
 * a finished replication makes room for the next. Starting all replications at once would queue every request
 * of the poll (4 000 for 200 replications without tiers) with their closures, abort listeners and half-read
 * envelopes for no gain in speed, only in peak memory.
 */
export function replicationsInFlight(concurrency: number, perReplication: number = XDCR_STATS.length): number {
  return Math.max(2, Math.ceil((2 * Math.max(1, concurrency)) / Math.max(1, perReplication)));
}

/**
 * Run `job` over `items` with at most `limit` at a time, starting none after `signal` aborted; every started job
 * settles before this resolves.
 */
async function forEachBounded<T>(items: readonly T[], limit: number, signal: AbortSignal, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !signal.aborted) await job(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export const xdcrCollector: Collector<'xdcr'> = {
  name: 'xdcr',
  defaultInterval: 30_000,
  families: [...STAT_FAMILIES.values(), ...Object.values(F)],
  role: 'Read-Only Admin (ro_admin): cluster.xdcr.remote_clusters!read and cluster.bucket[<source>].stats!read for every source bucket',
  description: 'Every XDCR replication per source node (the 20 XDCR stats, in a fast and a slow tier), its state and errors, and the remote cluster references.',
  async collect(ctx) {
    // The two lists are independent: fetch them together, and let neither run on after the other failed.
    const tasksP = fetchTasks(ctx);
    const refsP = ctx.client.getJson(REMOTE_CLUSTERS_ROUTE, {}, remoteClustersSchema);
    await Promise.allSettled([tasksP, refsP]);
    const tasks = await tasksP;
    const refs = await refsP;
    const names = mapRemoteClusters(refs, ctx.out, (r, d) => ctx.skipped(r, d));
    const replications = mapReplicationTasks(tasks, names, ctx.out, (r, d) => ctx.skipped(r, d));
    forgetGone(ctx.state, new Set(replications.map((r) => r.id)));
    // Cluster 7.0+ (stats_source auto or range): one range request for every replication, every stat each poll.
    const range = replications.length === 0 ? undefined : await rangeOrEnvelope(ctx, fetchXdcrRange);
    const plan =
      range === undefined
        ? planTiers(ctx.options.fast_stats, ctx.options.interval, ctx.options.slow_stats_interval)
        : planTiers(ctx.options.fast_stats, ctx.options.interval, ctx.options.interval);
    let failed = 0;
    let total = 0;
    let firstError: unknown;
    await forEachBounded(replications, replicationsInFlight(ctx.cluster.concurrency, mostStatsPerPoll(plan)), ctx.signal, async (r) => {
      const res = await pollReplication(ctx, plan, r, range);
      failed += res.failed;
      total += res.total;
      firstError ??= res.firstError;
    });
    if (ctx.signal.aborted) throw ctx.signal.reason;
    // Every stat request of every replication failed: nothing of this poll is true, so the poll fails.
    if (total > 0 && failed === total) throw firstError;
  },
};
