/**
 * Bucket endpoints answered from the bucket model `ctx.buckets` (scaled by the `buckets` option):
 *   GET /pools/default/buckets                          list, shaped like netdata-go.d-6.6.0.json (+ 7.6 fields)
 *   GET /pools/default/buckets/:bucket                  one entry of that list
 *   GET /pools/default/buckets/:bucket/nodes            the bucket's servers (docs-server-6.5plus.json)
 *   GET /pools/default/buckets/:bucket/stats            stats envelope, shaped like bucket-stats/telegraf-2021.json
 *   GET /pools/default/buckets/:bucket/nodes/:node/stats  the same for one node, plus `hostname`
 * Unknown bucket or node: 404 with Couchbase's text body. A bucket id that names a service section (`@query`,
 * `@index-<bucket>`, …) is answered by ./service-stats.ts. Tests may add or remove entries of ctx.buckets at
 * any time: every request reads the model afresh.
 *
 * Stats: `zoom` picks the sampling of the table in the REST reference (minute: 60 samples 1 s apart, the
 * default; hour: 900 × 4 s; day: 1440 × 1 min; week: 1152 × 10 min; month: 1488 × 30 min; year: 1464 × 6 h);
 * `haveTStamp` keeps only samples newer than it (the answer then carries `tstampParam`, as Couchbase's does).
 * Timestamps sit on whole multiples of the interval of the simulated clock. Load-balanced nodes with skewed
 * clocks and a stalled stats collector are knobs of ../sampling.ts; knob `bucketStatValues`
 * (`{ [stat]: (t) => number }`, t = real epoch ms) replaces the model of those stats in every bucket. `hot_keys` (10 keys) come with
 * zoom=minute only. Knob `statChurnPerAnswer` (../churn.ts) adds never-seen stat names to every envelope. The stat names are those of the real telegraf-2021 envelope (`statSet: 'fixture'`), or
 * also every name of the simulator's own list (../bucket-stat-names.ts: the reference's list and names seen in
 * other captures) plus two per-design-document keys `views/<id>/…` as 4.x-6.x send them (`statSet: 'full'`).
 * A 7.0+ profile leaves out the names a real 7.x envelope does not fill (../bucket-stat-names.ts
 * absentFromNativeEnvelope: ns_server builds that envelope from native series).
 *
 * Values are pure functions of (bucket, stat, sample time): slow sine waves around a per-bucket base drawn
 * from ctx.rand, or around the value of the real capture for stats with no model of their own. Nothing is
 * random per request, so two requests for the same second agree, and rates stay consistent with levels
 * (ops = gets + sets + …, hit_ratio = get_hits / cmd_get).
 *
 * Scenarios (deterministic; "bucket 0" is ctx.buckets[0], travel-sample by default):
 * - default: every bucket 20-45% of its quota, 100% resident, no OOM, no cache misses, a small steady disk
 *   queue, 5-15% fragmentation.
 * - demo: bucket 0 at 88% of its quota, 72% resident, 4% cache misses; bucket 1's disk-write queue grows
 *   by 5 items per simulated second since start; bucket 2 at 45% data fragmentation.
 * - incident: bucket 0 at 97% of its quota, 35% resident, 12% cache misses, 5 temporary OOM errors per
 *   second; bucket 1's disk-write queue grows by 20 items per simulated second since start.
 */
import { churnNames } from '../churn.js';
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { SIM_BUCKET_STATS, absentFromNativeEnvelope, simStatClass } from '../bucket-stat-names.js';
import { fixture } from '../fixtures.js';
import { sampleTimes } from '../sampling.js';
import type { SampleQuery } from '../sampling.js';
import { simProfile } from '../profiles.js';
import type { SimBucket, SimContext, SimModule, SimNode, SimProfile } from '../types.js';
import { bucketServers, gatherDelay, liveActiveNodes, liveBucketNodes, nodeEntry } from './cluster.js';
import { dcpStatAbsent, dcpTypesOf } from './dcp.js';
import { answerSection } from './service-stats.js';
import { xdcrSimReplications } from './xdcr.js';

const TWO_PI = 2 * Math.PI;

interface Profile {
  usedFrac: number;
  residentPct: number;
  missPct: number;
  tmpOomPerSec: number;
  queueBase: number;
  queueGrowthPerSec: number;
  fragPct: number;
  opsBase: number;
  items0: number;
  itemGrowthPerSec: number;
}

function profile(ctx: SimContext, index: number, r: (k: string) => number): Profile {
  const p: Profile = {
    usedFrac: 0.2 + 0.25 * r('used'),
    residentPct: 100,
    missPct: 0,
    tmpOomPerSec: 0,
    queueBase: Math.floor(5 + 20 * r('queue')),
    queueGrowthPerSec: 0,
    fragPct: 5 + 10 * r('frag'),
    opsBase: 100 + 900 * r('ops'),
    items0: 10_000 + Math.floor(90_000 * r('items')),
    itemGrowthPerSec: Math.round(1 + 4 * r('growth')),
  };
  const scenario = ctx.options.scenario;
  if (scenario === 'demo') {
    if (index === 0) Object.assign(p, { usedFrac: 0.88, residentPct: 72, missPct: 4 });
    if (index === 1) p.queueGrowthPerSec = 5;
    if (index === 2) p.fragPct = 45;
  } else if (scenario === 'incident') {
    if (index === 0) Object.assign(p, { usedFrac: 0.97, residentPct: 35, missPct: 12, tmpOomPerSec: 5 });
    if (index === 1) p.queueGrowthPerSec = 20;
  }
  return p;
}

type Gen = (t: number) => number;

interface Model {
  readonly key: string;
  /** The model's generator of any stat name (special or generic), whether or not the stat set serves it. */
  readonly gen: (stat: string) => Gen;
  readonly basic: (t: number) => Record<string, number>;
  /** Stat generators for the configured stat set, in envelope order. */
  readonly stats: ReadonlyArray<readonly [string, Gen]>;
  readonly hotKeys: ReadonlyArray<{ name: string; weight: number }>;
}

/**
 * Additive stats are split over nodes for the per-node answer; ratios, averages, ages and host stats are not.
 * A queue's total age (vb_<state>_queue_age, ms summed over its items) is a sum like the queue's size: split.
 */
function additive(stat: string): boolean {
  if (/^vb_(total|active|replica|pending)_queue_age$/.test(stat)) return true;
  // A view query reaches every node: each node counts all of them (hence get_aggregate_method's max).
  if (stat === 'couch_views_ops' || (stat.startsWith('views/') && stat.includes('/accesses'))) return false;
  const c = simStatClass(stat);
  return c !== 'percent' && c !== 'time' && c !== 'system';
}

function round(v: number): number {
  return Number.isInteger(v) ? v : Math.round(v * 1000) / 1000;
}

let templateCache: { names: string[]; last: Map<string, number> } | undefined;

/** Stat names and last values of the real captured envelope (telegraf 2021, a 6.x/7.0-era server). */
function template(): { names: string[]; last: Map<string, number> } {
  if (!templateCache) {
    const t = fixture<{ op: { samples: Record<string, unknown[]> } }>('bucket-stats/telegraf-2021.json');
    const last = new Map<string, number>();
    const names: string[] = [];
    for (const [k, arr] of Object.entries(t.op.samples)) {
      if (k === 'timestamp') continue;
      names.push(k);
      const v = arr[arr.length - 1];
      if (typeof v === 'number') last.set(k, v);
    }
    templateCache = { names, last };
  }
  return templateCache;
}

let fullNames: string[] | undefined;

function statNames(set: 'fixture' | 'full'): string[] {
  const { names } = template();
  if (set === 'fixture') return names;
  // Built once: every per-node value asks the model, and so this list, for its bucket.
  if (fullNames) return fullNames;
  const all = new Set(names);
  for (const names of Object.values(SIM_BUCKET_STATS)) for (const n of names) all.add(n);
  all.add('views/5a222b8c920aa5e3a28b51ee7eb609a0/accesses');
  all.add('views/5a222b8c920aa5e3a28b51ee7eb609a0/data_size');
  fullNames = [...all];
  return fullNames;
}

function kvNodes(ctx: SimContext): SimNode[] {
  return bucketServers(ctx);
}

function buildModel(ctx: SimContext, bucket: SimBucket, index: number, names: readonly string[]): Model {
  const r = (k: string): number => ctx.rand(`bucket:${bucket.name}:${k}`);
  const p = profile(ctx, index, r);
  const start = ctx.startedAt;
  const nodes = Math.max(1, kvNodes(ctx).length);
  const quota = bucket.ramQuotaBytes * nodes;
  const replicas = Math.min(bucket.replicaNumber, nodes - 1);
  const ephemeral = bucket.bucketType === 'ephemeral';
  // A sine of the given period with a per-bucket phase; the phase is hashed once here, not per sample.
  const wave = (periodMs: number, key: string): ((t: number) => number) => {
    const phase = TWO_PI * r(key);
    const k = TWO_PI / periodMs;
    return (t) => Math.sin(k * t + phase);
  };
  const since = (t: number): number => Math.max(0, (t - start) / 1000);
  // The same, with a phase shared by every bucket (node-level stats).
  const clusterWave = (periodMs: number, key: string): ((t: number) => number) => {
    const phase = TWO_PI * ctx.rand(`cluster:${key}`);
    const k = TWO_PI / periodMs;
    return (t) => Math.sin(k * t + phase);
  };

  const opsWave = wave(300_000, 'ops-phase');
  const ops: Gen = (t) => p.opsBase * (1 + 0.25 * opsWave(t));
  const cmdGet: Gen = (t) => ops(t) * 0.6;
  const cmdSet: Gen = (t) => ops(t) * 0.35;
  const getHits: Gen = (t) => cmdGet(t) * 0.98;
  const items: Gen = (t) => p.items0 + Math.floor(since(t) * p.itemGrowthPerSec);
  const memWave = wave(120_000, 'mem-phase');
  const memUsed: Gen = (t) => Math.round(quota * p.usedFrac * (1 + 0.01 * memWave(t)));
  const queueWave = wave(20_000, 'q-phase');
  const queue: Gen = (t) => Math.round(p.queueBase * (1 + 0.5 * queueWave(t)) + p.queueGrowthPerSec * since(t));
  const nonResident: Gen = (t) => Math.round(items(t) * (1 - p.residentPct / 100));
  const dataSize: Gen = (t) => (ephemeral ? 0 : items(t) * 900);
  const diskSize: Gen = (t) => (ephemeral ? 0 : Math.round(dataSize(t) / (1 - p.fragPct / 100)));
  const viewsSize: Gen = () => (ephemeral ? 0 : 800_000);

  const special: Record<string, Gen> = {
    ops,
    cmd_get: cmdGet,
    cmd_set: cmdSet,
    get_hits: getHits,
    get_misses: (t) => cmdGet(t) - getHits(t),
    hit_ratio: () => 98,
    // Background fetches are missPct of the reads the server line's ep_cache_miss_rate divides by
    // (computedStats below): the scenario's miss rate is what Couchbase's UI shows on that line.
    ep_bg_fetched: (t) => (missBase(t) * p.missPct) / 100,
    ep_cache_miss_rate: () => p.missPct,
    bytes_read: (t) => ops(t) * 120,
    bytes_written: (t) => ops(t) * 800,
    // Memcached's connection count is one per node for every bucket: the same curve in every bucket's model.
    curr_connections: ((w) => (t: number) => Math.round(20 + 5 * w(t)))(clusterWave(600_000, 'conn-phase')),
    mem_used: memUsed,
    ep_kv_size: (t) => Math.round(memUsed(t) * 0.8),
    ep_meta_data_memory: (t) => items(t) * 56,
    ep_overhead: (t) => Math.round(memUsed(t) * 0.05),
    ep_max_size: () => quota,
    ep_max_data_size: () => quota,
    ep_mem_high_wat: () => Math.round(quota * 0.85),
    ep_mem_low_wat: () => Math.round(quota * 0.75),
    curr_items: items,
    curr_items_tot: (t) => items(t) * (1 + replicas),
    vb_replica_curr_items: (t) => items(t) * replicas,
    vb_active_num: () => 1024,
    vb_replica_num: () => 1024 * replicas,
    ep_vb_total: () => 1024 * (1 + replicas),
    ep_resident_items_rate: () => p.residentPct,
    vb_active_resident_items_ratio: () => p.residentPct,
    vb_replica_resident_items_ratio: () => p.residentPct,
    vb_active_num_non_resident: nonResident,
    ep_num_non_resident: (t) => nonResident(t) * (1 + replicas),
    vb_replica_num_non_resident: (t) => nonResident(t) * replicas,
    ep_tmp_oom_errors: () => p.tmpOomPerSec,
    ep_oom_errors: () => 0,
    disk_write_queue: queue,
    ep_queue_size: queue,
    ep_diskqueue_items: queue,
    vb_active_queue_size: queue,
    vb_active_queue_age: (t) => queue(t) * 150,
    vb_total_queue_age: (t) => queue(t) * 150,
    vb_avg_active_queue_age: () => 0.15,
    vb_avg_total_queue_age: () => 0.15,
    ep_ops_create: () => p.itemGrowthPerSec,
    vb_active_ops_create: () => p.itemGrowthPerSec,
    ep_ops_update: (t) => cmdSet(t) - p.itemGrowthPerSec,
    vb_active_ops_update: (t) => cmdSet(t) - p.itemGrowthPerSec,
    ep_diskqueue_fill: (t) => cmdSet(t) + p.queueGrowthPerSec,
    ep_diskqueue_drain: (t) => cmdSet(t),
    couch_docs_data_size: dataSize,
    couch_docs_disk_size: diskSize,
    couch_docs_actual_disk_size: diskSize,
    couch_total_disk_size: (t) => diskSize(t) + viewsSize(t),
    couch_docs_fragmentation: () => (ephemeral ? 0 : Math.round(p.fragPct)),
    couch_views_actual_disk_size: viewsSize,
    couch_views_disk_size: viewsSize,
    couch_views_data_size: viewsSize,
    avg_bg_wait_time: () => (p.missPct > 0 ? 150 + 30 * p.missPct : 0),
    avg_disk_update_time: () => (ephemeral ? 0 : 320),
    avg_disk_commit_time: () => (ephemeral ? 0 : 0.012),
    vb_total_queue_size: queue,
    // Background fetches wait avg_bg_wait_time µs each; disk updates (one per drained item) take
    // avg_disk_update_time µs; one commit per second takes avg_disk_commit_time s: counts and totals agree.
    bg_wait_count: (t) => (missBase(t) * p.missPct) / 100,
    bg_wait_total: (t) => ((missBase(t) * p.missPct) / 100) * (p.missPct > 0 ? 150 + 30 * p.missPct : 0),
    disk_update_count: (t) => (ephemeral ? 0 : cmdSet(t)),
    disk_update_total: (t) => (ephemeral ? 0 : cmdSet(t) * 320),
    disk_commit_count: () => (ephemeral ? 0 : 1),
    disk_commit_total: () => (ephemeral ? 0 : 0.012 * 1e6),
  };

  const last = template().last;
  const generic = (stat: string): Gen => {
    const cls = simStatClass(stat);
    const v0 = last.get(stat);
    if (cls === 'system' && v0 !== undefined && v0 !== 0 && Number.isSafeInteger(Math.round(v0))) {
      // Host stats belong to the node, not the bucket: the same curve in every bucket's envelope.
      const w = clusterWave(180_000, `${stat}-phase`);
      const integral = Number.isInteger(v0);
      return (t) => {
        const v = v0 * (1 + 0.02 * w(t));
        return integral ? Math.round(v) : v;
      };
    }
    if (cls === 'percent') {
      const base = v0 ?? 100;
      if (base === 0 || base === 100) return () => base;
      const w = wave(90_000, `${stat}-phase`);
      return (t) => Math.min(100, base * (1 + 0.1 * w(t)));
    }
    if (v0 !== undefined) {
      if (v0 === 0 || !Number.isSafeInteger(Math.round(v0))) return () => v0;
      const amp = cls === 'rate' ? 0.2 : 0.02;
      const integral = Number.isInteger(v0);
      const w = wave(180_000, `${stat}-phase`);
      return (t) => {
        const v = v0 * (1 + amp * w(t));
        return integral ? Math.round(v) : v;
      };
    }
    if (cls === 'rate') return () => 0;
    if (cls === 'bytes') return () => Math.round(1_000_000 * r(stat));
    return () => 0;
  };

  // 7.x composes ops from kv_cmd_lookup (gets included) and kv_ops{op in set, incr, decr, delete, *_meta},
  // xdc_ops from the meta ops, misses from every op's misses: the model keeps those sums.
  const sumOf =
    (names: readonly string[]): Gen =>
    (t) =>
      names.reduce((a, n) => a + gen(n)(t), 0);
  const metaOps = ['ep_num_ops_set_meta', 'ep_num_ops_get_meta', 'ep_num_ops_del_meta', 'ep_num_ops_set_ret_meta', 'ep_num_ops_del_ret_meta'];
  const otherOps = sumOf(['incr_hits', 'incr_misses', 'decr_hits', 'decr_misses', 'delete_hits', 'delete_misses', ...metaOps]);
  special.cmd_lookup = (t) => ops(t) - cmdSet(t) - otherOps(t);
  special.xdc_ops = sumOf(metaOps.slice(0, 3));
  const otherMisses = sumOf(['incr_misses', 'decr_misses', 'delete_misses', 'cas_misses']);
  special.misses = (t) => cmdGet(t) - getHits(t) + otherMisses(t);
  // Host CPU time per one-second sample agrees with cpu_utilization_rate (ns_server's system_stats_collector:
  // utilization = 100 × (local − idle) / local): every core's 1,000 ms elapse each second, the busy part of them
  // as the rate says. The captured sample carries zeros here, which no running host reports beside a non-zero rate.
  const coresMs = Math.max(1, Math.round(last.get('cpu_cores_available') ?? 4)) * 1000;
  special.cpu_local_ms = () => coresMs;
  special.cpu_idle_ms = (t) => Math.round(coresMs * (1 - gen('cpu_utilization_rate')(t) / 100));
  const gens = new Map<string, Gen>();
  const gen = (n: string): Gen => {
    let g = gens.get(n);
    if (!g) {
      g = special[n] ?? generic(n);
      gens.set(n, g);
    }
    return g;
  };
  function missBase(t: number): number {
    return ctx.options.profile.cacheMiss === 'ep_bg_fetched/cmd_lookup' ? gen('cmd_lookup')(t) : cmdGet(t);
  }
  const stats = names.map((n) => [n, gen(n)] as const);
  const hotKeys = Array.from({ length: 10 }, (_, i) => ({ name: `${bucket.name}::doc::${1000 + Math.floor(9000 * r(`hk${i}`))}`, weight: 1 / (i + 1) }));
  return {
    key: `${bucket.uuid}:${names.length}`,
    gen,
    stats,
    hotKeys,
    basic: (t) => ({
      quotaPercentUsed: (memUsed(t) / quota) * 100,
      opsPerSec: round(ops(t)),
      diskFetches: round((missBase(t) * p.missPct) / 100),
      itemCount: items(t),
      diskUsed: diskSize(t) + viewsSize(t),
      dataUsed: dataSize(t),
      memUsed: memUsed(t),
      vbActiveNumNonResident: nonResident(t),
    }),
  };
}

function model(ctx: SimContext, bucket: SimBucket): Model {
  const names = statNames(ctx.options.statSet);
  const cache = ctx.area('buckets.models', () => new Map<string, Model>());
  const index = ctx.buckets.indexOf(bucket);
  const key = `${bucket.name}\u0000${bucket.uuid}\u0000${index}\u0000${names.length}`;
  let m = cache.get(key);
  if (!m) {
    m = buildModel(ctx, bucket, index, names);
    cache.set(key, m);
  }
  return m;
}

/**
 * The value of one legacy bucket stat at simulated time t (epoch ms), for the whole bucket: the knob
 * `bucketStatValues` if it names the stat, else the model. Rates are per second. The native metrics of
 * ../native.ts read the same function, so the envelope and the range API answer from one model.
 */
export function bucketStatGen(ctx: SimContext, bucket: SimBucket, stat: string): Gen {
  const overrides = ctx.options.knobs.bucketStatValues as Readonly<Record<string, Gen>> | undefined;
  return overrides?.[stat] ?? model(ctx, bucket).gen(stat);
}

/** Whether the per-node answer splits a stat between the data nodes (rates, counts, bytes) or repeats it. */
export function bucketStatAdditive(stat: string): boolean {
  return additive(stat);
}

/**
 * What a node's own per-second rate of `stat` is, as a multiple of the bucket model's: its share for a bucket
 * count, its host's factor for a host stat (rest requests), 1 for what every node sees whole.
 */
export function nodeRateScale(ctx: SimContext, stat: string, node: SimNode, share: number): number {
  if (simStatClass(stat) === 'system') return hostFactor(ctx, node);
  return additive(stat) ? share : 1;
}

/** Each data node's share of a bucket's additive stats (uneven, as real vBucket maps; they sum to 1). */
export function bucketNodeShares(ctx: SimContext): Array<{ node: SimNode; share: number }> {
  const nodes = kvNodes(ctx);
  const weights = nodes.map((_, j) => 1 + 0.1 * (j - (nodes.length - 1) / 2));
  const total = weights.reduce((a, w) => a + w, 0);
  return nodes.map((node, j) => ({ node, share: (weights[j] as number) / total }));
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

function bucketEntry(ctx: SimContext, b: SimBucket, nodeEntries: ReadonlyArray<Record<string, unknown>>, now: number): Record<string, unknown> {
  const name = enc(b.name);
  const base = `/pools/default/buckets/${name}`;
  const controllers: Record<string, string> = {};
  if (b.flushEnabled) controllers.flush = `${base}/controller/doFlush`;
  Object.assign(controllers, {
    compactAll: `${base}/controller/compactBucket`,
    compactDB: `${base}/controller/compactDatabases`,
    purgeDeletes: `${base}/controller/unsafePurgeBucket`,
    startRecovery: `${base}/controller/startRecovery`,
  });
  const nodes = kvNodes(ctx).length;
  const memcached = b.bucketType === 'memcached';
  const entry: Record<string, unknown> = {
    name: b.name,
    nodeLocator: memcached ? 'ketama' : 'vbucket',
    bucketType: b.bucketType,
    ...(b.bucketType === 'membase' ? { storageBackend: 'couchstore' } : {}),
    uuid: b.uuid,
    uri: `${base}?bucket_uuid=${b.uuid}`,
    streamingUri: `/pools/default/bucketsStreaming/${name}?bucket_uuid=${b.uuid}`,
    numVBuckets: memcached ? undefined : 1024,
    bucketCapabilitiesVer: '',
    bucketCapabilities: ['collections', 'durableWrite', 'tombstonedUserXAttrs', 'couchapi', 'dcp', 'cbhello', 'touch', 'cccp', 'xdcrCheckpointing', 'nodesExt', 'xattr'],
    collectionsManifestUid: '0',
    ddocs: { uri: `${base}/ddocs` },
    localRandomKeyUri: `${base}/localRandomKey`,
    controllers,
    nodes: nodeEntries.map((n) => ({
      ...n,
      couchApiBase: `http://${String(n.hostname).replace(/:\d+$/, '')}:8092/${name}%2B${b.uuid}`,
      couchApiBaseHTTPS: `https://${String(n.hostname).replace(/:\d+$/, '')}:18092/${name}%2B${b.uuid}`,
      replication: 1,
    })),
    stats: { uri: `${base}/stats`, directoryURI: `${base}/stats/Directory`, nodeStatsListURI: `${base}/nodes` },
    authType: 'sasl',
    // Real answers carry this (a generated secret); the collectors must never export it.
    saslPassword: createHash('md5').update(`sasl:${b.uuid}`).digest('hex'),
    autoCompactionSettings: false,
    replicaIndex: false,
    maxTTL: 0,
    compressionMode: 'passive',
    replicaNumber: b.replicaNumber,
    threadsNumber: 3,
    quota: { ram: b.ramQuotaBytes * nodes, rawRAM: b.ramQuotaBytes },
    basicStats: model(ctx, b).basic(now),
    evictionPolicy: b.bucketType === 'ephemeral' ? 'noEviction' : 'valueOnly',
    durabilityMinLevel: 'none',
    conflictResolutionType: 'seqno',
  };
  if (entry.numVBuckets === undefined) delete entry.numVBuckets;
  return entry;
}

function notFound(reply: FastifyReply): FastifyReply {
  // Couchbase's cluster manager answers an unknown bucket with a plain-text 404.
  return reply.code(404).type('text/plain').send('Requested resource not found.\r\n');
}

/**
 * How a stat merges across nodes: menelaus_stats.erl get_aggregate_method/1 (sum by default; max for
 * couch_views_ops, cpu_utilization_rate and a view's `accesses`, which every node of the view sees).
 */
export function simAggregateMethod(stat: string): 'sum' | 'max' {
  if (stat === 'couch_views_ops' || stat === 'cpu_utilization_rate') return 'max';
  if (stat.startsWith('views/') && stat.includes('/accesses')) return 'max';
  return 'sum';
}

interface Computed {
  readonly parts: readonly string[];
  readonly f: (v: readonly number[]) => number;
}

/** Erlang's `try A / B catch error:badarith -> Default`: a zero divisor gives the default. */
function div(a: number, b: number, dflt: number): number {
  return b === 0 ? dflt : a / b;
}

/**
 * The stats the envelope computes from other stats AFTER merging the nodes (menelaus_stats.erl
 * computed_stats_lazy_proplist/1, bucket clause: hit_ratio, ep_cache_miss_rate, ep_resident_items_rate, the
 * vb_avg_<state>_queue_age, vb_<state>_resident_items_ratio, avg_* times and drifts, couch_total_disk_size, both
 * fragmentations (round((Disk − Data) / Disk × 100)), ep_dcp_views+indexes_*). ep_cache_miss_rate by server line:
 * before 7.0 ep_bg_fetched / cmd_get; 7.0 to 7.6.7 ep_bg_fetched / cmd_lookup; 7.6.8 and 8.0 get_misses / cmd_get.
 */
function computedStats(cacheMiss: SimProfile['cacheMiss']): ReadonlyMap<string, Computed> {
  const m = new Map<string, Computed>();
  const z2 = (name: string, a: string, b: string, f: (x: number, y: number) => number): void => void m.set(name, { parts: [a, b], f: (v) => f(v[0] as number, v[1] as number) });
  z2('hit_ratio', 'cmd_get', 'get_hits', (gets, hits) => div(hits * 100, gets, 0));
  if (cacheMiss === 'get_misses/cmd_get') z2('ep_cache_miss_rate', 'get_misses', 'cmd_get', (x, y) => div(x * 100, y, 0));
  else if (cacheMiss === 'ep_bg_fetched/cmd_lookup') z2('ep_cache_miss_rate', 'ep_bg_fetched', 'cmd_lookup', (x, y) => div(x * 100, y, 0));
  else z2('ep_cache_miss_rate', 'ep_bg_fetched', 'cmd_get', (x, y) => div(x * 100, y, 0));
  const residence = (nonRes: number, total: number): number => div((total - nonRes) * 100, total, 100);
  z2('ep_resident_items_rate', 'ep_num_non_resident', 'curr_items_tot', residence);
  z2('vb_active_resident_items_ratio', 'vb_active_num_non_resident', 'curr_items', residence);
  z2('vb_replica_resident_items_ratio', 'vb_replica_num_non_resident', 'vb_replica_curr_items', residence);
  z2('vb_pending_resident_items_ratio', 'vb_pending_num_non_resident', 'vb_pending_curr_items', residence);
  for (const st of ['active', 'replica', 'pending']) z2(`vb_avg_${st}_queue_age`, `vb_${st}_queue_age`, `vb_${st}_queue_size`, (age, n) => div(age, n, 0) / (n === 0 ? 1 : 1000));
  z2('vb_avg_total_queue_age', 'vb_total_queue_age', 'ep_diskqueue_items', (age, n) => div(age, n, 0) / (n === 0 ? 1 : 1000));
  z2('couch_total_disk_size', 'couch_docs_actual_disk_size', 'couch_views_actual_disk_size', (a, b) => a + b);
  const frag = (data: number, disk: number): number => (disk === 0 ? 0 : Math.round(((disk - data) / disk) * 100));
  z2('couch_docs_fragmentation', 'couch_docs_data_size', 'couch_docs_disk_size', frag);
  z2('couch_views_fragmentation', 'couch_views_data_size', 'couch_views_disk_size', frag);
  z2('avg_disk_update_time', 'disk_update_total', 'disk_update_count', (t, c) => div(t, c, 0));
  z2('avg_disk_commit_time', 'disk_commit_total', 'disk_commit_count', (t, c) => div(t, c, 0) / (c === 0 ? 1 : 1e6));
  z2('avg_bg_wait_time', 'bg_wait_total', 'bg_wait_count', (t, c) => div(t, c, 0));
  z2('avg_active_timestamp_drift', 'ep_active_hlc_drift', 'ep_active_hlc_drift_count', (d, c) => div(d / 1e6, c, 0));
  z2('avg_replica_timestamp_drift', 'ep_replica_hlc_drift', 'ep_replica_hlc_drift_count', (d, c) => div(d / 1e6, c, 0));
  for (const x of ['count', 'items_remaining', 'producer_count', 'total_backlog_size', 'items_sent', 'total_bytes', 'backoff']) {
    m.set(`ep_dcp_views+indexes_${x}`, { parts: [`ep_dcp_views_${x}`, `ep_dcp_2i_${x}`, `ep_dcp_fts_${x}`], f: (v) => (v[0] as number) + (v[1] as number) + (v[2] as number) });
  }
  return m;
}

/**
 * The ep_cache_miss_rate formula of the node that serves the request (the simulator answers as `thisNode`): in a
 * cluster mid-upgrade across 7.6.8 ns_server computes the ratio once, on the serving node, with that node's own
 * computed_stats_lazy_proplist. A node version that does not parse gives the cluster profile's.
 */
export function servingCacheMiss(ctx: SimContext): SimProfile['cacheMiss'] {
  const serving = ctx.nodes.find((n) => n.thisNode) ?? ctx.nodes[0];
  const v = /^(\d+\.\d+\.\d+)/.exec(serving?.version ?? '')?.[1];
  return v === undefined ? ctx.options.profile.cacheMiss : simProfile(v).cacheMiss;
}

function computedFor(ctx: SimContext): ReadonlyMap<string, Computed> {
  const byFormula = ctx.area('buckets.computed', () => new Map<SimProfile['cacheMiss'], ReadonlyMap<string, Computed>>());
  const formula = servingCacheMiss(ctx);
  let m = byFormula.get(formula);
  if (!m) {
    m = computedStats(formula);
    byFormula.set(formula, m);
  }
  return m;
}

/**
 * A host's own stats differ between nodes (each node its own machine): node j gets 0.9 + 0.1 j + 0.03 j², uneven
 * so that no mean of some nodes equals the max or the mean of others by chance.
 */
function hostFactor(ctx: SimContext, node: SimNode): number {
  const j = Math.max(0, ctx.nodes.findIndex((n) => n.hostname === node.hostname));
  return 0.9 + 0.1 * j + 0.03 * j * j;
}

/** Host stats that are per-second rates of a node's own counter (stat_names_mappings.erl `@system`: rate()). */
const HOST_RATES: ReadonlySet<string> = new Set(['rest_requests', 'hibernated_waked']);

/** 7.2+: a node whose data file is smaller than this many bytes per vBucket reports its file size as its data size. */
const MIN_FILE_SIZE_PER_VBUCKET = 128 * 1024;

/**
 * The value of one legacy stat on ONE node at time t: what that node's own stats (its per-node envelope, and
 * through ../native.ts its native metrics) say. Bucket counts and rates are the node's share of the bucket's
 * (its vBuckets' part); a host stat is the node's own machine (the same in every bucket); a computed stat comes
 * from the node's own parts; anything else is the node's reading of the bucket-wide curve.
 * couch_docs_data_size on 7.2+ (stat_names_mappings.erl, the couch_docs_data_size clause of the 7.2.0 tree): while the node's data file (kv_ep_db_file_size_bytes) is under 128 KiB × its vBuckets
 * (kv_ep_vb_total), the file size is reported instead of kv_ep_db_data_size_bytes. `legacy` false: the value
 * of the node's own native metric, before ns_server's translation.
 */
export function nodeStatGen(ctx: SimContext, bucket: SimBucket, stat: string, node: SimNode, legacy = true, shares: ReadonlyMap<string, number> = sharesOf(ctx)): Gen {
  const overrides = ctx.options.knobs.bucketStatValues as Readonly<Record<string, Gen>> | undefined;
  const computed = overrides?.[stat] === undefined ? computedFor(ctx).get(stat) : undefined;
  if (computed) {
    const parts = computed.parts.map((p) => nodeStatGen(ctx, bucket, p, node, legacy, shares));
    return (t) => computed.f(parts.map((g) => g(t)));
  }
  const whole = bucketStatGen(ctx, bucket, stat);
  if (simStatClass(stat) === 'system') {
    // A machine of its own (SimNode.host): its fixed reading.
    const own = node.host?.[stat];
    if (own !== undefined) return () => own;
    const f = hostFactor(ctx, node);
    return (t) => {
      const v = whole(t);
      // Couchbase's "no value" marker (2^64 − 1, as a container's mem_limit reads) stays a marker on every node.
      if (Math.abs(v) >= 2 ** 63) return v;
      // A whole count stays whole on each host (cores, bytes); a rate per second (rest requests) does not.
      return Number.isInteger(v) && !HOST_RATES.has(stat) ? Math.round(v * f) : v * f;
    };
  }
  if (!additive(stat)) return whole;
  const share = shares.get(node.hostname) ?? 0;
  const own: Gen = (t) => whole(t) * share;
  // The rule belongs to ns_server's translation of the legacy name: the node's native kv_ep_db_data_size_bytes
  // (legacy = false, ../native.ts) stays the data size.
  if (stat === 'couch_docs_data_size' && legacy && ctx.options.profile.minFileSizeRule) {
    const file = nodeStatGen(ctx, bucket, 'couch_docs_disk_size', node, legacy, shares);
    const vbs = nodeStatGen(ctx, bucket, 'ep_vb_total', node, legacy, shares);
    return (t) => {
      const f = file(t);
      return f < MIN_FILE_SIZE_PER_VBUCKET * vbs(t) ? f : own(t);
    };
  }
  return own;
}

/**
 * One stat of the whole bucket's envelope at time t, as menelaus_stats builds it: each node's value, merged
 * with get_aggregate_method over the nodes that answered (bucket stats: ns_bucket:live_bucket_nodes, the
 * bucket's servers that are up; host stats: the active nodes that are up), then the computed stats from the
 * merged parts (computed_stats_lazy_proplist runs on the aggregate).
 */
interface EnvelopeNodes {
  readonly bucket: readonly SimNode[];
  readonly host: readonly SimNode[];
  readonly shares: ReadonlyMap<string, number>;
  /** The live servers' shares of the bucket, summed. */
  readonly liveShare: number;
}

function sharesOf(ctx: SimContext): Map<string, number> {
  return new Map(bucketNodeShares(ctx).map((s) => [s.node.hostname, s.share]));
}

function envelopeGen(ctx: SimContext, bucket: SimBucket, stat: string, nodes: EnvelopeNodes): Gen {
  const overrides = ctx.options.knobs.bucketStatValues as Readonly<Record<string, Gen>> | undefined;
  const computed = overrides?.[stat] === undefined ? computedFor(ctx).get(stat) : undefined;
  if (computed) {
    const parts = computed.parts.map((p) => envelopeGen(ctx, bucket, p, nodes));
    return (t) => computed.f(parts.map((g) => g(t)));
  }
  const system = simStatClass(stat) === 'system';
  const max = simAggregateMethod(stat) === 'max';
  // Shortcuts with the same sums: the live nodes' shares of an additive stat, n readings of a repeated one.
  if (!system && !max && !(stat === 'couch_docs_data_size' && ctx.options.profile.minFileSizeRule)) {
    const whole = bucketStatGen(ctx, bucket, stat);
    const k = additive(stat) ? nodes.liveShare : nodes.bucket.length;
    return (t) => whole(t) * k;
  }
  const over = system ? nodes.host : nodes.bucket;
  const gens = over.map((n) => nodeStatGen(ctx, bucket, stat, n, true, nodes.shares));
  if (simAggregateMethod(stat) === 'max') return (t) => (gens.length === 0 ? 0 : Math.max(...gens.map((g) => g(t))));
  return (t) => gens.reduce((a, g) => a + g(t), 0);
}

/** The bucket stats a 7.0+ envelope answers from goxdcr's series, and the replication stat each sums. */
const XDCR_BUCKET_STATS: Readonly<Record<string, string>> = { replication_changes_left: 'changes_left', replication_docs_rep_queue: 'docs_rep_queue' };

/**
 * 7.0+: replication_changes_left / replication_docs_rep_queue of a bucket as ns_server answers them
 * (stat_names_mappings.erl, pre_70_stat_to_prom_query("@xdcr-" ++ Bucket, …)): the sum by name of
 * xdcr_changes_left_total / xdcr_docs_rep_queue_total whose sourceBucketName is the bucket, over every replication
 * and pipeline of it and over the nodes asked. Undefined (the name is absent) when no series matches: a bucket with
 * no outgoing replication, or docs_rep_queue on 8.0, whose goxdcr no longer exports it (../native.ts NATIVE_XDCR).
 */
function xdcrBucketGen(ctx: SimContext, bucket: SimBucket, stat: string, over: readonly SimNode[]): Gen | undefined {
  const from = XDCR_BUCKET_STATS[stat];
  if (from === undefined) return undefined;
  if (from === 'docs_rep_queue' && ctx.options.profile.major >= 8) return undefined;
  const reps = xdcrSimReplications(ctx).filter((r) => r.source === bucket.name);
  const override = (ctx.options.knobs.xdcrStatValues as Readonly<Record<string, (t: number, node: string) => number>> | undefined)?.[from];
  // The same values as the native series of ../native.ts: a node that is no server of the bucket has none.
  const pairs = reps.flatMap((r) => over.filter((n) => r.stat(from, n.hostname, 0) !== undefined).map((n) => [r, n.hostname] as const));
  if (pairs.length === 0) return undefined;
  return (t) => pairs.reduce((a, [r, n]) => a + (override ? override(t, n) : (r.stat(from, n, t) ?? 0)), 0);
}

/** The stats envelope of one bucket: the whole bucket (node undefined) or one node's own answer. */
function envelope(ctx: SimContext, b: SimBucket, q: SampleQuery, node: SimNode | undefined): Record<string, unknown> {
  const { zoomName, zoom, stamps: ts, skew, have } = sampleTimes(ctx, q);
  const m = model(ctx, b);
  const shares = sharesOf(ctx);
  const live = liveBucketNodes(ctx);
  const nodes: EnvelopeNodes = { bucket: live, host: liveActiveNodes(ctx), shares, liveShare: live.reduce((a, n) => a + (shares.get(n.hostname) ?? 0), 0) };
  const samples: Record<string, number[]> = {};
  // 7.0+: the envelope is built from the native series there are, and a DCP connection type without connections
  // has none (./dcp.ts): its ep_dcp_<type>_* keys are absent, and views+indexes sums the types present.
  const dcp = ctx.options.profile.rangeApi ? dcpTypesOf(ctx, b) : undefined;
  const gen1 = (name: string): Gen => (node ? nodeStatGen(ctx, b, name, node, true, shares) : envelopeGen(ctx, b, name, nodes));
  const line = ctx.options.profile.line;
  for (const [name] of m.stats) {
    // 7.0+: the names its envelope does not fill (../bucket-stat-names.ts, from ns_server's translation).
    if (absentFromNativeEnvelope(name, line, b.bucketType)) continue;
    let gen: Gen;
    if (ctx.options.profile.rangeApi && XDCR_BUCKET_STATS[name] !== undefined) {
      const g = xdcrBucketGen(ctx, b, name, node ? [node] : nodes.bucket);
      if (g === undefined) continue;
      gen = g;
    } else if (dcp !== undefined && name.startsWith('ep_dcp_views+indexes_')) {
      const stat = name.slice('ep_dcp_views+indexes_'.length);
      const parts = (['views', '2i', 'fts'] as const).filter((t) => dcp.has(t)).map((t) => gen1(`ep_dcp_${t}_${stat}`));
      if (parts.length === 0) continue;
      gen = (t) => parts.reduce((a, g) => a + g(t), 0);
    } else if (dcp !== undefined && dcpStatAbsent(name, dcp)) continue;
    else gen = gen1(name);
    const arr = new Array<number>(ts.length);
    // A node whose clock is `skew` ahead stamps the value of real time t - skew as t.
    for (let i = 0; i < ts.length; i++) arr[i] = round(gen((ts[i] as number) - skew));
    samples[name] = arr;
  }
  for (const name of churnNames(ctx)) samples[name] = ts.map((_, i) => i);
  samples.timestamp = ts;
  const op: Record<string, unknown> = {
    samples,
    samplesCount: zoom.count,
    isPersistent: b.bucketType !== 'ephemeral' && b.bucketType !== 'memcached',
    lastTStamp: ts.length > 0 ? ts[ts.length - 1] : 0,
    interval: zoom.stepMs,
  };
  if (have !== undefined) op.tstampParam = have;
  const out: Record<string, unknown> = { op };
  if (zoomName === 'minute') {
    const last = ts.length > 0 ? (ts[ts.length - 1] as number) - skew : ctx.now();
    const share = node ? (bucketNodeShares(ctx).find((s) => s.node.hostname === node.hostname)?.share ?? 0) : 1;
    const ops = (m.stats.find(([n]) => n === 'ops')?.[1] ?? (() => 0))(last) * share;
    // Couchbase reports a hot key's share of operations per second, a small number for most keys.
    out.hot_keys = m.hotKeys.map((h) => ({ name: h.name, ops: (ops * h.weight) / 1000 }));
  }
  return out;
}

export const bucketsModule: SimModule = (app, ctx) => {
  const find = (name: string): SimBucket | undefined => ctx.buckets.find((b) => b.name === name);

  app.get('/pools/default/buckets', async () => {
    const now = ctx.now();
    const nodes = kvNodes(ctx).map((n) => nodeEntry(ctx, n, ctx.nodes.indexOf(n)));
    return ctx.buckets.map((b) => bucketEntry(ctx, b, nodes, now));
  });

  app.get<{ Params: { bucket: string } }>('/pools/default/buckets/:bucket', async (req, reply) => {
    const b = find(req.params.bucket);
    if (!b) return notFound(reply);
    const nodes = kvNodes(ctx).map((n) => nodeEntry(ctx, n, ctx.nodes.indexOf(n)));
    return bucketEntry(ctx, b, nodes, ctx.now());
  });

  app.get<{ Params: { bucket: string } }>('/pools/default/buckets/:bucket/nodes', async (req, reply) => {
    const b = find(req.params.bucket);
    if (!b) return notFound(reply);
    const base = `/pools/default/buckets/${enc(b.name)}/nodes`;
    return {
      servers: kvNodes(ctx).map((n) => ({
        hostname: n.hostname,
        uri: `${base}/${enc(n.hostname)}`,
        stats: { uri: `${base}/${enc(n.hostname)}/stats` },
      })),
    };
  });

  app.get<{ Params: { bucket: string }; Querystring: SampleQuery }>('/pools/default/buckets/:bucket/stats', async (req, reply) => {
    // The service sections (`@query`, `@index-<bucket>`, …) share the route: ./service-stats.ts.
    if (req.params.bucket.startsWith('@')) {
      const section = await answerSection(ctx, req.params.bucket, req.query, undefined, reply);
      if (section !== undefined) return section;
    }
    const b = find(req.params.bucket);
    if (!b) return notFound(reply);
    await gatherDelay(ctx, liveBucketNodes(ctx));
    return envelope(ctx, b, req.query, undefined);
  });

  app.get<{ Params: { bucket: string; node: string }; Querystring: SampleQuery }>(
    '/pools/default/buckets/:bucket/nodes/:node/stats',
    async (req, reply) => {
      if (req.params.bucket.startsWith('@')) {
        const section = await answerSection(ctx, req.params.bucket, req.query, req.params.node, reply);
        if (section !== undefined) return section;
      }
      const b = find(req.params.bucket);
      const entry = bucketNodeShares(ctx).find((s) => s.node.hostname === req.params.node);
      if (!b || !entry) return notFound(reply);
      await gatherDelay(ctx, [entry.node]);
      return { hostname: entry.node.hostname, ...envelope(ctx, b, req.query, entry.node) };
    },
  );
};
