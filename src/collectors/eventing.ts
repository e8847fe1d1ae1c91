/**
 * Collector `eventing`: the Eventing service. Two parts, each an item of the poll, so that one failing never blanks
 * the other's families:
 * - the status of each function from GET /_p/event/api/v1/status (the eventing service's own status API behind the
 *   cluster manager's pluggable-UI proxy): its composite status one-hot, the nodes it is deployed and bootstrapping
 *   on, and whether it must be redeployed;
 * - the statistics of each function (families and mapping in ./eventing-stats.ts) through the service statistics
 *   sources (src/stats/service-values.ts): from 7.0 the native `eventing_*{functionName}` series of the shared range
 *   request, summed over the eventing nodes; before 7.0 the cluster-wide `@eventing` section (its
 *   `eventing/<function>/<stat>` keys are sums over the nodes). A paused or undeployed function has no statistics
 *   from 7.0: its status is exported, its statistics are absent.
 * A cluster where no node runs the Eventing service (no `eventingAdminPort`/`eventingSSL` in nodeServices) is not
 * applicable: no request, no error.
 *
 * Labels: `function` (its name) and, on 7.x where a function belongs to a scope, `function_bucket` and
 * `function_scope` (its `function_scope`; `*` for a function not tied to one); both are empty on an answer
 * without `function_scope` (6.x), where a function is named by its name alone.
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { fetchNodeServices } from '../couchbase/nodeServices.js';
import { declareServiceStats, serviceValues } from '../stats/service-values.js';
import type { StatValues } from '../stats/values.js';
import { ITEM_WIDE } from '../stats/values.js';
import { EVENTING_STATUS_ROUTE, eventingAppSchema, eventingStatusSchema } from '../couchbase/eventing.js';
import type { EventingApp, EventingStatusAnswer } from '../couchbase/eventing.js';
import { MAX_INVALID_SHOWN, notAnObject } from '../couchbase/source.js';
import { CbwError, summariseIssues } from '../errors.js';
import { byCodeUnit } from '../text-order.js';
import { ItemTally, oneHot } from './helpers.js';
import type { ItemSink } from './helpers.js';
import { EVENTING_STAT_FAMILIES, EVENTING_STATS, functionKeyOf, mapEventingStats } from './eventing-stats.js';
import { partFailureNote, runsService, settleFirst, statsContextOf, warnForbiddenOnce } from './index-service.js';
import type { Collector, Skip } from './types.js';

const C = 'eventing';
const FUNCTION = ['function', 'function_bucket', 'function_scope'] as const;

/** The composite statuses of the eventing service (its `determineStatus`), in export order. */
export const FUNCTION_STATUSES = ['undeployed', 'deploying', 'deployed', 'undeploying', 'paused', 'pausing'] as const;

/** nodeServices ports of the Eventing service (as the `nodes` collector reads them). */
export const EVENTING_PORTS = ['eventingAdminPort', 'eventingSSL'] as const;

export const F = {
  status: defineFamily(
    C,
    'couchbase_eventing_function_status',
    'gauge',
    'Composite status of the Eventing function, one-hot: undeployed, deploying, deployed (deployed and processing on every node), undeploying, paused (deployed, not processing), pausing; any other status the service reports is exported under its own name.',
    [...FUNCTION, 'status'],
  ),
  deployedNodes: defineFamily(C, 'couchbase_eventing_function_deployed_nodes', 'gauge', 'Eventing nodes the function is deployed on.', [...FUNCTION], 'count'),
  bootstrappingNodes: defineFamily(C, 'couchbase_eventing_function_bootstrapping_nodes', 'gauge', 'Eventing nodes still bootstrapping (deploying or resuming) the function.', [...FUNCTION], 'count'),
  redeploy: defineFamily(C, 'couchbase_eventing_function_redeploy_required', 'gauge', 'Whether the function must be redeployed (e.g. after an upgrade changed its handler language compatibility).', [...FUNCTION]),
  nodes: defineFamily(C, 'couchbase_eventing_nodes', 'gauge', 'Nodes running the Eventing service, as the service counts them.', [], 'count'),
} as const satisfies Record<string, FamilyDef>;

function functionLabels(a: EventingApp): Record<(typeof FUNCTION)[number], string> {
  return { function: a.name, function_bucket: a.function_scope?.bucket ?? '', function_scope: a.function_scope?.scope ?? '' };
}

/**
 * One status answer → samples. Pure. Each function is an item: one that does not parse is reported to `items`
 * (or counted through `skip` without a sink) and costs only its own series.
 */
export function mapEventingStatus(answer: EventingStatusAnswer, out: SampleSet, skip: Skip, items?: ItemSink): void {
  const apps: EventingApp[] = [];
  let described = 0;
  let counted = 0;
  for (const [i, raw] of (answer.apps ?? []).entries()) {
    const wrong = notAnObject(raw);
    const r = wrong === undefined ? eventingAppSchema.safeParse(raw) : undefined;
    if (r?.success === true) {
      apps.push(r.data);
      continue;
    }
    if (items && described >= MAX_INVALID_SHOWN) {
      counted++;
      continue;
    }
    described++;
    const name = (raw as { name?: unknown } | null)?.name;
    const item = `function ${typeof name === 'string' ? name.slice(0, 60) : `#${i}`}`;
    if (items) items.failed(item, new CbwError('CBW_ERR_SCHEMA', `GET ${EVENTING_STATUS_ROUTE}: ${item}: ${r === undefined ? wrong : summariseIssues(r.error.issues)}`));
    else skip('function_unparseable', item);
  }
  if (counted > 0) items?.failed(`${counted} more functions`, new CbwError('CBW_ERR_SCHEMA', `GET ${EVENTING_STATUS_ROUTE}: ${counted} more entries do not parse`), counted);
  const keyed = apps.map((a) => ({ a, labels: functionLabels(a) }));
  keyed.sort((x, y) => byCodeUnit(x.labels.function_bucket, y.labels.function_bucket) || byCodeUnit(x.labels.function_scope, y.labels.function_scope) || byCodeUnit(x.labels.function, y.labels.function));
  for (const { a, labels } of keyed) {
    if (a.composite_status !== undefined && a.composite_status !== '') oneHot(out, F.status, labels, 'status', FUNCTION_STATUSES, a.composite_status);
    out.add(F.deployedNodes, labels, a.num_deployed_nodes);
    out.add(F.bootstrappingNodes, labels, a.num_bootstrapping_nodes);
    out.add(F.redeploy, labels, a.redeploy_required);
  }
  out.add(F.nodes, {}, answer.num_eventing_nodes);
}

/**
 * Per function, summed over the eventing nodes (ns_server@7.6.2:src/stat_names_mappings.erl: `eventing/<F>/<stat>` ↔
 * `sum by (name, functionName)(eventing_<stat>{functionName=F})`, no rate): the backlog a level, the rest the running
 * totals Couchbase keeps.
 */
export const EVENTING_SPEC = declareServiceStats({
  id: 'eventing',
  collector: 'eventing',
  service: 'eventing',
  rows: EVENTING_STATS.map((stat) => ({ stat, kind: stat === 'dcp_backlog' ? ('level' as const) : ('total' as const), native: `eventing_${stat}` })),
  itemLabels: ['functionName'],
  perNode: false,
  envelope: { sections: ['eventing'], keyOf: (_section, key) => functionKeyOf(key) },
});


export const eventingCollector: Collector<'eventing'> = {
  name: 'eventing',
  defaultInterval: 30_000,
  families: [...Object.values(F), ...Object.values(EVENTING_STAT_FAMILIES)],
  role: 'Eventing Full Admin (eventing_admin), or a role that may read the functions of their scopes (the eventing service checks it behind the cluster manager\'s /_p/event proxy), and stats read on the buckets',
  description:
    'Eventing service: per function its status (deployed, paused, undeployed, …), the nodes it is deployed on and whether it must be redeployed; its DCP backlog and, as counters, the running totals Couchbase keeps of OnUpdate and OnDelete successes and failures and of timeouts, summed over the eventing nodes. ' +
    'function_bucket and function_scope are the function\'s scope (`*` when not tied to one), empty where the answer has none (6.x). ' +
    'From 7.0 Couchbase serves statistics for deployed functions only: a paused or undeployed function has its status and no statistics series (never zeros).',
  async collect(ctx) {
    if (!runsService(await fetchNodeServices(ctx), EVENTING_PORTS)) {
      ctx.notApplicable('no eventing service');
      return;
    }
    const notes: string[] = [];
    const tally = new ItemTally(ctx);
    let statusError: unknown;
    const status = tally.run('function status (GET /_p/event/api/v1/status)', async () => {
      try {
        const answer = await ctx.client.getJson(EVENTING_STATUS_ROUTE, {}, eventingStatusSchema);
        const skip: Skip = (reason, detail) => ctx.skipped(reason, detail);
        // Functions that do not parse are item errors, but do not fail the part: the list was read.
        mapEventingStatus(answer, ctx.out, skip, new ItemTally(ctx));
      } catch (err) {
        statusError = err;
        warnForbiddenOnce(ctx, EVENTING_STATUS_ROUTE, err);
        notes.push(partFailureNote('function status', err));
        throw err;
      }
    });
    let functions = new Map<string, StatValues>();
    const stats = tally.run('function statistics', async () => {
      const v = await serviceValues(statsContextOf(ctx, notes), EVENTING_SPEC);
      if (v === undefined) return;
      functions = new Map([...v.items].flatMap(([name, iv]) => {
        const values = iv.sets.get(ITEM_WIDE);
        return values === undefined ? [] : [[name, values] as const];
      }));
    });
    await Promise.all([status, stats]);
    mapEventingStats(functions, ctx.out);
    if (notes.length > 0) ctx.note?.([...new Set(notes)].join('; '));
    // Both parts failed: the poll fails, with the status's error first (it names a missing permission).
    settleFirst(tally, statusError);
  },
};
