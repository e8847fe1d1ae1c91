/**
 * Collector `index`: the Index service (GSI). Its file is not `index.ts`, which is the collector registry.
 *
 * Two parts, each an item of the poll, so that one failing never blanks the other's families:
 * - the index state from the cluster manager's GET /indexStatus (mapping in ./index-state.ts): per index replica its
 *   state, build progress, last scan time and the nodes holding its partitions, and whether the answer is stale;
 * - the index statistics (families and mapping in ./index-stats.ts) through the service statistics sources
 *   (src/stats/service-values.ts): from 7.0 the native `index_*` series of the shared range request, per index
 *   (labels bucket, scope, collection, index) and node; before 7.0 the sections `@index-<bucket>` and `@index` on each
 *   index node's own route (the cluster-wide answer sums the nodes). The buckets asked before 7.0 are those
 *   /indexStatus lists this poll; when it cannot be read, every bucket that can hold an index.
 *
 * A 403 on /indexStatus is the state part's failure: counted as an item error, its missing permission (Couchbase's
 * `permissions` array) logged once at warn and shown in the poll's note, while the statistics are still exported.
 * Both parts failing fails the poll. A cluster where no node runs the Index service (no `indexHttp`/`indexAdmin`
 * port in nodeServices) is not applicable: no request, no error.
 *
 * A stale answer (the cluster manager's warning that it cannot reach an indexer) is still exported: the states
 * are the cluster manager's last known ones, `couchbase_index_status_stale` says so, and each warning is a note
 * of the poll (shown by `cbwatch check` and on the landing page).
 */
import { fetchBuckets } from '../couchbase/buckets.js';
import { fetchNodeServices } from '../couchbase/nodeServices.js';
import type { NodeServices } from '../couchbase/nodeServices.js';
import { INDEX_STATUS_ROUTE, indexStatusSchema } from '../couchbase/indexStatus.js';
import { boundedText, describeError } from '../errors.js';
import { declareServiceStats, itemKey, itemParts, prefixedRows, serviceValues } from '../stats/service-values.js';
import type { ServiceContext } from '../stats/service-values.js';
import type { StatsContext } from '../stats/context.js';
import { ITEM_WIDE } from '../stats/values.js';
import type { SourceValues, StatValues } from '../stats/values.js';
import { isCode, ItemTally } from './helpers.js';
import { INDEX_ITEM_COUNTERS, INDEX_ITEM_STATS, INDEX_STAT_FAMILIES, mapIndexStats, sectionItemKey } from './index-stats.js';
import type { IndexShare } from './index-stats.js';
import { INDEX_STATE_FAMILIES, mapIndexStatus } from './index-state.js';
import type { CollectContext, Collector, Skip } from './types.js';

/** The longest piece of an /indexStatus warning (or failure) kept in the poll's note. */
const WARNING_TEXT_MAX = 300;

/** Whether any node of the cluster runs a service, told by the nodeServices ports it advertises. */
export function runsService(ns: NodeServices, ports: readonly string[]): boolean {
  return ns.nodesExt.some((n) => ports.some((p) => n.services[p] !== undefined));
}

/** nodeServices ports of the Index service (as the `nodes` collector reads them). */
export const INDEX_PORTS = ['indexAdmin', 'indexHttp', 'indexHttps'] as const;

/** The envelope section of a bucket's index statistics (without the `@`). */
const SECTION_PREFIX = 'index-';
const ITEM_STATS: ReadonlySet<string> = new Set(INDEX_ITEM_STATS);

/** What the statistics part is given by the poll: the buckets /indexStatus listed (undefined: it was not read). */
interface IndexPoll {
  readonly indexBuckets?: Promise<readonly string[] | undefined>;
}

/** Before 7.0, the buckets whose `@index-<bucket>` sections are asked: those with an index, else any that may hold one. */
async function indexSections(ctx: StatsContext): Promise<readonly string[]> {
  const listed = await (ctx as StatsContext & IndexPoll).indexBuckets;
  const buckets = listed ?? (await fetchBuckets(ctx)).filter((b) => b.bucketType !== 'memcached').map((b) => b.name);
  return buckets.map((b) => `${SECTION_PREFIX}${b}`);
}

/** `index/<index>/<stat>` of `@index-<bucket>` → the index (in `_default`.`_default`, where 7.0 puts it) and stat. */
function indexKeyOf(section: string, key: string): { item: string; stat: string } | undefined {
  const k = sectionItemKey('index', key);
  if (k === undefined || !ITEM_STATS.has(k.stat) || !section.startsWith(SECTION_PREFIX)) return undefined;
  return { item: itemKey([section.slice(SECTION_PREFIX.length), '_default', '_default', k.item]), stat: k.stat };
}

/** Per index and node: the stats of index-stats.ts (ns_server@7.6.2:src/stat_names_mappings.erl `map_index_stats`: `index/<I>/<stat>` ↔ `index_<stat>{bucket, index}`). */
export const INDEX_ITEMS_SPEC = declareServiceStats({
  id: 'index_items',
  collector: 'index',
  service: 'index',
  rows: prefixedRows(INDEX_ITEM_STATS, INDEX_ITEM_COUNTERS, 'index_'),
  itemLabels: ['bucket', 'scope', 'collection', 'index'],
  perNode: true,
  envelope: { sections: indexSections, keyOf: indexKeyOf },
});

/** Per index node: quota and use (ns_server@7.6.2:src/stat_names_mappings.erl: `@index` index_memory_used ↔ index_memory_used_total). */
export const INDEX_NODES_SPEC = declareServiceStats({
  id: 'index_nodes',
  collector: 'index',
  service: 'index',
  rows: [
    { stat: 'index_memory_quota', kind: 'level', native: 'index_memory_quota' },
    { stat: 'index_memory_used', kind: 'level', native: 'index_memory_used_total' },
  ],
  itemLabels: [],
  perNode: true,
  envelope: { sections: ['index'] },
});

/** The index shares of the per-index values: one per index and node. Pure. */
export function indexShares(values: SourceValues): IndexShare[] {
  const out: IndexShare[] = [];
  for (const [item, iv] of values.items) {
    const [bucket, scope, collection, index] = itemParts(item);
    if (bucket === undefined || scope === undefined || collection === undefined || index === undefined) continue;
    for (const [node, v] of iv.sets) if (node !== ITEM_WIDE) out.push({ bucket, scope, collection, index, node, values: v });
  }
  return out;
}

/** The node values of the per-node values (item: the node). Pure. */
export function nodeValues(values: SourceValues): Map<string, StatValues> {
  const out = new Map<string, StatValues>();
  for (const [node, iv] of values.items) {
    const v = iv.sets.get(node);
    if (v !== undefined) out.set(node, v);
  }
  return out;
}

/**
 * The statistics part's context: the poll's, with its notes gathered (the poll keeps one note) and a
 * not-applicable reason of the statistics kept as a note (the collector's other part still applies); `extra`
 * overrides (a collector of statistics only passes its own notApplicable).
 */
export function statsContextOf<N extends 'index' | 'eventing' | 'search_index'>(ctx: CollectContext<N>, notes: string[], extra: object = {}): ServiceContext & { notApplicable(reason: string): void } {
  const own = {
    note: (text: string): void => void notes.push(text),
    notApplicable: (reason: string): void => void notes.push(`statistics not applicable: ${reason}`),
  };
  return Object.assign(Object.create(ctx) as CollectContext<N>, own, extra);
}

/** ItemTally.settle, throwing `first` (when set) rather than the last part's error when every part failed. */
export function settleFirst(tally: ItemTally, first: unknown): void {
  try {
    tally.settle();
  } catch (err) {
    throw first ?? err;
  }
}

/**
 * The poll's note for a part that failed: a 403's missing permissions (Couchbase's `permissions` array, bounded), else
 * the error's code and brief reason (no upstream text: the note reaches the landing page).
 */
export function partFailureNote(part: string, err: unknown): string {
  if (isCode(err, 'CBW_ERR_FORBIDDEN')) {
    const permissions = (err as { permissions?: readonly string[] }).permissions ?? [];
    return `${part}: forbidden (403)${permissions.length > 0 ? `: missing permission ${boundedText(permissions.join(' or '), WARNING_TEXT_MAX)}` : ''}`;
  }
  return `${part}: ${describeError(err, { public: true })}`;
}

/** A 403 on a part's request: its missing permission logged once at warn (later polls at debug). */
export function warnForbiddenOnce(ctx: Pick<CollectContext, 'state' | 'log'>, endpoint: string, err: unknown): void {
  if (!isCode(err, 'CBW_ERR_FORBIDDEN')) return;
  const permissions = (err as { permissions?: readonly string[] }).permissions ?? [];
  const key = `\u0000forbidden:${endpoint}`;
  if (ctx.state.has(key)) {
    ctx.log.debug({ endpoint, permissions }, 'still forbidden');
    return;
  }
  ctx.state.set(key, true);
  ctx.log.warn({ endpoint, permissions }, `forbidden: the monitoring user lacks ${permissions.length > 0 ? permissions.join(' or ') : 'a security role'}; the other parts of the collector carry on`);
}

export const indexCollector: Collector<'index'> = {
  name: 'index',
  defaultInterval: 30_000,
  families: [...Object.values(INDEX_STATE_FAMILIES), ...Object.values(INDEX_STAT_FAMILIES)],
  role: 'Read-Only Admin (ro_admin) or any role with n1ql.index read on the collections (7.x lists only the indexes of collections the user may read) and stats read on the buckets',
  description:
    'Index service: per index replica its state (ready, building, created, error, …), build progress, last scan time and the nodes holding its partitions; per index and node its statistics (items, pending and queued documents, resident and fragmentation ratios, sizes, memory, scan latency, requests, rows, cache hit ratio); per index node its memory quota, use and their ratio. ' +
    'Each statistics series is one node\'s share of an index: a partitioned index has a series on every node holding some of its partitions, and a replica is an index of its own (`<name> (replica N)`) on its own node. Sum levels and rates by bucket, scope, collection and index for the index\'s total; a ratio or a latency is per node and does not add up. ' +
    'Before 7.0, which has no scopes, scope and collection are `_default` (where 7.0 puts such an index); so are they for every index\'s statistics under stats_source: envelope on 7.x, whose legacy keys name the bucket and index only. replica is `replicaId`, or the `(replica N)` of the display name before 7.0. While couchbase_index_status_stale is 1 the states are the cluster manager\'s last known ones. ' +
    'A missing permission for /indexStatus fails the state part only; the statistics are still exported.',
  async collect(ctx) {
    if (!runsService(await fetchNodeServices(ctx), INDEX_PORTS)) {
      ctx.notApplicable('no index service');
      return;
    }
    const notes: string[] = [];
    const tally = new ItemTally(ctx);
    let listed!: (b: readonly string[] | undefined) => void;
    const indexBuckets = new Promise<readonly string[] | undefined>((resolve) => (listed = resolve));
    let stateError: unknown;
    const state = tally.run('index state (GET /indexStatus)', async () => {
      try {
        const answer = await ctx.client.getJson(INDEX_STATUS_ROUTE, {}, indexStatusSchema);
        const skip: Skip = (reason, detail) => ctx.skipped(reason, detail);
        // Entries that do not parse are item errors, but do not fail the part: the list was read.
        const warnings = mapIndexStatus(answer, ctx.out, skip, new ItemTally(ctx));
        listed([...new Set(answer.indexes.flatMap((e) => (e !== null && typeof e === 'object' && typeof (e as { bucket?: unknown }).bucket === 'string' ? [(e as { bucket: string }).bucket] : [])))]);
        // Couchbase's text: redacted and bounded before it reaches `check` or the landing page.
        const first = warnings[0];
        if (first !== undefined) notes.push(`/indexStatus: ${boundedText(first, WARNING_TEXT_MAX)}${warnings.length > 1 ? ` (and ${warnings.length - 1} more warnings)` : ''}`);
      } catch (err) {
        listed(undefined);
        stateError = err;
        warnForbiddenOnce(ctx, INDEX_STATUS_ROUTE, err);
        notes.push(partFailureNote('index state', err));
        throw err;
      }
    });
    const sctx = statsContextOf(ctx, notes, { indexBuckets } satisfies IndexPoll);
    // The two statistics parts share one range request a poll (service-range.ts); each fails on its own.
    let shares: IndexShare[] = [];
    let nodes = new Map<string, StatValues>();
    const perIndex = tally.run('index statistics', async () => {
      const v = await serviceValues(sctx, INDEX_ITEMS_SPEC);
      if (v !== undefined) shares = indexShares(v);
    });
    const perNode = tally.run('index node statistics', async () => {
      const v = await serviceValues(sctx, INDEX_NODES_SPEC);
      if (v !== undefined) nodes = nodeValues(v);
    });
    await Promise.all([state, perIndex, perNode]);
    mapIndexStats(shares, nodes, ctx.out);
    if (notes.length > 0) ctx.note?.([...new Set(notes)].join('; '));
    // Every part failed: the poll fails, with the state's error first (it names a missing permission).
    settleFirst(tally, stateError);
  },
};
