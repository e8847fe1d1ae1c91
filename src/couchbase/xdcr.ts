/**
 * XDCR: remote cluster references (GET /pools/default/remoteClusters), the per-replication statistics
 * (GET /pools/default/buckets/{source}/stats/{destination_endpoint}) and the table of the 20 XDCR stat names.
 *
 * `destination_endpoint` is `replications/{remote_uuid}/{source_bucket}/{destination_bucket}/{stat}` and must
 * travel as ONE path segment: the client encodes each route parameter with encodeURIComponent, so `/` becomes
 * `%2F` and a `%` in a bucket name becomes `%25` (bucket names may hold `.`, `-`, `_` and `%`).
 *
 * Units and kinds follow goxdcr, which has produced these stats since 4.0 (its `service_def` stats table):
 * latencies and the checkpoint time are milliseconds (exported as seconds); bandwidth_usage, rate_replicated
 * and rate_received_from_dcp are per-second rates (mean of the new samples); the others are levels (latest
 * non-null sample). The REST reference calls time_committing "seconds elapsed during replication" (the 2.x
 * wording); goxdcr reports it as the rolling average time of a checkpoint in milliseconds, which is what is
 * converted here.
 *
 * The document and checkpoint counts (docs_written, docs_checked, data_replicated, num_checkpoints…) are
 * cumulative counts of the current pipeline: they grow while it runs and restart (from 0, or from the last
 * checkpoint) when it restarts — after a pause, an error, a topology change or an XDCR process restart. They
 * are exported as `_total` counters with their latest sample: `rate()`/`increase()` is what users reach for,
 * and a pipeline restart reads as a counter reset, which those functions handle.
 */
import { z } from 'zod';
import { uncheckedArray, uncheckedRecord } from './unchecked.js';

export const REMOTE_CLUSTERS_ROUTE = '/pools/default/remoteClusters';
/** `{destination_endpoint}` is the whole `replications/…/{stat}` path, encoded as one segment. */
export const XDCR_STAT_ROUTE = '/pools/default/buckets/{bucket}/stats/{destination_endpoint}';

/** One remote cluster reference. The `username` is read by Couchbase but never needed (nor exported) here. */
export const remoteClusterSchema = z.looseObject({
  name: z.string(),
  uuid: z.string(),
  hostname: z.string().optional(),
  deleted: z.boolean().optional(),
  uri: z.string().optional(),
  /** 7.1+: RC_OK, RC_DEGRADED, RC_ERROR, RC_AUTH_ERR… */
  connectivityStatus: z.string().optional(),
  /** `none`, `half` (the password is protected, the data is not) or `full` (TLS for the data too). */
  secureType: z.string().optional(),
  /** Before secureType: whether the reference is secured at all, and how (`half`/`full`). */
  demandEncryption: z.union([z.boolean(), z.number()]).optional(),
  encryptionType: z.string().optional(),
});

/**
 * The list is parsed item by item in the collector (an odd entry is skipped, not fatal), so the array schema
 * accepts anything inside.
 */
export const remoteClustersSchema = uncheckedArray();
/** The list with every entry checked: what the collector's per-entry parse accepts (conformance tests). */
export const remoteClusterListSchema = z.array(remoteClusterSchema);
export type RemoteCluster = z.output<typeof remoteClusterSchema>;

/**
 * One stat's envelope. `nodeStats` maps `host:port` to one sample per `timestamp` entry (null for a second the
 * node had no value). Values stay `unknown`: the mapper checks each array itself, so a bad node is skipped and
 * a poll of 4000 envelopes does not pay for a deep zod walk.
 */
export const xdcrStatEnvelopeSchema = z.looseObject({
  samplesCount: z.number().optional(),
  isPersistent: z.boolean().optional(),
  lastTStamp: z.number().optional(),
  interval: z.number().optional(),
  timestamp: uncheckedArray().optional(),
  nodeStats: uncheckedRecord().optional(),
});
export type XdcrStatEnvelope = z.output<typeof xdcrStatEnvelopeSchema>;

/**
 * `level`: the latest non-null sample. `rate`: the mean of the samples newer than the previous poll.
 * `cumulative`: the latest sample of a count that grows within one pipeline run (a counter).
 */
export type XdcrStatKind = 'level' | 'rate' | 'cumulative';

export interface XdcrStatSpec {
  /** Couchbase's name: the last element of the destination endpoint. */
  readonly stat: string;
  /** Family name (with its unit suffix). */
  readonly metric: string;
  readonly kind: XdcrStatKind;
  /** Multiplier from Couchbase's unit to the base unit (0.001 for milliseconds). */
  readonly scale: number;
  /** For the docs: count, bytes, seconds, per_second, bytes_per_second. */
  readonly unit: string;
  readonly help: string;
}

const RESET_NOTE = 'Counts since the replication pipeline last started; a restart (pause, error, topology change) reads as a counter reset.';

function spec(stat: string, metric: string, kind: XdcrStatKind, scale: number, unit: string, help: string): XdcrStatSpec {
  return Object.freeze({ stat, metric, kind, scale, unit, help: kind === 'cumulative' ? `${help} ${RESET_NOTE}` : help });
}

/** The 20 XDCR stat names of the REST reference, in its order. */
export const XDCR_STATS: readonly XdcrStatSpec[] = Object.freeze([
  spec('bandwidth_usage', 'couchbase_xdcr_bandwidth_usage_bytes_per_second', 'rate', 1, 'bytes_per_second', 'Bytes per second sent by the replication (bandwidth_usage), per source node.'),
  spec('changes_left', 'couchbase_xdcr_changes_left', 'level', 1, 'count', 'Mutations still to be replicated (changes_left): the backlog of the replication on each source node.'),
  spec('data_replicated', 'couchbase_xdcr_data_replicated_bytes_total', 'cumulative', 1, 'bytes', 'Bytes replicated to the destination (data_replicated).'),
  spec('docs_checked', 'couchbase_xdcr_docs_checked_total', 'cumulative', 1, 'count', 'Documents checked for changes (docs_checked): sequence numbers considered checkpointed on the node.'),
  spec('docs_failed_cr_source', 'couchbase_xdcr_docs_failed_cr_source_total', 'cumulative', 1, 'count', 'Documents not replicated because they lost conflict resolution on the source (docs_failed_cr_source).'),
  spec('docs_filtered', 'couchbase_xdcr_docs_filtered_total', 'cumulative', 1, 'count', 'Documents filtered out and not replicated (docs_filtered).'),
  spec('docs_opt_repd', 'couchbase_xdcr_docs_opt_repd_total', 'cumulative', 1, 'count', 'Documents sent optimistically, without a metadata check (docs_opt_repd).'),
  spec('docs_received_from_dcp', 'couchbase_xdcr_docs_received_from_dcp_total', 'cumulative', 1, 'count', 'Documents received from DCP by the replication (docs_received_from_dcp).'),
  spec('docs_rep_queue', 'couchbase_xdcr_docs_rep_queue', 'level', 1, 'count', 'Documents waiting in the replication queue (docs_rep_queue).'),
  spec('docs_processed', 'couchbase_xdcr_docs_processed_total', 'cumulative', 1, 'count', 'Documents processed by the replication pipeline (docs_processed).'),
  spec('docs_written', 'couchbase_xdcr_docs_written_total', 'cumulative', 1, 'count', 'Documents written to the destination by XDCR (docs_written).'),
  spec(
    'meta_latency_wt',
    'couchbase_xdcr_meta_latency_wt',
    'level',
    1,
    'count',
    'meta_latency_wt as Couchbase reports it, without unit conversion: the weight behind the weighted average time to request document metadata (see couchbase_xdcr_wtavg_meta_latency_seconds for the latency itself).',
  ),
  spec('num_checkpoints', 'couchbase_xdcr_num_checkpoints_total', 'cumulative', 1, 'count', 'Checkpoints completed (num_checkpoints).'),
  spec('num_failedckpts', 'couchbase_xdcr_num_failedckpts_total', 'cumulative', 1, 'count', 'Checkpoints that failed (num_failedckpts).'),
  spec('rate_received_from_dcp', 'couchbase_xdcr_rate_received_from_dcp_per_second', 'rate', 1, 'per_second', 'Documents per second received from DCP (rate_received_from_dcp).'),
  spec('rate_replicated', 'couchbase_xdcr_rate_replicated_per_second', 'rate', 1, 'per_second', 'Documents per second replicated to the destination (rate_replicated).'),
  spec('size_rep_queue', 'couchbase_xdcr_size_rep_queue_bytes', 'level', 1, 'bytes', 'Bytes waiting in the replication queue (size_rep_queue).'),
  spec(
    'time_committing',
    'couchbase_xdcr_time_committing_seconds',
    'level',
    0.001,
    'seconds',
    'Rolling average time a checkpoint takes to commit (time_committing; Couchbase reports milliseconds).',
  ),
  spec(
    'wtavg_docs_latency',
    'couchbase_xdcr_wtavg_docs_latency_seconds',
    'level',
    0.001,
    'seconds',
    'Weighted average latency of sending changes to the destination (wtavg_docs_latency; Couchbase reports milliseconds).',
  ),
  spec(
    'wtavg_meta_latency',
    'couchbase_xdcr_wtavg_meta_latency_seconds',
    'level',
    0.001,
    'seconds',
    'Weighted average time to request document metadata for conflict resolution (wtavg_meta_latency; Couchbase reports milliseconds).',
  ),
]);

export const XDCR_STAT_BY_NAME: ReadonlyMap<string, XdcrStatSpec> = new Map(XDCR_STATS.map((s) => [s.stat, s]));

/** The 20 stat names, as a non-empty tuple for the configuration schema's enum. */
export const XDCR_STAT_NAMES = XDCR_STATS.map((s) => s.stat) as [string, ...string[]];

/**
 * The stats polled every interval by default (the fast tier): the XDCR stats the alerts of alerts/rules/ read
 * (changes_left: CouchbaseXdcrBacklogHigh, CouchbaseXdcrBacklogGrowing, CouchbaseXdcrReplicationStuck;
 * rate_replicated: CouchbaseXdcrReplicationStuck), those of the XDCR dashboard's first row, "Backlog"
 * (changes_left, docs_rep_queue), and the rates a dashboard graphs (rate_replicated, bandwidth_usage): a
 * slow-tier rate is absent between its polls, so a panel of one would show isolated points. Slow-tier levels and
 * counts keep their last value between polls, so the latency panels can stay on the slow tier.
 * test/collectors/xdcr-tiers.test.ts reads the rules and the dashboards and fails when one of those stats is
 * missing here. The other 16 are polled on the slow tier.
 */
export const DEFAULT_FAST_XDCR_STATS: readonly string[] = Object.freeze(['bandwidth_usage', 'changes_left', 'docs_rep_queue', 'rate_replicated']);

/**
 * Default period of the slow tier, ms. With 4 fast stats and the default 30 s interval, 4 min spreads the 16
 * slow stats over 8 polls, 2 each, so every poll asks 6 stats per replication.
 */
export const DEFAULT_XDCR_SLOW_STATS_INTERVAL = 240_000;

/** A replication as identified by the tasks list: `<remote_uuid>/<source_bucket>/<destination_bucket>`. */
export interface ReplicationId {
  readonly id: string;
  readonly remoteUuid: string;
  readonly sourceBucket: string;
  readonly targetBucket: string;
}

/**
 * Split a replication id into its three parts. Bucket names never contain `/`, so anything but exactly three
 * non-empty parts is not a replication id this exporter understands.
 */
export function parseReplicationId(id: string): ReplicationId | undefined {
  const parts = id.split('/');
  if (parts.length !== 3) return undefined;
  const [remoteUuid, sourceBucket, targetBucket] = parts as [string, string, string];
  if (remoteUuid === '' || sourceBucket === '' || targetBucket === '') return undefined;
  return { id, remoteUuid, sourceBucket, targetBucket };
}

/** The `destination_endpoint` route parameter (left unencoded: the client encodes it as one segment). */
export function destinationEndpoint(r: ReplicationId, stat: string): string {
  return `replications/${r.remoteUuid}/${r.sourceBucket}/${r.targetBucket}/${stat}`;
}
