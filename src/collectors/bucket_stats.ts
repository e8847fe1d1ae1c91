/**
 * Collector `bucket_stats`: the stats envelope of every bucket, GET /pools/default/buckets/{bucket}/stats,
 * one request per bucket in parallel (the client bounds how many are in flight). The bucket list comes from
 * the same shared fetch as the `buckets` collector.
 *
 * Sampling (samples.ts): the zoom is the finest whose window covers the poll interval (minute up to 60 s,
 * hour up to 1 h, day up to 24 h); levels take the latest non-null sample, rates the mean of the samples since
 * the previous answer, and an answer that brings no new sample leaves the rates out (levels stay: the latest
 * sample is still the newest truth). `couchbase_bucket_last_sample_timestamp_seconds{bucket}` is the newest
 * sample's time, so stalled stats can page. The memo per bucket (and per node) lives in ctx.state under the
 * bucket's name and is forgotten when the bucket leaves the list.
 *
 * Failures: the poll fails when the bucket list fails or every bucket's stats request fails; one bucket's
 * failure (4xx/5xx, timeout, bad body) leaves out only that bucket's series and is counted by ctx.itemFailed;
 * a 404 means the bucket went away after the list was read (skipped, memo forgotten).
 *
 * Sample keys containing `/` (`replications/<id>/…`, `views/<ddoc>/…`, `spatial/…`) are per-replication or
 * per-design-document series, not bucket stats: they are never exported here. A stat missing from the catalog
 * is still exported as `couchbase_bucket_<sanitised name>` with a help text saying its unit is unknown, unless
 * that name is a family of cbwatch's own (then it is skipped, never a duplicate series). Such families are kept
 * in ctx.state (dynamic.ts): at most `max_dynamic_families` per poll (the rest counted in
 * `cbwatch_collector_capped_total{what="dynamic_families"}`), and forgotten once a poll no longer sees them.
 *
 * Opt-in: `hot_keys: N` adds the N busiest keys per bucket (`couchbase_bucket_hot_key_ops_per_second`;
 * Couchbase sends hot keys with zoom=minute only, so with intervals up to 60 s); `per_node: true` adds
 * GET /pools/default/buckets/{bucket}/nodes/{node}/stats for each node of the bucket into
 * `couchbase_bucket_node_<metric>{bucket,node}` families.
 */
import { BUCKET_NODE_STATS_ROUTE, BUCKET_STATS_ROUTE, fetchBuckets, statsEnvelopeSchema } from '../couchbase/buckets.js';
import type { BucketEntry, StatsEnvelope } from '../couchbase/buckets.js';
import { fetchNodeServices, nodeNames } from '../couchbase/nodeServices.js';
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { BUCKET_STATS_COLLECTOR, HOT_KEY_FAMILY, STAT_FAMILIES, unknownHelp, unknownMetricName } from './bucket-stat-catalog.js';
import { bucketFamilies } from './buckets.js';
import { F as collectionFamilies } from './collections.js';
import { alignedFrom, finite, haveTStampFor, latest, reduceSamples, sampleWindow, zoomFor } from './samples.js';
import type { SampleMemo, Zoom } from './samples.js';
import { DynamicFamilies, dynamicFamiliesOf } from './dynamic.js';
import type { CollectContext, Collector } from './types.js';
import { forgetGone, settleAll } from './util.js';
import { fetchBucketRange } from '../stats/envelopes.js';
import type { BucketRange } from '../stats/envelopes.js';
import { rangeOrEnvelope } from '../stats/source.js';

/** The newest sample's time per bucket: `time() - this` is how old the stats are. */
export const LAST_SAMPLE_FAMILY = defineFamily(
  BUCKET_STATS_COLLECTOR,
  'couchbase_bucket_last_sample_timestamp_seconds',
  'gauge',
  "Time of the newest sample in the bucket's stats envelope (lastTStamp, on the answering node's clock). It stops moving when Couchbase's stats stop advancing, while the exporter keeps polling successfully.",
  ['bucket'],
  'timestamp_seconds',
);

/**
 * Every `couchbase_bucket_*` family declared statically by cbwatch (this collector, `buckets`, `collections`):
 * an unknown stat may not take one, or /metrics would carry one family twice (an envelope stat `scopes` next to
 * the collections collector's `couchbase_bucket_scopes`). A test checks this list against the whole catalog.
 */
export const RESERVED_FAMILY_NAMES: ReadonlySet<string> = new Set<string>([
  ...[...STAT_FAMILIES.values()].flatMap((f) => [f.bucket.name, f.node.name]),
  HOT_KEY_FAMILY.name,
  LAST_SAMPLE_FAMILY.name,
  ...Object.values(bucketFamilies).map((f) => f.name),
  ...Object.values(collectionFamilies).map((f) => f.name),
]);

/**
 * The family of a stat outside the catalog: from the poll's registry (created on first sight, one shape per
 * name), undefined when the name is taken (by cbwatch or by the other of bucket/per-node), 'capped' when the
 * registry is full for this poll.
 */
function unknownFamily(reg: DynamicFamilies, stat: string, perNode: boolean): FamilyDef | undefined | 'capped' {
  const name = `couchbase_bucket_${perNode ? 'node_' : ''}${unknownMetricName(stat)}`;
  if (RESERVED_FAMILY_NAMES.has(name)) return undefined;
  if (reg.has(`${name}\u0000${perNode ? 'b' : 'n'}`)) return undefined;
  return reg.get(`${name}\u0000${perNode ? 'n' : 'b'}`, () =>
    defineFamily(BUCKET_STATS_COLLECTOR, name, 'gauge', unknownHelp(stat, perNode), perNode ? ['bucket', 'node'] : ['bucket'], 'unknown'),
  );
}

export interface MapStatsInput {
  readonly bucket: string;
  /** Set for a per-node envelope: values go to the `couchbase_bucket_node_*` families. */
  readonly node?: string | undefined;
  readonly envelope: StatsEnvelope;
  /** What the previous answer left; undefined on the first poll. */
  readonly memo?: SampleMemo | undefined;
  /** Exporter clock when the answer arrived (epoch ms); default the memo's time plus one interval. */
  readonly now?: number;
  /** Poll interval, ms (the first poll's rate window); default 60 s. */
  readonly intervalMs?: number;
  /** Sample spacing of the zoom asked for, ms; default 1 s (zoom=minute). */
  readonly stepMs?: number;
  /** Top N hot keys to export; 0 for none. */
  readonly hotKeys?: number;
  readonly skipped?: (reason: string, detail?: string) => void;
  /**
   * Families of stats outside the catalog, kept between polls in the collector's state and capped; default a
   * fresh registry with the default cap (a pure call then keeps nothing).
   */
  readonly dynamic?: DynamicFamilies;
}

/**
 * Pure mapping of one stats envelope to samples. Returns the memo for the next poll (undefined when the
 * envelope has no sample time at all: the next request then asks for a full window).
 */
export function mapBucketStats(input: MapStatsInput, out: SampleSet): SampleMemo | undefined {
  const { bucket, node, envelope } = input;
  const perNode = node !== undefined;
  const skipped = input.skipped ?? (() => undefined);
  const samples = envelope.op.samples;
  const tsRaw = samples.timestamp;
  const ts = Array.isArray(tsRaw) ? (tsRaw as unknown[]) : undefined;
  const intervalMs = input.intervalMs ?? 60_000;
  const now = input.now ?? (input.memo ? input.memo.at + intervalMs : 0);
  const win = sampleWindow(ts, envelope.op.lastTStamp, input.memo, now, intervalMs, input.stepMs ?? 1_000);
  const labels = perNode ? { bucket, node } : { bucket };
  const dynamic = input.dynamic ?? new DynamicFamilies();

  // for…in rather than Object.entries: no [name, array] pair per stat (~200 per bucket, every poll).
  for (const stat in samples) {
    if (stat === 'timestamp' || stat.includes('/')) continue;
    const raw = samples[stat];
    if (!Array.isArray(raw)) {
      skipped('bad_stat', `${bucket}: ${stat} is not an array of samples`);
      continue;
    }
    const arr = raw as unknown[];
    // Samples are aligned on the newest one: a stat added by an upgrade has a shorter (or null-padded) history.
    const from = ts === undefined ? 0 : alignedFrom(win.from, ts.length, arr.length);
    const known = STAT_FAMILIES.get(stat);
    if (known) {
      out.add(perNode ? known.node : known.bucket, labels, reduceSamples(known.spec, arr, from, win.fresh));
      continue;
    }
    const fam = unknownFamily(dynamic, stat, perNode);
    if (fam === 'capped') {
      // Counted, not logged per stat: a cluster sending thousands of new names would flood the log.
      out.countCap('dynamic_families');
      continue;
    }
    if (fam === undefined) {
      skipped('name_collision', `${bucket}: stat ${stat} would take a name cbwatch already uses`);
      continue;
    }
    out.add(fam, labels, latest(arr));
  }
  if (!perNode && win.last !== undefined) out.add(LAST_SAMPLE_FAMILY, { bucket }, win.last / 1000);

  const n = input.hotKeys ?? 0;
  if (n > 0 && !perNode && envelope.hot_keys) {
    const keys: Array<{ name: string; ops: number }> = [];
    for (const k of envelope.hot_keys) {
      if (k && typeof k === 'object' && typeof (k as { name?: unknown }).name === 'string' && finite((k as { ops?: unknown }).ops)) {
        keys.push(k as { name: string; ops: number });
      }
    }
    keys.sort((a, b) => b.ops - a.ops || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const k of keys.slice(0, n)) out.add(HOT_KEY_FAMILY, { bucket, key: k.name }, k.ops);
  }
  return win.memo;
}

/** Per bucket, between polls: the memo of its envelope and of each node's (per_node). */
interface BucketMemo {
  bucket?: SampleMemo | undefined;
  readonly nodes: Map<string, SampleMemo>;
}

/** The memo of one bucket, in ctx.state under its name (forgotten by forgetGone when the bucket goes). */
function memoOf(ctx: CollectContext<'bucket_stats'>, bucket: string): BucketMemo {
  let m = ctx.state.get(bucket) as BucketMemo | undefined;
  if (m === undefined) {
    m = { nodes: new Map() };
    ctx.state.set(bucket, m);
  }
  return m;
}

function hasNoSample(env: StatsEnvelope): boolean {
  const ts = env.op.samples.timestamp;
  return Array.isArray(ts) && ts.length === 0;
}

/**
 * One envelope (a bucket's, or a bucket's on one node). Returns false when it is gone (404); throws when its
 * request or answer failed.
 */
async function pollEnvelope(ctx: CollectContext<'bucket_stats'>, zoom: Zoom, bucket: string, node: string | undefined, range?: BucketRange): Promise<boolean> {
  const m = memoOf(ctx, bucket);
  const memo = node === undefined ? m.bucket : m.nodes.get(node);
  if (range !== undefined) {
    // The range source (src/stats/): this poll's batch, as a one-sample envelope; nothing yet for a new bucket.
    const env = range.envelope(bucket, node);
    if (env === undefined) ctx.skipped('no_native_series', node === undefined ? bucket : `${bucket} on ${node}`);
    else mapEnvelope(ctx, zoom, bucket, node, m, memo, env);
    return true;
  }
  const ask = async (have: number | undefined): Promise<StatsEnvelope | undefined> => {
    const query: Record<string, string | number> = { zoom: zoom.name };
    if (have !== undefined) query.haveTStamp = have;
    const res =
      node === undefined
        ? await ctx.client.requestJson(BUCKET_STATS_ROUTE, { bucket }, statsEnvelopeSchema, { query, allowStatus: [404] })
        : await ctx.client.requestJson(BUCKET_NODE_STATS_ROUTE, { bucket, node }, statsEnvelopeSchema, { query, allowStatus: [404] });
    return res.status === 404 ? undefined : res.data;
  };
  const have = haveTStampFor(memo, zoom);
  let env = await ask(have);
  // Nothing at or after haveTStamp: the node's clock may have stepped back; one full window tells.
  if (env !== undefined && have !== undefined && hasNoSample(env)) env = await ask(undefined);
  if (env === undefined) {
    // Deleted (or the node left) between the list and this request: the others are still good.
    ctx.skipped(node === undefined ? 'bucket_gone' : 'node_gone', node === undefined ? bucket : `${bucket} on ${node}`);
    if (node === undefined) m.bucket = undefined;
    else m.nodes.delete(node);
    return false;
  }
  mapEnvelope(ctx, zoom, bucket, node, m, memo, env);
  return true;
}

function mapEnvelope(ctx: CollectContext<'bucket_stats'>, zoom: Zoom, bucket: string, node: string | undefined, m: BucketMemo, memo: SampleMemo | undefined, env: StatsEnvelope): void {
  const next = mapBucketStats(
    {
      bucket,
      node,
      envelope: env,
      memo,
      now: ctx.now(),
      intervalMs: ctx.options.interval,
      stepMs: zoom.stepMs,
      hotKeys: node === undefined && zoom.name === 'minute' ? ctx.options.hot_keys : 0,
      skipped: (r, d) => ctx.skipped(r, d),
      dynamic: dynamicFamiliesOf(ctx.state, ctx.cluster.maxDynamicFamilies),
    },
    ctx.out,
  );
  if (node === undefined) m.bucket = next;
  else if (next === undefined) m.nodes.delete(node);
  else m.nodes.set(node, next);
}

async function bucketNodes(ctx: CollectContext<'bucket_stats'>, b: BucketEntry): Promise<string[]> {
  const fromList = (b.nodes ?? []).map((n) => n.hostname).filter((h): h is string => typeof h === 'string' && h !== '');
  if (fromList.length > 0) return fromList;
  return nodeNames(await fetchNodeServices(ctx), ctx.client.baseUrl);
}

/** One bucket: its envelope, then (per_node) each node's; a node's failure is that node's item error only. */
async function pollBucket(ctx: CollectContext<'bucket_stats'>, zoom: Zoom, b: BucketEntry, range?: BucketRange): Promise<void> {
  const present = await pollEnvelope(ctx, zoom, b.name, undefined, range);
  if (!present || !ctx.options.per_node) return;
  let nodes: string[];
  try {
    nodes = await bucketNodes(ctx, b);
  } catch (err) {
    ctx.itemFailed(`${b.name} nodes`, err);
    return;
  }
  // Memos of nodes that left the bucket go with them (node names come from Couchbase: they must not pile up).
  const memo = memoOf(ctx, b.name);
  const current = new Set(nodes);
  for (const n of [...memo.nodes.keys()]) if (!current.has(n)) memo.nodes.delete(n);
  const results = await settleAll(nodes.map((n) => pollEnvelope(ctx, zoom, b.name, n, range)));
  // Past the poll's deadline every request fails: that is the poll's failure, not the items'.
  if (ctx.signal.aborted) return;
  results.forEach((r, i) => {
    if (r.status === 'rejected') ctx.itemFailed(`${b.name} on ${nodes[i] ?? ''}`, r.reason);
  });
}

export const bucketStatsCollector: Collector<'bucket_stats'> = {
  name: 'bucket_stats',
  defaultInterval: 30_000,
  families: [...[...STAT_FAMILIES.values()].flatMap((f) => [f.bucket, f.node]), HOT_KEY_FAMILY, LAST_SAMPLE_FAMILY],
  role: 'Read-Only Admin (ro_admin); a bucket-scoped role sees only its buckets',
  description: 'Every stat of each bucket\'s stats envelope (per node on request); hot keys on request.',
  async collect(ctx) {
    const zoom = zoomFor(ctx.options.interval);
    // Families of unknown stats the previous poll did not use are forgotten now (their series left with it).
    dynamicFamiliesOf(ctx.state, ctx.cluster.maxDynamicFamilies).beginPoll();
    const list = await fetchBuckets(ctx);
    forgetGone(ctx.state, new Set(list.map((b) => b.name)));
    // Cluster 7.0+ (stats_source auto or range): one batch of range requests for every bucket and node.
    const range = await rangeOrEnvelope(ctx, fetchBucketRange, ctx.options.hot_keys > 0 ? 'hot_keys needs the envelopes' : undefined);
    const results = await settleAll(list.map((b) => pollBucket(ctx, zoom, b, range)));
    // Past the poll's deadline every request fails: that is the poll's failure, not the buckets'.
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ bucket: list[i]?.name ?? '', err: r.reason as unknown }] : []));
    // Every bucket failed: nothing of this poll is true, so the poll fails (and says why).
    if (failed.length > 0 && failed.length === list.length) throw failed[0]?.err;
    for (const f of failed) ctx.itemFailed(f.bucket, f.err);
  },
};
