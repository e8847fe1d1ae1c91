/**
 * Which statistics source a cluster's `bucket_stats` and `xdcr` polls use (`stats_source`, per cluster), and the
 * one call that asks it (statsValues): both sources answer neutral values (values.ts).
 * - `envelope`: the sample envelopes, always.
 * - `range`: the range API (range.ts), always; a cluster whose compatibility version is below 7.0, or that answers
 *   404/405 to it, fails the poll with that reason.
 * - `auto` (default): the range API when the cluster's compatibility version is 7.0 or later (the lowest
 *   `clusterCompatibility` of the nodes of `GET /pools/default`: a cluster mid-upgrade counts as its oldest node),
 *   the envelopes before. When a 7.0+ cluster answers 404 or 405 to the range API (a proxy in front of it may),
 *   the envelopes are used for RETRY_RANGE_MS, the reason is logged once and shown, and the range API is tried again.
 *   A 403 is a missing permission, not a missing API: the poll fails naming it (range.ts RangeForbiddenError), under
 *   either setting.
 * The compatibility version is read at most once per COMPAT_MAX_AGE_MS per cluster (shared by both collectors).
 */
import { fetchBucketList } from '../couchbase/buckets.js';
import type { SharedCache } from '../couchbase/source.js';
import { CbwError } from '../errors.js';
import type { StatsContext, StatsOptions } from './context.js';
import { gapsNote, rangeStateOf } from './range.js';
import type { SourceValues } from './values.js';

export type StatsSourceKind = 'range' | 'envelope';
export const STATS_SOURCE_KINDS: readonly StatsSourceKind[] = ['range', 'envelope'];

/** `clusterCompatibility` of 7.0: major × 65536 + minor. */
export const COMPAT_7_0 = 7 * 0x10000;
export const COMPAT_MAX_AGE_MS = 300_000;
export const RETRY_RANGE_MS = 600_000;

export interface SourceChoice {
  readonly kind: StatsSourceKind;
  /** Why, in a few words (for logs, `cbwatch check` and the landing page). */
  readonly reason: string;
}

/** `7.6` from 458758. */
export function formatCompat(c: number): string {
  return `${Math.floor(c / 0x10000)}.${c % 0x10000}`;
}

/** The lowest clusterCompatibility of the nodes (undefined when no node says). Pure. */
export function clusterCompat(nodes: readonly unknown[]): number | undefined {
  let low: number | undefined;
  for (const n of nodes) {
    const c = n !== null && typeof n === 'object' ? (n as { clusterCompatibility?: unknown }).clusterCompatibility : undefined;
    if (typeof c === 'number' && Number.isFinite(c) && c > 0 && (low === undefined || c < low)) low = c;
  }
  return low;
}

/** Per cluster (its shared cache lives as long as the cluster): when the range API was found missing, and why. */
const unavailable = new WeakMap<SharedCache, { until: number; reason: string }>();

export async function chooseStatsSource(ctx: StatsContext): Promise<SourceChoice> {
  const setting = ctx.cluster.statsSource ?? 'auto';
  if (setting === 'envelope') return { kind: 'envelope', reason: 'stats_source: envelope' };
  let compat: number;
  try {
    // The bucket list's nodes carry clusterCompatibility: bucket_stats has just read it (shared for 5 s), so the
    // version costs no request of its own.
    compat = await ctx.shared.get('statsCompat', COMPAT_MAX_AGE_MS, async () => {
      const list = await fetchBucketList(ctx);
      return clusterCompat(list.buckets.flatMap((b) => (b.nodes ?? []) as unknown[])) ?? 0;
    });
  } catch (err) {
    // Not cached: asked again next poll. `auto` keeps the envelopes meanwhile (they answer on every version).
    if (setting === 'range' || ctx.signal.aborted) throw err;
    return { kind: 'envelope', reason: 'auto: the compatibility version could not be read (GET /pools/default/buckets failed)' };
  }
  if (compat < COMPAT_7_0) {
    const why = compat === 0 ? 'no bucket node reports a compatibility version' : `cluster compatibility ${formatCompat(compat)} is before 7.0`;
    if (setting === 'range') throw new StatsSourceError(`stats_source: range, but ${why} (the range API needs 7.0)`);
    return { kind: 'envelope', reason: `auto: ${why}` };
  }
  if (setting === 'range') return { kind: 'range', reason: `stats_source: range (cluster ${formatCompat(compat)})` };
  const u = unavailable.get(ctx.shared);
  if (u !== undefined && ctx.now() < u.until) return { kind: 'envelope', reason: `auto: ${u.reason}; the range API is tried again at ${new Date(u.until).toISOString()}` };
  if (u !== undefined) unavailable.delete(ctx.shared);
  return { kind: 'range', reason: `auto: cluster ${formatCompat(compat)}` };
}

/**
 * The range API answered 404/405. `auto`: remember it for RETRY_RANGE_MS (logged once per cluster and period)
 * and say to use the envelopes; `range`: the failure is the poll's.
 */
export function rangeUnavailable(ctx: StatsContext, err: Error & { status: number }): SourceChoice {
  if ((ctx.cluster.statsSource ?? 'auto') === 'range') throw err;
  const reason = `the range API answered ${err.status}`;
  if (!unavailable.has(ctx.shared)) ctx.log.warn({ status: err.status, retryInSeconds: RETRY_RANGE_MS / 1000 }, 'statistics: the range API is not available on this 7.0+ cluster; using the sample envelopes');
  const until = ctx.now() + RETRY_RANGE_MS;
  unavailable.set(ctx.shared, { until, reason });
  return { kind: 'envelope', reason: `auto: ${reason}; the range API is tried again at ${new Date(until).toISOString()}` };
}

/** `stats_source: range` on a cluster that cannot answer it: the poll's failure, with the reason. */
export class StatsSourceError extends CbwError {
  constructor(message: string) {
    super('CBW_ERR_CONFIG', message);
  }
}

/** The two sources of a collector's statistics: each answers its items' neutral values. */
export interface StatsSources<O extends StatsOptions, I> {
  readonly range: (ctx: StatsContext<O>, input: I) => Promise<SourceValues>;
  readonly envelope: (ctx: StatsContext<O>, input: I) => Promise<SourceValues>;
}

/**
 * The collectors' one call: choose the source (`envelopeOnly`: the envelopes, for that reason) and ask it for
 * `input`'s items. A 404/405 from the range API falls back to the envelopes under `auto`. The choice is noted on the
 * poll (`cbwatch check`, the landing page) with the nodes a partial range answer lacked and, when it changes,
 * logged with its reason.
 */
export async function statsValues<O extends StatsOptions, I>(ctx: StatsContext<O>, input: I, sources: StatsSources<O, I>, envelopeOnly?: string): Promise<SourceValues> {
  let choice: SourceChoice = envelopeOnly === undefined ? await chooseStatsSource(ctx) : { kind: 'envelope', reason: envelopeOnly };
  let got: SourceValues | undefined;
  if (choice.kind === 'range') {
    try {
      got = await sources.range(ctx, input);
    } catch (err) {
      if (!(err instanceof Error && err.name === 'RangeUnavailableError')) throw err;
      choice = rangeUnavailable(ctx, err as Error & { status: number });
    }
  }
  // Shown by `cbwatch check` and on the landing page, with the nodes a partial answer lacked.
  const gaps = got !== undefined ? gapsNote(rangeStateOf(ctx.state).gaps) : '';
  ctx.note?.(`statistics: ${choice.kind} (${choice.reason})${gaps === '' ? '' : `; ${gaps}`}`);
  if (lastKind.get(ctx.state) !== choice.kind) ctx.log.info({ source: choice.kind, reason: choice.reason }, 'statistics source');
  lastKind.set(ctx.state, choice.kind);
  return got ?? (await sources.envelope(ctx, input));
}

/** The source of each (cluster, collector)'s previous poll, keyed by its state map: a change is logged. */
const lastKind = new WeakMap<Map<string, unknown>, StatsSourceKind>();
