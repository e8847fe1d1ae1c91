/**
 * Collector `xdcr`: every outgoing XDCR replication of the cluster, per source node, with the 20 XDCR stat
 * names of the REST reference; the remote cluster references; each replication's state from the tasks list.
 *
 * Requests per poll (request planning): 1 tasks list (shared with the `tasks` collector through `fetchTasks`)
 * + 1 remote cluster list + replications × 20 stat envelopes, all through the cluster's bounded client pool.
 * After the first poll each stat request carries `haveTStamp=<lastTStamp of the previous answer>`, so only
 * new samples travel; the previous timestamp (and the last value per node, re-used when nothing new arrived)
 * is kept per replication and stat in ctx.state and forgotten when the replication leaves the tasks list.
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
 * id that does not split into three parts, a duplicate id, a stat envelope that does not parse, a node whose
 * samples are all null, a 404 on a replication's stats (the source bucket or the replication went away
 * between the tasks list and the stats request). Any other failing request fails the poll.
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
import { RequestError } from '../errors.js';
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, Labels, SampleSet } from '../metrics/family.js';
import { oneHot } from './nodes.js';
import { finite, firstNewIndex, latest, mean } from './samples.js';
import type { CollectContext, Collector } from './types.js';

const C = 'xdcr';

export const REPLICATION_LABELS = ['source_bucket', 'target_cluster_uuid', 'target_cluster_name', 'target_bucket'] as const;
const NODE_LABELS = [...REPLICATION_LABELS, 'node'];

/** One family per XDCR stat name, keyed by Couchbase's stat name. */
export const STAT_FAMILIES: ReadonlyMap<string, FamilyDef> = new Map(
  XDCR_STATS.map((s) => [s.stat, defineFamily(C, s.metric, 'gauge', s.help, NODE_LABELS, s.unit)]),
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
    'couchbase_xdcr_task_docs_checked',
    'gauge',
    'Documents checked, cluster-wide, as the tasks list reports it (docsChecked). Cumulative since the pipeline last started; resets when it restarts, hence a gauge.',
    REPLICATION_LABELS,
    'count',
  ),
  taskDocsWritten: defineFamily(
    C,
    'couchbase_xdcr_task_docs_written',
    'gauge',
    'Documents written to the destination, cluster-wide, as the tasks list reports it (docsWritten). Cumulative since the pipeline last started; resets when it restarts, hence a gauge.',
    REPLICATION_LABELS,
    'count',
  ),
} as const satisfies Record<string, FamilyDef>;

export type Skip = (reason: string, detail?: string) => void;

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

/** What is remembered per replication and stat between polls. */
export interface StatMemo {
  /** lastTStamp of the previous answer: the next request's `haveTStamp`. */
  readonly t: number;
  /** The values emitted last time, per node: re-emitted when an answer brings no new sample. */
  readonly values: ReadonlyArray<readonly [string, number]>;
}

export interface MapStatInput {
  readonly labels: Labels;
  readonly stat: string;
  readonly envelope: XdcrStatEnvelope;
  /** The previous poll's memo; undefined on the first poll (then every sample counts as new). */
  readonly previous?: StatMemo | undefined;
  readonly skipped?: Skip;
}

/** One value from one node's samples: the mean of the new ones for rates, the latest for levels. */
export function reduceXdcrSamples(spec: Pick<XdcrStatSpec, 'kind' | 'scale'>, arr: readonly unknown[], from: number): number | undefined {
  // Levels look at the whole array (the latest value is the latest, new or not); rates only at new samples.
  const v = spec.kind === 'rate' ? mean(arr, from) : latest(arr);
  return v === undefined ? undefined : v * spec.scale;
}

/**
 * Pure mapping of one stat envelope of one replication to one sample per node. Returns the memo for the next
 * poll (undefined when the envelope has no timestamp at all, so the next request asks for the full minute).
 */
export function mapReplicationStat(input: MapStatInput, out: SampleSet): StatMemo | undefined {
  const skip = input.skipped ?? (() => undefined);
  const spec = XDCR_STAT_BY_NAME.get(input.stat);
  const family = STAT_FAMILIES.get(input.stat);
  if (spec === undefined || family === undefined) {
    skip('unknown_stat', input.stat);
    return undefined;
  }
  const env = input.envelope;
  const ts = env.timestamp;
  const lastRaw = finite(env.lastTStamp) && env.lastTStamp > 0 ? env.lastTStamp : ts === undefined ? undefined : latest(ts);
  const previous = input.previous;
  // With haveTStamp an answer may carry no sample at all (polled within the same second): nothing changed.
  if (previous !== undefined && ts !== undefined && ts.length === 0) {
    for (const [node, v] of previous.values) out.add(family, { ...input.labels, node }, v);
    return previous;
  }
  const nodeStats = env.nodeStats;
  if (nodeStats === undefined) {
    skip('no_node_stats', `${input.labels.source_bucket ?? ''} ${input.stat}`);
    return lastRaw === undefined ? undefined : { t: lastRaw, values: [] };
  }
  const newFrom = firstNewIndex(ts, previous?.t);
  const values: Array<readonly [string, number]> = [];
  for (const [node, raw] of Object.entries(nodeStats)) {
    if (!Array.isArray(raw)) {
      skip('bad_node_samples', `${input.stat} on ${node}`);
      continue;
    }
    const arr = raw as unknown[];
    // Arrays are aligned on the newest sample: a node that joined late has a shorter history.
    const from = ts === undefined || newFrom === 0 ? 0 : newFrom - (ts.length - arr.length);
    const v = reduceXdcrSamples(spec, arr, from);
    if (v === undefined) {
      skip('null_samples', `${input.stat} on ${node}`);
      continue;
    }
    out.add(family, { ...input.labels, node }, v);
    values.push([node, v]);
  }
  return lastRaw === undefined ? undefined : { t: lastRaw, values };
}

const MEMO = 'memo:';

function memoKey(id: string, stat: string): string {
  return `${MEMO}${id}\u0000${stat}`;
}

/** Forget the memos of replications that left the tasks list, so a re-created one starts afresh. */
function forgetGone(state: Map<string, unknown>, present: ReadonlySet<string>): void {
  for (const key of [...state.keys()]) {
    if (!key.startsWith(MEMO)) continue;
    const id = key.slice(MEMO.length).split('\u0000')[0] ?? '';
    if (!present.has(id)) state.delete(key);
  }
}

function forgetReplication(state: Map<string, unknown>, id: string): void {
  for (const s of XDCR_STATS) state.delete(memoKey(id, s.stat));
}

type StatResult = { kind: 'ok'; stat: string; envelope: XdcrStatEnvelope } | { kind: 'not_found'; stat: string } | { kind: 'bad'; stat: string; detail: string };

async function fetchStat(ctx: CollectContext<'xdcr'>, r: Replication, stat: string): Promise<StatResult> {
  const memo = ctx.state.get(memoKey(r.id, stat)) as StatMemo | undefined;
  const query: Record<string, string | number> = { zoom: 'minute' };
  if (memo !== undefined) query.haveTStamp = memo.t;
  try {
    const res = await ctx.client.requestJson(
      XDCR_STAT_ROUTE,
      { bucket: r.sourceBucket, destination_endpoint: destinationEndpoint(r, stat) },
      xdcrStatEnvelopeSchema,
      { query, allowStatus: [404] },
    );
    if (res.status === 404 || res.data === undefined) return { kind: 'not_found', stat };
    return { kind: 'ok', stat, envelope: res.data };
  } catch (err) {
    // One unparseable envelope is bad input for one stat of one replication, not a reason to fail the poll.
    if (err instanceof RequestError && err.code === 'CBW_ERR_SCHEMA') return { kind: 'bad', stat, detail: err.message };
    throw err;
  }
}

async function pollReplication(ctx: CollectContext<'xdcr'>, r: Replication): Promise<void> {
  const results = await settleAll(XDCR_STATS.map((s) => fetchStat(ctx, r, s.stat)));
  if (results.every((x) => x.kind === 'not_found')) {
    // The source bucket (or the replication) went away after the tasks list was read.
    ctx.skipped('replication_gone', r.id);
    forgetReplication(ctx.state, r.id);
    return;
  }
  for (const res of results) {
    const key = memoKey(r.id, res.stat);
    if (res.kind === 'not_found') {
      ctx.skipped('stat_not_found', `${r.id} ${res.stat}`);
      ctx.state.delete(key);
      continue;
    }
    if (res.kind === 'bad') {
      ctx.skipped('bad_envelope', `${r.id} ${res.stat}: ${res.detail}`);
      ctx.state.delete(key);
      continue;
    }
    const memo = mapReplicationStat(
      {
        labels: r.labels,
        stat: res.stat,
        envelope: res.envelope,
        previous: ctx.state.get(key) as StatMemo | undefined,
        skipped: (reason, detail) => ctx.skipped(reason, `${r.id}: ${detail ?? ''}`),
      },
      ctx.out,
    );
    if (memo === undefined) ctx.state.delete(key);
    else ctx.state.set(key, memo);
  }
}

/**
 * How many replications are polled at once. Each brings 20 requests; the client pool runs `concurrency` of them
 * at a time, so twice that many queued keeps the pool busy while a finished replication makes room for the next.
 * Starting all replications at once would queue replications x 20 requests (4 000 for 200) with their closures,
 * abort listeners and half-read envelopes for no gain in speed, only in peak memory.
 */
export function replicationsInFlight(concurrency: number): number {
  return Math.max(2, Math.ceil((2 * Math.max(1, concurrency)) / XDCR_STATS.length));
}

/** Run `job` over `items` with at most `limit` at a time; every started job settles before the first error is thrown. */
async function forEachBounded<T>(items: readonly T[], limit: number, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await job(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.err;
}

/** Wait for every job before failing with the first error, so no request is left running into the next poll. */
async function settleAll<T>(jobs: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(jobs);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

export const xdcrCollector: Collector<'xdcr'> = {
  name: 'xdcr',
  defaultInterval: 30_000,
  families: [...STAT_FAMILIES.values(), ...Object.values(F)],
  role: 'Read-Only Admin (ro_admin): cluster.xdcr.remote_clusters!read and cluster.bucket[<source>].stats!read for every source bucket',
  description: 'Every XDCR replication per source node (the 20 XDCR stats), its state and errors, and the remote cluster references.',
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
    await forEachBounded(replications, replicationsInFlight(ctx.cluster.concurrency), (r) => pollReplication(ctx, r));
  },
};
