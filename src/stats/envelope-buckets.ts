/**
 * The envelope source of bucket statistics: GET /pools/default/buckets/{bucket}/stats for every bucket, in
 * parallel (the client bounds how many are in flight), and with `per_node` GET
 * /pools/default/buckets/{bucket}/nodes/{node}/stats for each of its nodes; each envelope reduced to neutral values
 * (values.ts) by the sampling rules (samples.ts), with the stat's kind and weight from the collector's catalog.
 *
 * Each request asks the zoom that covers the poll interval and, after the first answer, `haveTStamp` a little
 * before the previous newest sample; an empty answer to it is asked again without it (the node's clock may have
 * stepped back). The memo per bucket (and per node) lives in ctx.state under the bucket's name: the collector
 * forgets it when the bucket leaves the list.
 *
 * Failures: a bucket's request that fails leaves that bucket out (an item error); a 404 means it went away after
 * the list was read (skipped, memo forgotten); a node's failure is that node's item error only. Every bucket
 * failing is the poll's failure.
 */
import { BUCKET_NODE_STATS_ROUTE, BUCKET_STATS_ROUTE, statsEnvelopeSchema } from '../couchbase/buckets.js';
import type { BucketEntry, StatsEnvelope } from '../couchbase/buckets.js';
import { fetchNodeServices, nodeNames } from '../couchbase/nodeServices.js';
import type { StatsContext, StatsOptions } from './context.js';
import { alignedFrom, finite, haveTStampFor, latest, reduceSamples, sampleWindow, zoomFor } from './samples.js';
import type { SampleKind, SampleMemo, Zoom } from './samples.js';
import { ITEM_WIDE } from './values.js';
import type { ItemValues, SourceValues, StatValues, ValueKind } from './values.js';

/** How the collector's catalog reduces a stat's samples: its kind, and for a weighted mean the weighting stat. */
export interface EnvelopeStatSpec {
  readonly kind: SampleKind;
  readonly weight?: string | undefined;
}
/** The spec of a stat the collector knows; undefined for any other (its latest sample is its value). */
export type EnvelopeSpecs = (stat: string) => EnvelopeStatSpec | undefined;

/** The neutral kind of a sample kind (a cumulative count is a level). */
export function kindOfSample(kind: SampleKind | undefined): ValueKind {
  return kind === 'rate' || kind === 'mean' ? kind : 'level';
}

export interface BucketEnvelopeInput {
  readonly bucket: string;
  /** Set for a per-node envelope. */
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
  /** Top N hot keys to read; 0 for none. */
  readonly hotKeys?: number;
  readonly skipped?: (reason: string, detail?: string) => void;
  readonly specOf: EnvelopeSpecs;
}

export interface BucketEnvelopeValues {
  readonly values: StatValues;
  /** The answer's newest sample time (epoch ms). */
  readonly newest: number | undefined;
  /** The memo for the next poll (undefined: the next request asks for a full window). */
  readonly memo: SampleMemo | undefined;
  readonly hotKeys?: ReadonlyArray<{ readonly name: string; readonly ops: number }>;
}

/**
 * Pure: one stats envelope's values. Sample keys containing `/` (`replications/<id>/…`, `views/<ddoc>/…`) are
 * per-replication or per-design-document series, not bucket stats: they are left out. Values are in Couchbase's
 * unit.
 */
export function envelopeBucketValues(input: BucketEnvelopeInput): BucketEnvelopeValues {
  const { bucket, envelope } = input;
  const skipped = input.skipped ?? (() => undefined);
  const samples = envelope.op.samples;
  const tsRaw = samples.timestamp;
  const ts = Array.isArray(tsRaw) ? (tsRaw as unknown[]) : undefined;
  const intervalMs = input.intervalMs ?? 60_000;
  const now = input.now ?? (input.memo ? input.memo.at + intervalMs : 0);
  const win = sampleWindow(ts, envelope.op.lastTStamp, input.memo, now, intervalMs, input.stepMs ?? 1_000);
  const values: StatValues = new Map();
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
    const spec = input.specOf(stat);
    if (spec === undefined) {
      values.set(stat, latest(arr));
      continue;
    }
    // A window mean is weighted by its denominator's samples from the same answer (aligned on the newest).
    const w = spec.weight === undefined ? undefined : samples[spec.weight];
    values.set(stat, reduceSamples({ kind: spec.kind, scale: 1 }, arr, from, win.fresh, Array.isArray(w) ? (w as unknown[]) : undefined));
  }
  const n = input.hotKeys ?? 0;
  if (n === 0 || input.node !== undefined || !envelope.hot_keys) return { values, newest: win.last, memo: win.memo };
  const keys: Array<{ name: string; ops: number }> = [];
  for (const k of envelope.hot_keys) {
    if (k && typeof k === 'object' && typeof (k as { name?: unknown }).name === 'string' && finite((k as { ops?: unknown }).ops)) {
      keys.push(k as { name: string; ops: number });
    }
  }
  keys.sort((a, b) => b.ops - a.ops || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { values, newest: win.last, memo: win.memo, hotKeys: keys.slice(0, n) };
}

/** The options the bucket sources read. */
export interface BucketStatsOptions extends StatsOptions {
  readonly per_node: boolean;
  readonly hot_keys: number;
}

/** What the collector gives a bucket source: its bucket list and how its catalog reduces each stat. */
export interface BucketSourceInput {
  readonly buckets: readonly BucketEntry[];
  readonly specOf: EnvelopeSpecs;
}

/** Per bucket, between polls: the memo of its envelope and of each node's (per_node). */
interface BucketMemo {
  bucket?: SampleMemo | undefined;
  readonly nodes: Map<string, SampleMemo>;
}

/** The memo of one bucket, in ctx.state under its name. */
function memoOf(ctx: StatsContext, bucket: string): BucketMemo {
  let m = ctx.state.get(bucket) as BucketMemo | undefined;
  if (m === undefined) {
    m = { nodes: new Map() };
    ctx.state.set(bucket, m);
  }
  return m;
}

/** The nodes of a bucket: from the bucket list, else every node of the cluster (nodeServices). */
export async function bucketNodes(ctx: StatsContext, b: BucketEntry): Promise<string[]> {
  const fromList = (b.nodes ?? []).map((n) => n.hostname).filter((h): h is string => typeof h === 'string' && h !== '');
  if (fromList.length > 0) return fromList;
  return nodeNames(await fetchNodeServices(ctx), ctx.client.baseUrl);
}

/** The bucket's nodes for per-node values; undefined, counted as the bucket's nodes' item error, when unreadable. */
export async function perNodeList(ctx: StatsContext, b: BucketEntry): Promise<string[] | undefined> {
  try {
    return await bucketNodes(ctx, b);
  } catch (err) {
    ctx.itemFailed(`${b.name} nodes`, err);
    return undefined;
  }
}

function hasNoSample(env: StatsEnvelope): boolean {
  const ts = env.op.samples.timestamp;
  return Array.isArray(ts) && ts.length === 0;
}

/**
 * One envelope (a bucket's, or a bucket's on one node) into `item`. Returns false when it is gone (404); throws when
 * its request or answer failed.
 */
async function pollEnvelope(ctx: StatsContext<BucketStatsOptions>, zoom: Zoom, input: BucketSourceInput, bucket: string, node: string | undefined, item: ItemValues): Promise<boolean> {
  const m = memoOf(ctx, bucket);
  const memo = node === undefined ? m.bucket : m.nodes.get(node);
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
  const got = envelopeBucketValues({
    bucket,
    node,
    envelope: env,
    memo,
    now: ctx.now(),
    intervalMs: ctx.options.interval,
    stepMs: zoom.stepMs,
    hotKeys: node === undefined && zoom.name === 'minute' ? ctx.options.hot_keys : 0,
    skipped: (r, d) => ctx.skipped(r, d),
    specOf: input.specOf,
  });
  item.sets.set(node ?? ITEM_WIDE, got.values);
  if (node === undefined) {
    item.newest = got.newest;
    if (got.hotKeys !== undefined) item.hotKeys = got.hotKeys;
    m.bucket = got.memo;
  } else if (got.memo === undefined) m.nodes.delete(node);
  else m.nodes.set(node, got.memo);
  return true;
}

/** One bucket: its envelope, then (per_node) each node's; a node's failure is that node's item error only. */
async function pollBucket(ctx: StatsContext<BucketStatsOptions>, zoom: Zoom, input: BucketSourceInput, b: BucketEntry): Promise<ItemValues | undefined> {
  const item: ItemValues = { sets: new Map(), newest: undefined };
  const present = await pollEnvelope(ctx, zoom, input, b.name, undefined, item);
  if (!present) return undefined;
  const nodes = ctx.options.per_node ? await perNodeList(ctx, b) : undefined;
  if (nodes === undefined) return item;
  // Memos of nodes that left the bucket go with them (node names come from Couchbase: they must not pile up).
  const memo = memoOf(ctx, b.name);
  const current = new Set(nodes);
  for (const n of [...memo.nodes.keys()]) if (!current.has(n)) memo.nodes.delete(n);
  // Each node's values land in a set of their own, in node order whatever order the answers come in.
  const byNode = nodes.map((): ItemValues => ({ sets: new Map(), newest: undefined }));
  const results = await Promise.allSettled(nodes.map((n, i) => pollEnvelope(ctx, zoom, input, b.name, n, byNode[i] as ItemValues)));
  // Past the poll's deadline every request fails: that is the poll's failure, not the items'.
  if (ctx.signal.aborted) return item;
  results.forEach((r, i) => {
    const n = nodes[i] ?? '';
    if (r.status === 'rejected') ctx.itemFailed(`${b.name} on ${n}`, r.reason);
    else for (const [k, v] of (byNode[i] as ItemValues).sets) item.sets.set(k, v);
  });
  return item;
}

/** The envelope source's answer for every bucket of the list. */
export async function envelopeBucketSource(ctx: StatsContext<BucketStatsOptions>, input: BucketSourceInput): Promise<SourceValues> {
  const zoom = zoomFor(ctx.options.interval);
  const results = await Promise.allSettled(input.buckets.map((b) => pollBucket(ctx, zoom, input, b)));
  // Past the poll's deadline every request fails: that is the poll's failure, not the buckets'.
  if (ctx.signal.aborted) throw ctx.signal.reason;
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ bucket: input.buckets[i]?.name ?? '', err: r.reason as unknown }] : []));
  // Every bucket failed: nothing of this poll is true, so the poll fails (and says why).
  if (failed.length > 0 && failed.length === input.buckets.length) throw failed[0]?.err;
  for (const f of failed) ctx.itemFailed(f.bucket, f.err);
  const items = new Map<string, ItemValues>();
  results.forEach((r, i) => {
    if (r.status === 'fulfilled' && r.value !== undefined) items.set(input.buckets[i]?.name ?? '', r.value);
  });
  return { items, kindOf: (stat) => kindOfSample(input.specOf(stat)?.kind) };
}
