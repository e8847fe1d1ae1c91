/**
 * GET /settings/autoFailover. 4.x–5.1 answer `enabled`, `timeout`, `count`; 5.5 adds `maxCount`,
 * `failoverOnDataDiskIssues` and `failoverServerGroup`; 7.1 adds `canAbortRebalance` (and later versions more
 * booleans). Everything else the server adds is kept (loose) and exported generically by the collector.
 */
import { z } from 'zod';

const num = z.number().nullable().optional();

export const periodSettingSchema = z.looseObject({
  enabled: z.boolean().optional(),
  /** Seconds. */
  timePeriod: num,
});

export const autoFailoverSchema = z.looseObject({
  enabled: z.boolean().optional(),
  /** Seconds. */
  timeout: num,
  /** Sequential auto-failover events since an administrator last reset the counter. */
  count: num,
  maxCount: num,
  failoverServerGroup: z.boolean().optional(),
  failoverOnDataDiskIssues: periodSettingSchema.optional(),
});
export type AutoFailoverSettings = z.output<typeof autoFailoverSchema>;

export const AUTOFAILOVER_ROUTE = '/settings/autoFailover';
