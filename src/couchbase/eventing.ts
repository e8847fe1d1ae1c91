/**
 * The Eventing service's function status, read through ns_server's pluggable-UI proxy: ns_server forwards
 * `/_p/event/…` to the eventing service that registered the `event` prefix, which answers
 * `api/v1/status` (eventing service_manager `appStatusResponse`) with the caller's credentials checked there.
 */
import { z } from 'zod';
import { uncheckedArray } from './unchecked.js';

export const EVENTING_STATUS_ROUTE = '/_p/event/api/v1/status';

/** One function (eventing `appStatus`). */
export const eventingAppSchema = z.looseObject({
  name: z.string().min(1),
  /** undeployed, deploying, deployed, undeploying, paused, pausing. */
  composite_status: z.string().optional(),
  /** 7.x: the function's scope; `*` / `*` for a function not tied to one. Absent before. */
  function_scope: z.looseObject({ bucket: z.string().optional(), scope: z.string().optional() }).optional(),
  num_bootstrapping_nodes: z.number().optional(),
  num_deployed_nodes: z.number().optional(),
  deployment_status: z.boolean().optional(),
  processing_status: z.boolean().optional(),
  redeploy_required: z.boolean().optional(),
});
export type EventingApp = z.output<typeof eventingAppSchema>;

/** The answer; `apps` entries are parsed one by one by the collector. `apps` may be null with no functions. */
export const eventingStatusSchema = z.looseObject({
  apps: uncheckedArray().nullable().optional(),
  num_eventing_nodes: z.number().optional(),
});
export type EventingStatusAnswer = z.output<typeof eventingStatusSchema>;
