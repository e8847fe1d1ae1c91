/**
 * The Eventing service's function status behind the cluster manager's pluggable-UI proxy:
 * GET /_p/event/api/v1/status (ns_server menelaus_web.erl `[?PLUGGABLE_UI, RestPrefix | _]` proxies the `event`
 * prefix that eventing registers; the answer is eventing service_manager/defs.go `appStatusResponse`, the
 * statuses http_handlers.go `determineStatus`). Shapes by profile: `function_scope` ({bucket, scope}) from 7.0
 * as the reference gives it; without it on 6.6.5 (eventing mad-hatter defs.go).
 *
 * No node of the default cluster runs eventing. Knob `eventingNodes` (number; the `demo` scenario defaults to 1)
 * adds the eventing service to that many nodes from the first, at start (nodeServices then advertises its ports).
 * Without an eventing node the proxy has nothing to forward to: 404.
 *
 * Functions: `enrich_orders` deployed; `audit_log` deployed (paused in `demo`); `cleanup_sessions` undeployed.
 * From 7.0 each has the function scope of the first bucket's `_default` scope, and `audit_log` is not tied to
 * one (`*`/`*`). Knobs: `eventingStatuses` (Record<function, composite_status>), read at request time;
 * `eventingFunctionsDropped` (string[]); `eventingStatusForbidden` (boolean: 403 with an RBAC body naming the
 * eventing permission); `extraFunctions` (number): that many more deployed functions `fn_extra_000`, … (cost
 * measurements). The functions' statistics: ./service-stats.ts.
 */
import type { SimContext, SimModule } from '../types.js';

/** One Eventing function of the simulated cluster and its composite status now (after the knobs). */
export interface SimFunction {
  readonly name: string;
  readonly status: string;
  readonly scope: { bucket: string; scope: string };
}

/** The functions the eventing status lists now: the fixed three, the extra ones, minus the dropped, with knob statuses. */
export function simFunctions(ctx: SimContext): SimFunction[] {
  const knobs = ctx.options.knobs;
  const bucket = ctx.buckets[0]?.name ?? 'default';
  const statuses = (knobs.eventingStatuses ?? {}) as Record<string, string>;
  const dropped = new Set((knobs.eventingFunctionsDropped ?? []) as string[]);
  const fns: SimFunction[] = [
    { name: 'enrich_orders', status: 'deployed', scope: { bucket, scope: '_default' } },
    { name: 'audit_log', status: ctx.options.scenario === 'demo' ? 'paused' : 'deployed', scope: { bucket: '*', scope: '*' } },
    { name: 'cleanup_sessions', status: 'undeployed', scope: { bucket, scope: '_default' } },
  ];
  const extra = Number(knobs.extraFunctions ?? 0);
  for (let i = 0; i < (Number.isFinite(extra) ? extra : 0); i++) fns.push({ name: `fn_extra_${String(i).padStart(3, '0')}`, status: 'deployed', scope: { bucket, scope: '_default' } });
  return fns.filter((f) => !dropped.has(f.name)).map((f) => ({ ...f, status: statuses[f.name] ?? f.status }));
}

/** deployment_status / processing_status of each composite status (http_handlers.go determineStatus). */
const FLAGS: Readonly<Record<string, readonly [boolean, boolean]>> = {
  undeployed: [false, false],
  deploying: [true, false],
  deployed: [true, true],
  undeploying: [false, false],
  paused: [true, false],
  pausing: [true, true],
};

export const eventingModule: SimModule = (app, ctx) => {
  const wanted = Number(ctx.options.knobs.eventingNodes ?? (ctx.options.scenario === 'demo' ? 1 : 0));
  for (const n of ctx.nodes.slice(0, Number.isFinite(wanted) ? wanted : 0)) if (!n.services.includes('eventing')) n.services.push('eventing');

  app.get('/_p/event/api/v1/status', async (_req, reply) => {
    const knobs = ctx.options.knobs;
    const nodes = ctx.nodes.filter((n) => n.services.includes('eventing') && n.membership !== 'inactiveFailed').length;
    if (nodes === 0) return reply.code(404).send('Not found.');
    if (knobs.eventingStatusForbidden === true) {
      return reply.code(403).send({ message: 'Forbidden. User needs the following permissions', permissions: ['cluster.eventing.functions!manage'] });
    }
    const scoped = ctx.options.profile.major >= 7;
    const apps = simFunctions(ctx)
      .map((f) => {
        const status = f.status;
        const [deployment, processing] = FLAGS[status] ?? [false, false];
        const app: Record<string, unknown> = {
          composite_status: status,
          name: f.name,
          num_bootstrapping_nodes: status === 'deploying' ? nodes : 0,
          num_deployed_nodes: status === 'deployed' || status === 'paused' || status === 'pausing' ? nodes : 0,
          deployment_status: deployment,
          processing_status: processing,
          redeploy_required: false,
        };
        if (scoped) app.function_scope = f.scope;
        return app;
      });
    return { apps, num_eventing_nodes: nodes };
  });
};
