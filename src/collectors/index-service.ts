/**
 * Collector `index`: the Index service (GSI). Its file is not `index.ts`, which is the collector registry.
 *
 * For now it exports the index state from the cluster manager's GET /indexStatus (mapping in ./index-state.ts):
 * per index replica its state, build progress, last scan time and the nodes holding its partitions, and whether
 * the answer is stale. A cluster where no node runs the Index service (no `indexHttp`/`indexAdmin` port in
 * nodeServices) is not applicable: no request, no error.
 *
 * A 403 on /indexStatus fails the poll with the missing permission (Couchbase's `permissions` array, through the
 * client's forbidden error), as /indexStatus is the collector's only source: exporting nothing with success 1
 * would hide it. Other collectors are untouched.
 *
 * A stale answer (the cluster manager's warning that it cannot reach an indexer) is still exported: the states
 * are the cluster manager's last known ones, `couchbase_index_status_stale` says so, and each warning is a note
 * of the poll (shown by `cbwatch check` and on the landing page).
 */
import { fetchNodeServices } from '../couchbase/nodeServices.js';
import type { NodeServices } from '../couchbase/nodeServices.js';
import { INDEX_STATUS_ROUTE, indexStatusSchema } from '../couchbase/indexStatus.js';
import { boundedText } from '../errors.js';
import { ItemTally } from './helpers.js';

/** The longest piece of an /indexStatus warning kept in the poll's note. */
const WARNING_TEXT_MAX = 300;
import { INDEX_STATE_FAMILIES, mapIndexStatus } from './index-state.js';
import type { Collector, Skip } from './types.js';

/** Whether any node of the cluster runs a service, told by the nodeServices ports it advertises. */
export function runsService(ns: NodeServices, ports: readonly string[]): boolean {
  return ns.nodesExt.some((n) => ports.some((p) => n.services[p] !== undefined));
}

/** nodeServices ports of the Index service (as the `nodes` collector reads them). */
export const INDEX_PORTS = ['indexAdmin', 'indexHttp', 'indexHttps'] as const;

export const indexCollector: Collector<'index'> = {
  name: 'index',
  defaultInterval: 30_000,
  families: Object.values(INDEX_STATE_FAMILIES),
  role: 'Read-Only Admin (ro_admin) or any role with n1ql.index read on the collections (7.x lists only the indexes of collections the user may read)',
  description: 'Index service: per index replica its state (ready, building, created, error, …), build progress, last scan time and the nodes holding its partitions. Before 7.0, which has no scopes, scope and collection are `_default` (where 7.0 puts such an index); replica is `replicaId`, or the `(replica N)` of the display name before 7.0. While couchbase_index_status_stale is 1 the states are the cluster manager\'s last known ones.',
  async collect(ctx) {
    if (!runsService(await fetchNodeServices(ctx), INDEX_PORTS)) {
      ctx.notApplicable('no index service');
      return;
    }
    const answer = await ctx.client.getJson(INDEX_STATUS_ROUTE, {}, indexStatusSchema);
    const skip: Skip = (reason, detail) => ctx.skipped(reason, detail);
    // Entries that do not parse are item errors, but do not fail the poll: the list was read.
    const warnings = mapIndexStatus(answer, ctx.out, skip, new ItemTally(ctx));
    // Couchbase's text: redacted and bounded before it reaches `check` or the landing page; one note a poll.
    const first = warnings[0];
    if (first !== undefined) ctx.note?.(`/indexStatus: ${boundedText(first, WARNING_TEXT_MAX)}${warnings.length > 1 ? ` (and ${warnings.length - 1} more warnings)` : ''}`);
  },
};
