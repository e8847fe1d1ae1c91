/**
 * Collector `autofailover`: GET /settings/autoFailover.
 *
 * What the reference says and the help texts repeat: auto-failover is always a hard failover, and after the
 * cause is fixed a rebalance is required; `count` counts sequential auto-failover events since an administrator
 * last reset it (POST /settings/autoFailover/resetCount) and only that reset brings it back to 0; once it
 * reaches `maxCount` no further automatic failover happens.
 *
 * Before 5.5 there is no `maxCount`: those versions fail over automatically once and then wait for the reset,
 * so a payload with `count` and without `maxCount` exports max_events 1 (the alert on an exhausted budget then
 * works on old clusters too).
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { AUTOFAILOVER_ROUTE, autoFailoverSchema } from '../couchbase/autofailover.js';
import type { AutoFailoverSettings } from '../couchbase/autofailover.js';
import type { Collector } from './types.js';

const C = 'autofailover';

export const F = {
  enabled: defineFamily(C, 'couchbase_autofailover_enabled', 'gauge', 'Whether automatic failover is enabled. Auto-failover is always a hard failover: a rebalance is required after it.'),
  count: defineFamily(
    C,
    'couchbase_autofailover_events',
    'gauge',
    'Sequential auto-failover events since the counter was last reset; only an administrator resets it (POST /settings/autoFailover/resetCount). Every failover needs a rebalance afterwards.',
    [],
    'count',
  ),
  maxCount: defineFamily(
    C,
    'couchbase_autofailover_max_events',
    'gauge',
    'Auto-failover events handled before an administrator must intervene; when count reaches it, no automatic failover is left (1 on versions before 5.5, which have no setting).',
    [],
    'count',
  ),
  timeout: defineFamily(C, 'couchbase_autofailover_timeout_seconds', 'gauge', 'Time a node must be unavailable before it is failed over automatically.', [], 'seconds'),
  serverGroup: defineFamily(
    C,
    'couchbase_autofailover_server_group_enabled',
    'gauge',
    'Whether a whole server group may be failed over automatically (safe only with three or more server groups).',
  ),
  diskIssues: defineFamily(C, 'couchbase_autofailover_data_disk_issues_enabled', 'gauge', 'Whether a node is failed over on sustained data-disk read/write failures.'),
  diskIssuesPeriod: defineFamily(
    C,
    'couchbase_autofailover_data_disk_issues_time_period_seconds',
    'gauge',
    'How long data-disk failures must last before the node is failed over.',
    [],
    'seconds',
  ),
  setting: defineFamily(C, 'couchbase_autofailover_setting_enabled', 'gauge', 'Any other boolean auto-failover setting (e.g. canAbortRebalance), by its Couchbase name.', ['setting']),
  settingPeriod: defineFamily(
    C,
    'couchbase_autofailover_setting_time_period_seconds',
    'gauge',
    'Time period of any other auto-failover setting object that has one, by its Couchbase name.',
    ['setting'],
    'seconds',
  ),
} as const satisfies Record<string, FamilyDef>;

const KNOWN = new Set(['enabled', 'timeout', 'count', 'maxCount', 'failoverServerGroup', 'failoverOnDataDiskIssues']);

/** Settings → samples. Pure. */
export function mapAutoFailover(s: AutoFailoverSettings, out: SampleSet): void {
  out.add(F.enabled, {}, s.enabled);
  out.add(F.count, {}, s.count);
  out.add(F.maxCount, {}, s.maxCount ?? (typeof s.count === 'number' ? 1 : undefined));
  out.add(F.timeout, {}, s.timeout);
  out.add(F.serverGroup, {}, s.failoverServerGroup);
  out.add(F.diskIssues, {}, s.failoverOnDataDiskIssues?.enabled);
  out.add(F.diskIssuesPeriod, {}, s.failoverOnDataDiskIssues?.timePeriod);
  for (const [key, value] of Object.entries(s)) {
    if (KNOWN.has(key)) continue;
    if (typeof value === 'boolean') {
      out.add(F.setting, { setting: key }, value);
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      // Newer versions group a toggle with its period, like failoverOnDataDiskIssues.
      const o = value as { enabled?: unknown; timePeriod?: unknown };
      if (typeof o.enabled === 'boolean') out.add(F.setting, { setting: key }, o.enabled);
      if (typeof o.timePeriod === 'number') out.add(F.settingPeriod, { setting: key }, o.timePeriod);
    }
  }
}

export const autofailoverCollector: Collector<'autofailover'> = {
  name: 'autofailover',
  defaultInterval: 60_000,
  families: Object.values(F),
  role: 'ro_admin',
  description: 'Auto-failover settings, the count of automatic failovers and what is left of the budget.',
  async collect(ctx) {
    mapAutoFailover(await ctx.client.getJson(AUTOFAILOVER_ROUTE, {}, autoFailoverSchema), ctx.out);
  },
};
