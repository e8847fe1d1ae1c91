/**
 * GET /indexStatus, as the cluster manager answers it (ns_server menelaus_web_indexes:handle_index_status): the
 * index service's consolidated index status, one entry per index replica, with the field names of ns_server's
 * service_index.erl `status_mapping` (6.6.5 and 7.6.2). Shapes by profile:
 * - 7.0+: `scope`, `collection` and `replicaId` on every entry (service_index.erl 7.6.2 status_mapping);
 * - 6.6.5: neither scope, collection nor replicaId; a replica is told only by the display name `index`,
 *   decorated `(replica N)` (indexing request_handler.go, FormatIndexInstDisplayName).
 * Both: `hosts` and `partitionMap` keyed by the node's host:port (request_handler.go getIndexStatus uses the
 * node's management address), `progress` an integer percent, `lastScanTime` Go's time.UnixDate or `NA`
 * (request_handler.go getIndexStatus), status strings of request_handler.go getStateStr.
 *
 * The indexes (on the first bucket; when there is none, the list is empty):
 * - `#primary` Ready, scanned; `def_type` Ready on every index node as replicas 0..n-1, scanned;
 * - `idx_deferred` Created (deferred), never scanned (`NA`), progress 0;
 * - 7.0+ only: `idx_city` in scope `inventory`, collection `hotel`, partitioned over the index nodes (8
 *   partitions), Ready;
 * - `demo` scenario: `idx_building` Building, its progress rising one percent every 6 simulated seconds from the
 *   start (and starting over after 99).
 * No node runs the index service: an empty list (the cluster manager keeps no status to give).
 *
 * Knobs:
 * - `indexStates` (Record<index name, status string>): the status of those indexes instead (e.g. `Error`),
 *   read at request time so a test may change it between polls;
 * - `indexStatusForbidden` (boolean): 403 with ns_server's RBAC body naming the permission of the route
 *   (menelaus_web.erl 7.6.2 `{[{collection, [any, any, any]}, n1ql, index], read}`, 6.6.5 `{[{bucket, any}, n1ql,
 *   index], read}`);
 * - `indexStatusStale` (boolean): the stale-cache warning of handle_index_status;
 * - `indexesDropped` (string[]): indexes left out of the answer (dropped);
 * - `extraIndexes` (number): that many more Ready indexes `idx_extra_000`, `idx_extra_001`, … (one replica each,
 *   on the index nodes in turn), for cost measurements with many indexes.
 * The index service's statistics of these indexes: ./service-stats.ts.
 */
import type { SimContext, SimModule } from '../types.js';

/** One index definition of the simulated cluster (its replicas or partitions are laid out by simIndexLayout). */
export interface SimIndex {
  indexName: string;
  scope: string;
  collection: string;
  status: string;
  progress: number;
  scanned: boolean;
  /** Replicas, each on its own index node; or partitioned over every index node as one replica. */
  replicas: number;
  partitions: number;
  /** Replica r lives on index node (offset + r) mod n (default 0). */
  offset?: number;
}

/** Go's time.UnixDate of an epoch ms, in UTC: `Mon Jan _2 15:04:05 UTC 2006`. */
export function goUnixDate(ms: number): string {
  const d = new Date(ms);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`;
}

/** The index definitions /indexStatus lists now (after the knobs), on the first bucket. */
export function simIndexes(ctx: SimContext, indexNodes: number): SimIndex[] {
  const collections = ctx.options.profile.major >= 7;
  const out: SimIndex[] = [
    { indexName: '#primary', scope: '_default', collection: '_default', status: 'Ready', progress: 100, scanned: true, replicas: 1, partitions: 0 },
    { indexName: 'def_type', scope: '_default', collection: '_default', status: 'Ready', progress: 100, scanned: true, replicas: Math.max(1, indexNodes), partitions: 0 },
    { indexName: 'idx_deferred', scope: '_default', collection: '_default', status: 'Created', progress: 0, scanned: false, replicas: 1, partitions: 0 },
  ];
  if (collections) out.push({ indexName: 'idx_city', scope: 'inventory', collection: 'hotel', status: 'Ready', progress: 100, scanned: true, replicas: 1, partitions: 8 });
  if (ctx.options.scenario === 'demo') {
    const step = Math.floor((ctx.now() - ctx.startedAt) / 6000) % 100;
    out.push({ indexName: 'idx_building', scope: '_default', collection: '_default', status: 'Building', progress: step, scanned: false, replicas: 1, partitions: 0 });
  }
  const extra = Number(ctx.options.knobs.extraIndexes ?? 0);
  for (let i = 0; i < (Number.isFinite(extra) ? extra : 0); i++) {
    out.push({ indexName: `idx_extra_${String(i).padStart(3, '0')}`, scope: '_default', collection: '_default', status: 'Ready', progress: 100, scanned: true, replicas: 1, partitions: 0, offset: i });
  }
  const states = (ctx.options.knobs.indexStates ?? {}) as Record<string, string>;
  const dropped = new Set((ctx.options.knobs.indexesDropped ?? []) as string[]);
  return out
    .filter((i) => !dropped.has(i.indexName))
    .map((i) => {
      const status = states[i.indexName];
      return status === undefined ? i : { ...i, status, progress: status === 'Ready' ? 100 : i.progress };
    });
}

/** The index nodes /indexStatus and the index statistics place indexes on: index service, not failed over. */
export function simIndexNodes(ctx: SimContext): string[] {
  return ctx.nodes.filter((n) => n.services.includes('index') && n.membership !== 'inactiveFailed').map((n) => n.hostname);
}

/**
 * Where each index instance lives: one entry per replica (`name` is the display name, `def_type (replica 1)` for
 * replica 1) with the nodes holding it; a partitioned index is one instance spread over every index node, each
 * holding the partitions p with (p − 1) mod n equal to its position.
 */
export function simIndexLayout(ix: SimIndex, nodes: readonly string[]): Array<{ replica: number; name: string; hosts: string[]; partitionMap: Record<string, number[]> }> {
  const out: Array<{ replica: number; name: string; hosts: string[]; partitionMap: Record<string, number[]> }> = [];
  for (let r = 0; r < ix.replicas; r++) {
    const hosts = ix.partitions > 0 ? [...nodes] : [nodes[((ix.offset ?? 0) + r) % nodes.length] as string];
    const partitionMap: Record<string, number[]> = {};
    if (ix.partitions > 0) {
      for (let p = 1; p <= ix.partitions; p++) (partitionMap[nodes[(p - 1) % nodes.length] as string] ??= []).push(p);
    } else partitionMap[hosts[0] as string] = [0];
    out.push({ replica: r, name: r === 0 ? ix.indexName : `${ix.indexName} (replica ${r})`, hosts, partitionMap });
  }
  return out;
}

export const indexStatusModule: SimModule = (app, ctx) => {
  app.get('/indexStatus', async (_req, reply) => {
    const knobs = ctx.options.knobs;
    const collections = ctx.options.profile.major >= 7;
    if (knobs.indexStatusForbidden === true) {
      return reply.code(403).send({
        message: 'Forbidden. User needs the following permissions',
        permissions: [collections ? 'cluster.collection[.:.:.].n1ql.index!read' : 'cluster.bucket[.].n1ql.index!read'],
      });
    }
    const nodes = simIndexNodes(ctx);
    const bucket = ctx.buckets[0]?.name;
    const indexes: Record<string, unknown>[] = [];
    if (bucket !== undefined && nodes.length > 0) {
      // A scanned index was last scanned on the previous whole minute of simulated time.
      const now = ctx.now();
      const lastScan = goUnixDate(now - (now % 60_000));
      let id = 1000;
      for (const ix of simIndexes(ctx, nodes.length)) {
        id++;
        for (const { replica: r, name, hosts, partitionMap } of simIndexLayout(ix, nodes)) {
          const entry: Record<string, unknown> = {
            storageMode: 'plasma',
            partitionMap,
            numPartition: ix.partitions > 0 ? ix.partitions : 1,
            partitioned: ix.partitions > 0,
            instId: id * 10 + r,
            hosts,
            stale: false,
            progress: ix.progress,
            definition: `CREATE INDEX \`${ix.indexName}\` ON \`${bucket}\`(\`type\`)`,
            status: ix.status,
            bucket,
            lastScanTime: ix.scanned && ix.status === 'Ready' ? lastScan : 'NA',
            numReplica: ix.replicas - 1,
            indexName: ix.indexName,
            index: name,
            id,
          };
          if (collections) Object.assign(entry, { scope: ix.scope, collection: ix.collection, replicaId: r });
          indexes.push(entry);
        }
      }
    }
    const warnings = knobs.indexStatusStale === true ? ['Cannot communicate with indexer process. Information on indexes may be stale. Will retry.'] : [];
    return { indexes, version: 64_338_937, warnings };
  });
};
