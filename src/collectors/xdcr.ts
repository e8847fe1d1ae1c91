/**
 * Collector `xdcr`: every outgoing XDCR replication of the cluster, per source node, with the 20 XDCR stat
 * names of the REST reference; the remote cluster references; each replication's state from the tasks list.
 *
 * Requests per poll: 1 tasks list (shared with the `tasks` collector through `fetchTasks`) + 1 remote cluster
 * list + the statistics, from the cluster's statistics source (src/stats/source.ts), for the replications of the
 * tasks list:
 * - the sample envelopes (src/stats/envelope-xdcr.ts): per replication the stats due this poll, one request each,
 *   in a fast tier (every poll) and a slow tier (once per `slow_stats_interval`; with the defaults 6 requests per
 *   replication a poll instead of 20), slow levels and counts given again between their polls;
 * - on 7.0+, the range API (src/stats/range-source.ts): one batch of range requests for every replication and
 *   every stat that has a native equivalent, every poll (every server line's names in that one batch on a
 *   cluster mid-upgrade).
 * Both answer neutral values (src/stats/values.ts), mapped here the same way: each stat's value per node into its
 * family, in its base unit; `couchbase_xdcr_last_sample_timestamp_seconds` is the newest sample among the
 * replication's answers of this poll, and `couchbase_xdcr_slow_stats_sample_timestamp_seconds` how old the oldest
 * value given again is. The sources' memos live in ctx.state under the replication id, forgotten when it leaves
 * the tasks list.
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
 * id that does not split into three parts, a duplicate id, a node whose samples are all null, a replication gone
 * between the tasks list and its statistics. A stat that could not be read leaves out only that stat's series of
 * that replication and is counted by ctx.itemFailed. The poll fails when the tasks list or the remote cluster list
 * fails, or when the source could read nothing.
 */
import { notAnObject } from '../couchbase/source.js';
import { fetchTasks } from '../couchbase/tasks.js';
import type { Task } from '../couchbase/tasks.js';
import { parseReplicationId, REMOTE_CLUSTERS_ROUTE, remoteClusterSchema, remoteClustersSchema, XDCR_STAT_BY_NAME, XDCR_STATS } from '../couchbase/xdcr.js';
import type { RemoteCluster, ReplicationId, XdcrStatEnvelope } from '../couchbase/xdcr.js';
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, Labels, SampleSet } from '../metrics/family.js';
import { oneHot } from './helpers.js';
import type { Collector, Skip } from './types.js';
import { forgetGone } from './util.js';
import { envelopeXdcrSource, envelopeXdcrStatValues } from '../stats/envelope-xdcr.js';
import type { XdcrStatInput } from '../stats/envelope-xdcr.js';
import { rangeXdcrSource } from '../stats/range-source.js';
import type { SampleMemo } from '../stats/samples.js';
import { toBaseUnit } from '../stats/samples.js';
import { statsValues } from '../stats/source.js';
import type { ItemValues } from '../stats/values.js';

const C = 'xdcr';

export const REPLICATION_LABELS = ['source_bucket', 'target_cluster_uuid', 'target_cluster_name', 'target_bucket'] as const;
const NODE_LABELS = [...REPLICATION_LABELS, 'node'];

/** One family per XDCR stat name, keyed by Couchbase's stat name. */
export const STAT_FAMILIES: ReadonlyMap<string, FamilyDef> = new Map(
  XDCR_STATS.map((s) => [s.stat, defineFamily(C, s.metric, s.kind === 'cumulative' ? 'counter' : 'gauge', s.help, NODE_LABELS, s.unit)]),
);

/** Replication states Couchbase's tasks list uses; another value appears under its own name. */
export const REPLICATION_STATUSES = ['running', 'paused', 'notRunning'] as const;
/** Security of a remote reference (docs: "Secure a Replication"); another value appears under its own name. */
export const SECURE_TYPES = ['none', 'half', 'full'] as const;
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
  remoteSecureType: defineFamily(
    C,
    'couchbase_xdcr_remote_cluster_secure_type',
    'gauge',
    'How replication to the remote cluster is secured, one-hot over none (password and data in clear), half (password protected, data in clear) and full (TLS for the data too).',
    ['target_cluster_name', 'target_cluster_uuid', 'secure_type'],
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
      // An entry that is not an object is refused without zod (a million `1,` entries: 3 s with it).
      const wrong = notAnObject(r);
      const p = wrong === undefined ? remoteClusterSchema.safeParse(r) : undefined;
      if (p === undefined || !p.success) skip('bad_remote_cluster', `entry #${i}: ${p === undefined ? wrong : (p.error.issues[0]?.message ?? 'does not parse')}`);
      return p?.success === true ? p.data : undefined;
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
    oneHot(out, F.remoteSecureType, base, 'secure_type', SECURE_TYPES, secureTypeOf(r));
    const prev = names.get(r.uuid);
    if (prev === undefined || (prev.deleted && !deleted)) names.set(r.uuid, { name: r.name, deleted });
  }
  return new Map([...names].map(([uuid, v]) => [uuid, v.name]));
}

/**
 * `secureType` where Couchbase gives it; from an older answer's `demandEncryption` (false: none) and
 * `encryptionType` (default full, what a secured reference meant before half existed); else unknown.
 */
export function secureTypeOf(r: RemoteCluster): string | undefined {
  if (r.secureType !== undefined) return r.secureType;
  if (r.demandEncryption === undefined) return undefined;
  if (r.demandEncryption === false || r.demandEncryption === 0) return 'none';
  return r.encryptionType ?? 'full';
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

/** One XDCR stat envelope for mapReplicationStat: what the envelope source reads, under the series' labels. */
export type MapStatInput = Omit<XdcrStatInput, 'sourceBucket' | 'skipped'> & {
  readonly labels: Labels;
  readonly skipped?: Skip;
  /**
   * The labels of one node's series: `labels` plus `node`. A poll passes one labels object per node for all of
   * a replication's stats, so the renderer formats each once (default: a new object per series).
   */
  readonly nodeLabels?: (node: string) => Labels;
};

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

/** Pure: one replication's neutral values to samples (each node's values, the newest and the oldest kept sample's times). */
export function mapReplicationValues(labels: Labels, item: ItemValues, out: SampleSink, nodeLabels: (node: string) => Labels = nodeLabelsOf(labels)): void {
  for (const [node, values] of item.sets) {
    for (const [stat, v] of values) {
      const family = STAT_FAMILIES.get(stat);
      const spec = XDCR_STAT_BY_NAME.get(stat);
      if (family === undefined || spec === undefined || v === undefined) continue;
      out.add(family, nodeLabels(node), toBaseUnit(v, spec.scale));
    }
  }
  if (item.newest !== undefined) out.add(F.lastSample, labels, item.newest / 1000);
  if (item.kept !== undefined) out.add(F.slowSample, labels, item.kept / 1000);
}

/**
 * Pure mapping of one stat envelope of one replication to one sample per node, as a poll through the envelope
 * source maps it (envelopeXdcrStatValues): the latest sample for levels and counts, the mean of the new samples
 * for rates (none when the answer brought no new sample).
 */
export function mapReplicationStat(input: MapStatInput, out: SampleSink): MapStatResult {
  const got = envelopeXdcrStatValues({ ...input, sourceBucket: input.labels.source_bucket ?? '' });
  if (got === undefined) return { memo: undefined, last: undefined };
  const family = STAT_FAMILIES.get(input.stat);
  const spec = XDCR_STAT_BY_NAME.get(input.stat);
  if (family !== undefined && spec !== undefined) for (const [node, v] of got.values) out.add(family, input.nodeLabels ? input.nodeLabels(node) : { ...input.labels, node }, toBaseUnit(v, spec.scale));
  return { memo: got.memo, last: got.last };
}

export const xdcrCollector: Collector<'xdcr'> = {
  name: 'xdcr',
  defaultInterval: 30_000,
  families: [...STAT_FAMILIES.values(), ...Object.values(F)],
  role: 'Read-Only Admin (ro_admin): cluster.xdcr.remote_clusters!read and cluster.bucket[<source>].stats!read for every source bucket',
  description: 'Every XDCR replication per source node (the 20 XDCR stats, from the statistics source), its state and errors, and the remote cluster references.',
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
    if (replications.length === 0) return;
    const values = await statsValues(ctx, replications, { range: rangeXdcrSource, envelope: envelopeXdcrSource });
    for (const r of replications) {
      const item = values.items.get(r.id);
      if (item !== undefined) mapReplicationValues(r.labels, item, ctx.out);
    }
  },
};
