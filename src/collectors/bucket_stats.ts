/**
 * Collector `bucket_stats`: every stat of every bucket (and, with `per_node`, of every bucket on each of its nodes),
 * from the cluster's statistics source (src/stats/source.ts): the sample envelopes (one request per bucket, and per
 * bucket and node; src/stats/envelope-buckets.ts) or, on 7.0+, the range API (one batch of requests for every bucket
 * and node; src/stats/range-source.ts). Both answer neutral values (src/stats/values.ts), which this collector maps
 * to its families the same way: a stat of the catalog (bucket-stat-catalog.ts) to its family, in its base unit; the
 * newest sample's time to `couchbase_bucket_last_sample_timestamp_seconds{bucket}`, so stalled stats can page; hot
 * keys (envelopes only: `hot_keys: N`, Couchbase sends them with zoom=minute, so with intervals up to 60 s) to
 * `couchbase_bucket_hot_key_ops_per_second`. The bucket list comes from the same shared fetch as the `buckets`
 * collector; the sources' memos live in ctx.state under the bucket's name (forgotten when the bucket leaves the list).
 *
 * A stat missing from the catalog is still exported as `couchbase_bucket_<sanitised name>` with a help text saying
 * its unit is unknown, unless that name is a family of cbwatch's own (then it is skipped, never a duplicate series).
 * Such families are kept in ctx.state (dynamic.ts): at most `max_dynamic_families` per poll (the rest counted in
 * `cbwatch_collector_capped_total{what="dynamic_families"}`), and forgotten once a poll no longer sees them.
 *
 * Failures: the poll fails when the bucket list fails or the source could read no bucket; a bucket (or a node of
 * it) that could not be read leaves out only its series, counted by ctx.itemFailed.
 */
import { fetchBuckets } from '../couchbase/buckets.js';
import type { StatsEnvelope } from '../couchbase/buckets.js';
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { BUCKET_STATS_COLLECTOR, HOT_KEY_FAMILY, STAT_FAMILIES, statSpec, unknownHelp, unknownMetricName } from './bucket-stat-catalog.js';
import { bucketFamilies } from './buckets.js';
import { F as collectionFamilies } from './collections.js';
import { DynamicFamilies, dynamicFamiliesOf } from './dynamic.js';
import type { Collector } from './types.js';
import { forgetGone } from './util.js';
import { envelopeBucketSource, envelopeBucketValues } from '../stats/envelope-buckets.js';
import type { BucketEnvelopeInput, EnvelopeSpecs } from '../stats/envelope-buckets.js';
import { rangeBucketSource } from '../stats/range-source.js';
import type { SampleMemo } from '../stats/samples.js';
import { toBaseUnit } from '../stats/samples.js';
import { statsValues } from '../stats/source.js';
import { ITEM_WIDE } from '../stats/values.js';
import type { ItemValues, StatValues } from '../stats/values.js';

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

/** How the catalog reduces a stat's samples (the sources read it: kind, and a window mean's weight). */
export const CATALOG_SPECS: EnvelopeSpecs = (stat) => statSpec(stat);

/**
 * Pure: one label set's neutral values (a bucket's, or a bucket's on `node`) to samples: a catalog stat in its base
 * unit, any other stat under a family of its own (capped, never a name cbwatch uses).
 */
export function mapBucketValues(bucket: string, node: string | undefined, values: StatValues, out: SampleSet, dynamic: DynamicFamilies, skipped: (reason: string, detail?: string) => void): void {
  const perNode = node !== undefined;
  const labels = perNode ? { bucket, node } : { bucket };
  for (const [stat, v] of values) {
    const known = STAT_FAMILIES.get(stat);
    if (known) {
      out.add(perNode ? known.node : known.bucket, labels, v === undefined ? undefined : toBaseUnit(v, known.spec.scale));
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
    out.add(fam, labels, v);
  }
}

/** Pure: one bucket's neutral values (its bucket-wide set, then each node's) to samples. */
export function mapBucketItem(bucket: string, item: ItemValues, out: SampleSet, dynamic: DynamicFamilies, skipped: (reason: string, detail?: string) => void): void {
  for (const [key, values] of item.sets) mapBucketValues(bucket, key === ITEM_WIDE ? undefined : key, values, out, dynamic, skipped);
  if (item.newest !== undefined && item.sets.has(ITEM_WIDE)) out.add(LAST_SAMPLE_FAMILY, { bucket }, item.newest / 1000);
  for (const k of item.hotKeys ?? []) out.add(HOT_KEY_FAMILY, { bucket, key: k.name }, k.ops);
}

/** One envelope for mapBucketStats: what the envelope source reads (its specs are the catalog's), and the families. */
export type MapStatsInput = Omit<BucketEnvelopeInput, 'specOf'> & {
  /**
   * Families of stats outside the catalog, kept between polls in the collector's state and capped; default a
   * fresh registry with the default cap (a pure call then keeps nothing).
   */
  readonly dynamic?: DynamicFamilies;
};

/**
 * Pure: one stats envelope to samples, as a poll through the envelope source maps it (envelopeBucketValues, then
 * mapBucketItem). Returns the memo for the next poll (undefined when the envelope has no sample time at all: the
 * next request then asks for a full window).
 */
export function mapBucketStats(input: MapStatsInput, out: SampleSet): SampleMemo | undefined {
  const skipped = input.skipped ?? (() => undefined);
  const got = envelopeBucketValues({ ...input, skipped, specOf: CATALOG_SPECS });
  const item: ItemValues = { sets: new Map([[input.node ?? ITEM_WIDE, got.values]]), newest: got.newest, ...(got.hotKeys !== undefined ? { hotKeys: got.hotKeys } : {}) };
  mapBucketItem(input.bucket, item, out, input.dynamic ?? new DynamicFamilies(), skipped);
  return got.memo;
}

export const bucketStatsCollector: Collector<'bucket_stats'> = {
  name: 'bucket_stats',
  defaultInterval: 30_000,
  families: [...[...STAT_FAMILIES.values()].flatMap((f) => [f.bucket, f.node]), HOT_KEY_FAMILY, LAST_SAMPLE_FAMILY],
  role: 'Read-Only Admin (ro_admin); a bucket-scoped role sees only its buckets',
  description: 'Every stat of each bucket from the statistics source (per node on request); hot keys on request.',
  async collect(ctx) {
    // Families of unknown stats the previous poll did not use are forgotten now (their series left with it).
    const dynamic = dynamicFamiliesOf(ctx.state, ctx.cluster.maxDynamicFamilies);
    dynamic.beginPoll();
    const buckets = await fetchBuckets(ctx);
    forgetGone(ctx.state, new Set(buckets.map((b) => b.name)));
    const values = await statsValues(
      ctx,
      { buckets, specOf: CATALOG_SPECS },
      { range: rangeBucketSource, envelope: envelopeBucketSource },
      ctx.options.hot_keys > 0 ? 'hot_keys needs the envelopes' : undefined,
    );
    for (const [bucket, item] of values.items) mapBucketItem(bucket, item, ctx.out, dynamic, (r, d) => ctx.skipped(r, d));
  },
};
