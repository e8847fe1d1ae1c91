/**
 * The eventing statistics of the `eventing` collector: their families, the legacy names they read, and the pure
 * mapping from the statistics sources' neutral values to the families. Kept apart from the status mapping
 * (eventing.ts), whose source is the eventing service's status API.
 *
 * What a series is: one function, summed over the eventing nodes, as ns_server gives `eventing/<function>/<stat>`
 * (ns_server@7.6.2:src/stat_names_mappings.erl: `sum by (name, functionName)` over the nodes, with no rate).
 * Couchbase keeps the successes and failures as running totals (ns_server@6.6.5:src/service_eventing.erl
 * `get_service_gauges`: dcp_backlog and the success and failure counts are all gauges of the section `@eventing`;
 * from 7.0 the native `eventing_<stat>{functionName}` are counters): they are exported as counters, `_total`, with
 * the value Couchbase keeps (a count that starts again from 0 is a counter reset to Prometheus).
 * The DCP backlog is a level.
 *
 * From 7.0 the eventing service serves statistics for deployed functions only (eventing@7.6.3
 * service_manager/http_handlers.go, whose per-function statistics list the deployed functions): a paused or
 * undeployed function has no statistics series, not zeros. Its status is still exported (eventing.ts).
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { byCodeUnit } from '../text-order.js';
import type { StatValues } from '../stats/values.js';
import { sectionItemKey } from './index-stats.js';

const C = 'eventing';
const PAUSED = 'A paused or undeployed function has no statistics from 7.0 (the eventing service serves them for deployed functions only).';

const total = (name: string, what: string): FamilyDef =>
  defineFamily(C, name, 'counter', `${what}, summed over the eventing nodes: the running total Couchbase keeps. ${PAUSED}`, ['function'], 'count');

export const EVENTING_STAT_FAMILIES = {
  dcpBacklog: defineFamily(C, 'couchbase_eventing_dcp_backlog', 'gauge', `Mutations the function has not yet processed (dcp_backlog), summed over the eventing nodes. ${PAUSED}`, ['function'], 'count'),
  onUpdateSuccess: total('couchbase_eventing_on_update_success_total', 'OnUpdate handler calls that succeeded (on_update_success)'),
  onUpdateFailures: total('couchbase_eventing_on_update_failures_total', 'OnUpdate handler calls that failed (on_update_failure)'),
  onDeleteSuccess: total('couchbase_eventing_on_delete_success_total', 'OnDelete handler calls that succeeded (on_delete_success)'),
  onDeleteFailures: total('couchbase_eventing_on_delete_failures_total', 'OnDelete handler calls that failed (on_delete_failure)'),
  timeouts: total('couchbase_eventing_timeouts_total', 'Handler calls that ran past the function\'s execution timeout (timeout_count)'),
} as const satisfies Record<string, FamilyDef>;

const F = EVENTING_STAT_FAMILIES;

/** The legacy stat names read per function (the key's last part before 7.0, `eventing_<stat>` from 7.0). All are levels. */
export const EVENTING_STATS = ['dcp_backlog', 'on_update_success', 'on_update_failure', 'on_delete_success', 'on_delete_failure', 'timeout_count'] as const;
const STAT_SET: ReadonlySet<string> = new Set(EVENTING_STATS);

/** `eventing/<function>/<stat>` of `@eventing` → the function and stat; undefined for any other key or stat. Pure. */
export function functionKeyOf(key: string): { item: string; stat: string } | undefined {
  const k = sectionItemKey('eventing', key);
  return k === undefined || !STAT_SET.has(k.stat) ? undefined : k;
}

/**
 * The `@eventing` section's values (keys `eventing/<function>/<stat>`) per function. The section's totals over the
 * functions (`eventing/<stat>`) and stats not read are left out. Pure.
 */
export function functionsFromSection(values: StatValues): Map<string, StatValues> {
  const byFunction = new Map<string, StatValues>();
  for (const [key, v] of values) {
    const k = functionKeyOf(key);
    if (k === undefined) continue;
    let s = byFunction.get(k.item);
    if (s === undefined) {
      s = new Map();
      byFunction.set(k.item, s);
    }
    s.set(k.stat, v);
  }
  return byFunction;
}

/** Function → its values → the statistics families, by function name. Pure. */
export function mapEventingStats(functions: ReadonlyMap<string, StatValues>, out: SampleSet): void {
  for (const name of [...functions.keys()].sort(byCodeUnit)) {
    const v = functions.get(name) as StatValues;
    const labels = { function: name };
    out.add(F.dcpBacklog, labels, v.get('dcp_backlog'));
    out.add(F.onUpdateSuccess, labels, v.get('on_update_success'));
    out.add(F.onUpdateFailures, labels, v.get('on_update_failure'));
    out.add(F.onDeleteSuccess, labels, v.get('on_delete_success'));
    out.add(F.onDeleteFailures, labels, v.get('on_delete_failure'));
    out.add(F.timeouts, labels, v.get('timeout_count'));
  }
}
