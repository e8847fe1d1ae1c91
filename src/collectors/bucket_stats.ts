/**
 * Collector `bucket_stats`: the stats envelope of every bucket, GET /pools/default/buckets/{bucket}/stats
 * (zoom=minute: a sample per second for the last minute), one request per bucket in parallel (the client
 * bounds how many are in flight). The bucket list comes from the same shared fetch as the `buckets` collector.
 *
 * After the first poll each request carries `haveTStamp=<lastTStamp of the previous answer>`, so only new
 * samples travel; the previous timestamp is kept per bucket (and per node) in ctx.state and forgotten when the
 * bucket leaves the list. Levels take the latest non-null sample, rates the mean of the samples newer than the
 * previous poll (see bucket-stat-catalog.ts for which is which and the unit conversions).
 *
 * Sample keys containing `/` (`replications/<id>/…`, `views/<ddoc>/…`, `spatial/…`) are per-replication or
 * per-design-document series, not bucket stats: they are never exported here. A stat missing from the catalog
 * is still exported as `couchbase_bucket_<sanitised name>` with a help text saying its unit is unknown.
 *
 * Opt-in: `hot_keys: N` adds the N busiest keys per bucket (`couchbase_bucket_hot_key_ops_per_second`);
 * `per_node: true` adds GET /pools/default/buckets/{bucket}/nodes/{node}/stats for each node of the bucket
 * into `couchbase_bucket_node_<metric>{bucket,node}` families.
 */
import { BUCKET_NODE_STATS_ROUTE, BUCKET_STATS_ROUTE, fetchBuckets, statsEnvelopeSchema } from '../couchbase/buckets.js';
import type { BucketEntry, StatsEnvelope } from '../couchbase/buckets.js';
import { fetchNodeServices, nodeNames } from '../couchbase/nodeServices.js';
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { BUCKET_STATS_COLLECTOR, HOT_KEY_FAMILY, STAT_FAMILIES, unknownHelp, unknownMetricName } from './bucket-stat-catalog.js';
import type { StatSpec } from './bucket-stat-catalog.js';
import { bucketFamilies } from './buckets.js';
import { finite, firstNewIndex, latest, mean } from './samples.js';
import type { CollectContext, Collector } from './types.js';

/** Every family name declared statically by cbwatch's bucket collectors: an unknown stat may not take one. */
const RESERVED = new Set<string>([
  ...[...STAT_FAMILIES.values()].flatMap((f) => [f.bucket.name, f.node.name]),
  HOT_KEY_FAMILY.name,
  ...Object.values(bucketFamilies).map((f) => f.name),
]);

/** Families for stats outside the catalog, created on first sight and reused (one shape per name). */
const dynamicFamilies = new Map<string, FamilyDef>();

function unknownFamily(stat: string, perNode: boolean): FamilyDef | undefined {
  const name = `couchbase_bucket_${perNode ? 'node_' : ''}${unknownMetricName(stat)}`;
  if (RESERVED.has(name)) return undefined;
  const key = `${name}\u0000${perNode ? 'n' : 'b'}`;
  let def = dynamicFamilies.get(key);
  if (def === undefined) {
    const other = dynamicFamilies.get(`${name}\u0000${perNode ? 'b' : 'n'}`);
    if (other !== undefined) return undefined;
    def = defineFamily(BUCKET_STATS_COLLECTOR, name, 'gauge', unknownHelp(stat, perNode), perNode ? ['bucket', 'node'] : ['bucket'], 'unknown');
    dynamicFamilies.set(key, def);
  }
  return def;
}

export interface MapStatsInput {
  readonly bucket: string;
  /** Set for a per-node envelope: values go to the `couchbase_bucket_node_*` families. */
  readonly node?: string | undefined;
  readonly envelope: StatsEnvelope;
  /** lastTStamp of the previous poll; undefined on the first one (then every sample counts as new). */
  readonly since?: number | undefined;
  /** Top N hot keys to export; 0 for none. */
  readonly hotKeys?: number;
  readonly skipped?: (reason: string, detail?: string) => void;
}

/** One value from one stat's samples, per its kind; `from` is the first new index in this array. */
export function reduceSamples(spec: Pick<StatSpec, 'kind' | 'scale'>, arr: readonly unknown[], from: number): number | undefined {
  const v = spec.kind === 'rate' ? mean(arr, from) : latest(arr);
  return v === undefined ? undefined : v * spec.scale;
}

/**
 * Pure mapping of one stats envelope to samples. Returns the envelope's last timestamp (to send as
 * `haveTStamp` next time), or undefined when it has none.
 */
export function mapBucketStats(input: MapStatsInput, out: SampleSet): number | undefined {
  const { bucket, node, envelope } = input;
  const perNode = node !== undefined;
  const skipped = input.skipped ?? (() => undefined);
  const samples = envelope.op.samples;
  const tsRaw = samples.timestamp;
  const ts = Array.isArray(tsRaw) ? (tsRaw as unknown[]) : undefined;
  const newFrom = firstNewIndex(ts, input.since);
  const labels = perNode ? { bucket, node } : { bucket };

  for (const [stat, raw] of Object.entries(samples)) {
    if (stat === 'timestamp' || stat.includes('/')) continue;
    if (!Array.isArray(raw)) {
      skipped('bad_stat', `${bucket}: ${stat} is not an array of samples`);
      continue;
    }
    const arr = raw as unknown[];
    // Samples are aligned on the newest one: a stat added by an upgrade has a shorter (or null-padded) history.
    const from = ts === undefined || newFrom === 0 ? 0 : newFrom - (ts.length - arr.length);
    const known = STAT_FAMILIES.get(stat);
    if (known) {
      out.add(perNode ? known.node : known.bucket, labels, reduceSamples(known.spec, arr, from));
      continue;
    }
    const fam = unknownFamily(stat, perNode);
    if (fam === undefined) {
      skipped('name_collision', `${bucket}: stat ${stat} would take a name cbwatch already uses`);
      continue;
    }
    out.add(fam, labels, latest(arr));
  }

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

  const last = envelope.op.lastTStamp;
  if (finite(last) && last > 0) return last;
  const lt = ts === undefined ? undefined : latest(ts);
  return lt !== undefined && lt > 0 ? lt : undefined;
}

const TS_BUCKET = 'ts:b:';
const TS_NODE = 'ts:n:';

function nodeKey(bucket: string, node: string): string {
  return `${TS_NODE}${bucket}\u0000${node}`;
}

/** Drop the remembered timestamps of buckets that are gone, so a re-created bucket starts afresh. */
function forgetGone(state: Map<string, unknown>, present: ReadonlySet<string>): void {
  for (const key of [...state.keys()]) {
    if (key.startsWith(TS_BUCKET)) {
      if (!present.has(key.slice(TS_BUCKET.length))) state.delete(key);
    } else if (key.startsWith(TS_NODE)) {
      const bucket = key.slice(TS_NODE.length).split('\u0000')[0] ?? '';
      if (!present.has(bucket)) state.delete(key);
    }
  }
}

async function pollEnvelope(
  ctx: CollectContext<'bucket_stats'>,
  bucket: string,
  node: string | undefined,
  stateKey: string,
): Promise<void> {
  const since = ctx.state.get(stateKey) as number | undefined;
  const query: Record<string, string | number> = { zoom: 'minute' };
  if (since !== undefined) query.haveTStamp = since;
  const res =
    node === undefined
      ? await ctx.client.requestJson(BUCKET_STATS_ROUTE, { bucket }, statsEnvelopeSchema, { query, allowStatus: [404] })
      : await ctx.client.requestJson(BUCKET_NODE_STATS_ROUTE, { bucket, node }, statsEnvelopeSchema, { query, allowStatus: [404] });
  if (res.status === 404 || res.data === undefined) {
    // Deleted (or the node left) between the list and this request: the others are still good.
    ctx.skipped(node === undefined ? 'bucket_gone' : 'node_gone', node === undefined ? bucket : `${bucket} on ${node}`);
    ctx.state.delete(stateKey);
    return;
  }
  const last = mapBucketStats(
    {
      bucket,
      node,
      envelope: res.data,
      since,
      hotKeys: node === undefined ? ctx.options.hot_keys : 0,
      skipped: (r, d) => ctx.skipped(r, d),
    },
    ctx.out,
  );
  if (last !== undefined) ctx.state.set(stateKey, last);
  else ctx.state.delete(stateKey);
}

async function bucketNodes(ctx: CollectContext<'bucket_stats'>, b: BucketEntry): Promise<string[]> {
  const fromList = (b.nodes ?? []).map((n) => n.hostname).filter((h): h is string => typeof h === 'string' && h !== '');
  if (fromList.length > 0) return fromList;
  return nodeNames(await fetchNodeServices(ctx), ctx.client.baseUrl);
}

/** Wait for every job before failing with the first error, so no request is left running into the next poll. */
async function settleAll(jobs: ReadonlyArray<Promise<void>>): Promise<void> {
  const results = await Promise.allSettled(jobs);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

export const bucketStatsCollector: Collector<'bucket_stats'> = {
  name: 'bucket_stats',
  defaultInterval: 30_000,
  families: [...[...STAT_FAMILIES.values()].flatMap((f) => [f.bucket, f.node]), HOT_KEY_FAMILY],
  role: 'Read-Only Admin (ro_admin); a bucket-scoped role sees only its buckets',
  description: 'Every stat of each bucket\'s stats envelope (per node on request); hot keys on request.',
  async collect(ctx) {
    const list = await fetchBuckets(ctx);
    const present = new Set(list.map((b) => b.name));
    forgetGone(ctx.state, present);
    const jobs: Array<Promise<void>> = [];
    for (const b of list) {
      jobs.push(pollEnvelope(ctx, b.name, undefined, `${TS_BUCKET}${b.name}`));
      if (ctx.options.per_node) {
          jobs.push(bucketNodes(ctx, b).then((nodes) => settleAll(nodes.map((n) => pollEnvelope(ctx, b.name, n, nodeKey(b.name, n))))));
      }
    }
    await settleAll(jobs);
  },
};
