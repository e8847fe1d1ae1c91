/**
 * Collector `search_index`: the statistics of each Search (FTS) index and Search node (families and mapping in
 * ./search-index-stats.ts), through the service statistics sources (src/stats/service-values.ts): from 7.0 the
 * native `fts_*` series of the shared range request, per index (labels bucket and index; a 7.x series' scope and
 * collection are summed over) and node; before 7.0 the sections `@fts-<bucket>` and `@fts` on each Search node's own
 * route (the cluster-wide answer sums the nodes). Before 7.0 the envelopes do not say which buckets have Search
 * indexes, so the Search service's list of index definitions (`GET /api/index` on a Search node, each definition's
 * `sourceName` its bucket) chooses the buckets whose `@fts-<bucket>` is asked: one request per such bucket and Search
 * node. When that list cannot be read, every bucket that can hold an index is asked, and the poll says so.
 *
 * The `search` collector (active queries, from the Search service's own API) is a different collector and stays
 * as it is. A cluster where no node runs the Search service (no `fts`/`ftsSSL` port in nodeServices) is not
 * applicable: no request, no error. The per-index part and the per-node part are items of the poll: one failing
 * leaves the other's series.
 */
import { z } from 'zod';
import { fetchBuckets } from '../couchbase/buckets.js';
import { allowedCredentialHosts, fetchNodeServices, serviceUrl } from '../couchbase/nodeServices.js';
import { uncheckedRecord } from '../couchbase/unchecked.js';
import { declareServiceStats, itemKey, itemParts, prefixedRows, serviceValues } from '../stats/service-values.js';
import type { StatsContext } from '../stats/context.js';
import { ITEM_WIDE } from '../stats/values.js';
import type { StatValues } from '../stats/values.js';
import { isPollFatal, ItemTally } from './helpers.js';
import { nodeValues, partFailureNote, runsService, statsContextOf } from './index-service.js';
import { sectionItemKey } from './index-stats.js';
import { mapSearchIndexStats, SEARCH_INDEX_COUNTERS, SEARCH_INDEX_FAMILIES, SEARCH_INDEX_STATS } from './search-index-stats.js';
import type { SearchIndexShare } from './search-index-stats.js';
import type { CollectContext, Collector } from './types.js';

/** nodeServices ports of the Search service (as the `nodes` collector reads them). */
export const SEARCH_PORTS = ['fts', 'ftsSSL'] as const;

const SECTION_PREFIX = 'fts-';
const ITEM_STATS: ReadonlySet<string> = new Set(SEARCH_INDEX_STATS);

/** The Search service's index definitions (docs rest-fts-indexing, GET /api/index: Search Reader on the buckets). */
export const SEARCH_INDEX_DEFS_ROUTE = '/api/index';

/** `{ status, indexDefs: { indexDefs: { <name>: { sourceName, … } } } }`; `indexDefs` is null when there are none. */
const indexDefsSchema = z.looseObject({
  status: z.string().optional(),
  indexDefs: z.looseObject({ indexDefs: uncheckedRecord().nullish() }).nullish(),
});

/**
 * The buckets that hold a Search index, from the index definitions (an alias has no source bucket and no
 * statistics of its own): undefined when the list cannot be read (the reason goes to `notes`).
 */
export async function searchIndexBuckets(ctx: CollectContext<'search_index'>, notes: string[]): Promise<ReadonlySet<string> | undefined> {
  try {
    const only = ctx.cluster.credentialsHosts === 'configured' ? allowedCredentialHosts(ctx.cluster) : undefined;
    const baseUrl = ctx.cluster.searchUrl ?? serviceUrl(await fetchNodeServices(ctx), ctx.cluster.url, 'fts', 'ftsSSL', only);
    if (baseUrl === undefined) throw new Error('no Search node to ask');
    const defs = (await ctx.client.getJson(SEARCH_INDEX_DEFS_ROUTE, {}, indexDefsSchema, { baseUrl })).indexDefs?.indexDefs ?? {};
    const buckets = new Set<string>();
    for (const def of Object.values(defs)) {
      const source = (def as { sourceName?: unknown } | null)?.sourceName;
      if (typeof source === 'string' && source !== '') buckets.add(source);
    }
    return buckets;
  } catch (err) {
    if (isPollFatal(err)) throw err;
    notes.push(`${partFailureNote(`Search index definitions (GET ${SEARCH_INDEX_DEFS_ROUTE})`, err)}; the sections of every bucket were asked`);
    return undefined;
  }
}

/** What the collector gives the sections' choice: the buckets with Search indexes, read once a poll. */
interface FtsSectionsContext {
  readonly searchIndexBuckets?: () => Promise<ReadonlySet<string> | undefined>;
}

/** Before 7.0, the `@fts-<bucket>` sections: the buckets with Search indexes, else every bucket that can hold one. */
async function ftsSections(ctx: StatsContext): Promise<readonly string[]> {
  const [buckets, withIndexes] = await Promise.all([fetchBuckets(ctx), (ctx as StatsContext & FtsSectionsContext).searchIndexBuckets?.()]);
  return buckets.filter((b) => b.bucketType !== 'memcached' && (withIndexes === undefined || withIndexes.has(b.name))).map((b) => `${SECTION_PREFIX}${b.name}`);
}

/** `fts/<index>/<stat>` of `@fts-<bucket>` → the index and stat. */
function ftsKeyOf(section: string, key: string): { item: string; stat: string } | undefined {
  const k = sectionItemKey('fts', key);
  if (k === undefined || !ITEM_STATS.has(k.stat) || !section.startsWith(SECTION_PREFIX)) return undefined;
  return { item: itemKey([section.slice(SECTION_PREFIX.length), k.item]), stat: k.stat };
}

/** Per Search index and node (ns_server@7.6.2:src/stat_names_mappings.erl: `fts/<I>/<stat>` ↔ `fts_<stat>{bucket, index}`). */
export const SEARCH_INDEX_SPEC = declareServiceStats({
  id: 'search_index',
  collector: 'search_index',
  service: 'fts',
  rows: prefixedRows(SEARCH_INDEX_STATS, SEARCH_INDEX_COUNTERS, 'fts_'),
  itemLabels: ['bucket', 'index'],
  perNode: true,
  envelope: { sections: ftsSections, keyOf: ftsKeyOf },
});

/** Per Search node: its memory (the `@fts` section's fts_num_bytes_used_ram, the same name natively). */
export const SEARCH_NODES_SPEC = declareServiceStats({
  id: 'search_nodes',
  collector: 'search_index',
  service: 'fts',
  rows: [{ stat: 'fts_num_bytes_used_ram', kind: 'level', native: 'fts_num_bytes_used_ram' }],
  itemLabels: [],
  perNode: true,
  envelope: { sections: ['fts'] },
});

export const searchIndexCollector: Collector<'search_index'> = {
  name: 'search_index',
  defaultInterval: 30_000,
  families: Object.values(SEARCH_INDEX_FAMILIES),
  role: 'Read-Only Admin (ro_admin), or a role with stats read on the buckets of the Search indexes; before 7.0 also fts read on them (cluster.bucket[<bucket>].fts!read) to list the index definitions, else every bucket is asked',
  description:
    'Search service statistics: per Search index and node its documents, pending mutations, queries and query errors per second, mean query latency and disk size; per Search node its memory. ' +
    'Each series is one node\'s share of a Search index (the partitions it holds): sum documents, pending mutations, disk and rates by bucket and index for the index\'s total; the latency is per node. ' +
    'Active queries are the `search` collector\'s.',
  async collect(ctx) {
    if (!runsService(await fetchNodeServices(ctx), SEARCH_PORTS)) {
      ctx.notApplicable('no search service');
      return;
    }
    const notes: string[] = [];
    // Statistics are this collector's only part: a source that cannot serve them makes it not applicable.
    // The index definitions are read only when the sections are chosen (before 7.0), once a poll.
    let defs: Promise<ReadonlySet<string> | undefined> | undefined;
    const extra: FtsSectionsContext & { notApplicable(reason: string): void } = {
      notApplicable: (reason: string) => ctx.notApplicable(reason),
      searchIndexBuckets: () => (defs ??= searchIndexBuckets(ctx, notes)),
    };
    const sctx = statsContextOf(ctx, notes, extra);
    const tally = new ItemTally(ctx);
    const shares: SearchIndexShare[] = [];
    let nodes = new Map<string, StatValues>();
    const perIndex = tally.run('search index statistics', async () => {
      const v = await serviceValues(sctx, SEARCH_INDEX_SPEC);
      if (v === undefined) return;
      for (const [item, iv] of v.items) {
        const [bucket, index] = itemParts(item);
        if (bucket === undefined || index === undefined) continue;
        for (const [node, values] of iv.sets) if (node !== ITEM_WIDE) shares.push({ bucket, index, node, values });
      }
    });
    const perNode = tally.run('search node statistics', async () => {
      const v = await serviceValues(sctx, SEARCH_NODES_SPEC);
      if (v !== undefined) nodes = nodeValues(v);
    });
    await Promise.all([perIndex, perNode]);
    mapSearchIndexStats(shares, nodes, ctx.out);
    if (notes.length > 0) ctx.note?.([...new Set(notes)].join('; '));
    tally.settle();
  },
};
