/**
 * Collector `eventing`: the Eventing service. For now it exports the status of each function from
 * GET /_p/event/api/v1/status (the eventing service's own status API behind the cluster manager's pluggable-UI
 * proxy): its composite status one-hot, the nodes it is deployed and bootstrapping on, and whether it must be
 * redeployed. A cluster where no node runs the Eventing service (no `eventingAdminPort`/`eventingSSL` in
 * nodeServices) is not applicable: no request, no error.
 *
 * Labels: `function` (its name) and, on 7.x where a function belongs to a scope, `function_bucket` and
 * `function_scope` (its `function_scope`; `*` for a function not tied to one); both are empty on an answer
 * without `function_scope` (6.x), where a function is named by its name alone.
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { fetchNodeServices } from '../couchbase/nodeServices.js';
import { EVENTING_STATUS_ROUTE, eventingAppSchema, eventingStatusSchema } from '../couchbase/eventing.js';
import type { EventingApp, EventingStatusAnswer } from '../couchbase/eventing.js';
import { MAX_INVALID_SHOWN, notAnObject } from '../couchbase/source.js';
import { CbwError, summariseIssues } from '../errors.js';
import { byCodeUnit } from '../text-order.js';
import { ItemTally, oneHot } from './helpers.js';
import type { ItemSink } from './helpers.js';
import { runsService } from './index-service.js';
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

export const eventingCollector: Collector<'eventing'> = {
  name: 'eventing',
  defaultInterval: 30_000,
  families: Object.values(F),
  role: 'Eventing Full Admin (eventing_admin), or a role that may read the functions of their scopes (the eventing service checks it behind the cluster manager\'s /_p/event proxy)',
  description: 'Eventing service: per function its status (deployed, paused, undeployed, …), the nodes it is deployed on and whether it must be redeployed. function_bucket and function_scope are the function\'s scope (`*` when not tied to one), empty where the answer has none (6.x).',
  async collect(ctx) {
    if (!runsService(await fetchNodeServices(ctx), EVENTING_PORTS)) {
      ctx.notApplicable('no eventing service');
      return;
    }
    const answer = await ctx.client.getJson(EVENTING_STATUS_ROUTE, {}, eventingStatusSchema);
    const skip: Skip = (reason, detail) => ctx.skipped(reason, detail);
    // Functions that do not parse are item errors, but do not fail the poll: the list was read.
    mapEventingStatus(answer, ctx.out, skip, new ItemTally(ctx));
  },
};
