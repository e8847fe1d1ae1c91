/**
 * Collector `collections`: scopes and collections of every bucket from GET /pools/default/buckets/{b}/scopes,
 * with the bucket list shared with the `buckets` collector (`fetchBuckets`, one list per cluster per 5 s).
 *
 * Each bucket is an item: a scopes call that fails (4xx/5xx, time-out, a manifest that does not parse) costs
 * that bucket its series and is counted in `cbwatch_collector_item_errors_total`; the poll fails only when the
 * bucket list fails or every bucket does. A bucket deleted between the list and its scopes call answers 404:
 * it is skipped and counted as such. Memcached buckets have no collections and are not asked.
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { fetchBuckets } from '../couchbase/buckets.js';
import { SCOPES_ROUTE, scopesSchema } from '../couchbase/collections.js';
import type { ScopesManifest } from '../couchbase/collections.js';
import { collectItems } from './helpers.js';
import type { Collector } from './types.js';

const C = 'collections';

export const F = {
  scopes: defineFamily(C, 'couchbase_bucket_scopes', 'gauge', 'Scopes in a bucket (system scopes included).', ['bucket'], 'count'),
  collections: defineFamily(C, 'couchbase_bucket_collections', 'gauge', 'Collections in a bucket, over all its scopes.', ['bucket'], 'count'),
  scopeCollections: defineFamily(C, 'couchbase_scope_collections', 'gauge', 'Collections in a scope.', ['bucket', 'scope'], 'count'),
  manifestUid: defineFamily(
    C,
    'couchbase_bucket_manifest_uid',
    'gauge',
    'Collections manifest uid of a bucket (hex in the API); it grows with every scope or collection change.',
    ['bucket'],
  ),
} as const satisfies Record<string, FamilyDef>;

/** Manifest uids are hex strings (`"a"` = 10). */
export function parseUid(uid: string | undefined): number | undefined {
  if (uid === undefined || !/^[0-9a-fA-F]{1,13}$/.test(uid)) return undefined;
  return Number.parseInt(uid, 16);
}

/** One bucket's manifest → samples. Pure. Understands the 6.5 developer-preview map form too. */
export function mapScopes(bucket: string, m: ScopesManifest, out: SampleSet): void {
  let scopes: Array<{ name: string; collections: number }>;
  if (m.scopes) {
    scopes = m.scopes.map((s) => ({ name: s.name, collections: s.collections.length }));
  } else {
    // 6.5 developer preview: {"scope": {"collection": {}}}
    scopes = Object.entries(m)
      .filter(([k, v]) => k !== 'uid' && v !== null && typeof v === 'object' && !Array.isArray(v))
      .map(([name, v]) => ({ name, collections: Object.keys(v as object).length }));
  }
  out.add(F.scopes, { bucket }, scopes.length);
  out.add(F.collections, { bucket }, scopes.reduce((a, s) => a + s.collections, 0));
  for (const s of scopes) out.add(F.scopeCollections, { bucket, scope: s.name }, s.collections);
  out.add(F.manifestUid, { bucket }, parseUid(m.uid));
}

export const collectionsCollector: Collector<'collections'> = {
  name: 'collections',
  defaultInterval: 300_000,
  families: Object.values(F),
  role: 'ro_admin',
  description: 'Scopes and collections per bucket, collections per scope, and the manifest uid.',
  async collect(ctx) {
    const buckets = (await fetchBuckets(ctx)).filter((b) => b.bucketType !== 'memcached');
    await collectItems(
      ctx,
      buckets,
      (b) => `bucket ${b.name}`,
      async (b) => {
        const res = await ctx.client.requestJson(SCOPES_ROUTE, { bucket: b.name }, scopesSchema, { allowStatus: [404] });
        if (res.data === undefined) return ctx.skipped('bucket_not_found', b.name);
        mapScopes(b.name, res.data, ctx.out);
      },
      { sequential: true },
    );
  },
};
