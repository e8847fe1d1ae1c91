/**
 * Small helpers shared by several collectors: collector policy (what a 403 on an optional call means),
 * one-hot enumerations, and the parsing of numbers and dates as Couchbase writes them. Each exists once here
 * so that two collectors cannot drift apart on, say, which dates they accept.
 */
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import type { CollectContext } from './types.js';

/** Whether `err` carries the stable error `code` (see src/errors.ts). */
export function isCode(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

/**
 * A 403 on an optional call: count it as skipped, and log once per (cluster, collector, endpoint) at warn
 * which permission is missing (Couchbase's `permissions` array); later polls log at debug only.
 * A missing permission is configuration, not an item failure: it is not counted in the item errors.
 */
export function reportForbidden(ctx: Pick<CollectContext, 'state' | 'log' | 'skipped'>, endpoint: string, err: unknown): void {
  const permissions = (err as { permissions?: readonly string[] }).permissions ?? [];
  const key = `forbidden:${endpoint}`;
  ctx.skipped('forbidden', endpoint);
  if (ctx.state.has(key)) {
    ctx.log.debug({ endpoint, permissions }, 'still forbidden; skipping');
    return;
  }
  ctx.state.set(key, true);
  ctx.log.warn(
    { endpoint, permissions },
    `forbidden: the monitoring user lacks ${permissions.length > 0 ? permissions.join(' or ') : 'a security role'}; skipping this endpoint`,
  );
}

/**
 * Errors that end the whole poll whatever item they came from: the poll's deadline or shutdown (every other
 * item would fail the same way) and bad credentials (the same for every request of the cluster).
 */
export function isPollFatal(err: unknown): boolean {
  return isCode(err, 'CBW_ERR_ABORTED') || isCode(err, 'CBW_ERR_AUTH');
}

/** One-hot over `known`, plus the observed value under its own name when it is not one of them. */
export function oneHot(out: SampleSet, def: FamilyDef, base: Record<string, string>, label: string, known: readonly string[], value: string | undefined): void {
  if (value === undefined) return;
  for (const k of known) out.add(def, { ...base, [label]: k }, k === value ? 1 : 0);
  if (!known.includes(value)) out.add(def, { ...base, [label]: value }, 1);
}

/**
 * A finite number from a JSON number or a numeric string (the cluster manager writes some counters and the
 * uptime as strings); undefined for anything else. Not a type guard: it converts.
 */
export function numberFromNumeric(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * Epoch seconds of an ISO 8601 timestamp (certificate dates, Backup service times), or undefined when it is
 * not one: Date.parse alone is too lenient, and rolls 2031-02-30 over into March. Go's zero time
 * (`0001-01-01T00:00:00Z`, the Backup service's "not yet") is undefined too.
 */
export function isoToSeconds(s: string | null | undefined): number | undefined {
  if (s === undefined || s === null || !ISO_RE.test(s)) return undefined;
  const [y, m, d] = s.slice(0, 10).split('-').map(Number) as [number, number, number];
  if (y <= 1) return undefined;
  if (new Date(Date.UTC(y, m - 1, d)).getUTCDate() !== d) return undefined;
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

/** Where a mapper reports each item it read: fine, or failed (and then it emitted none of that item's series). */
export interface ItemSink {
  ok(item: string): void;
  failed(item: string, err: unknown, count?: number): void;
}

/**
 * The partial-failure rule for one poll's items (nodes, buckets, indexes, repository lists, sub-endpoints):
 * a failed item is counted with `ctx.itemFailed` and emits no series while its neighbours carry on. Errors
 * that would fail every item (`isPollFatal`) end the poll at once, and so does the failure of every item
 * (`settle` rethrows the last error): a poll with nothing true to say is a failed poll, not an empty success.
 */
export class ItemTally implements ItemSink {
  private total = 0;
  private failures = 0;
  private last: unknown;
  constructor(private readonly ctx: Pick<CollectContext, 'itemFailed'>) {}

  ok(_item?: string): void {
    this.total++;
  }

  /** `count` items failed alike (one description for the rest of a list's invalid entries). */
  failed(item: string, err: unknown, count = 1): void {
    if (isPollFatal(err)) throw err;
    this.total += count;
    this.failures += count;
    this.last = err;
    this.ctx.itemFailed(item, err, count);
  }

  /** Run one item; its error (unless poll-fatal) makes it a failed item. */
  async run(item: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.failed(item, err);
      return;
    }
    this.ok(item);
  }

  /** Throws the last item error when there were items and every one of them failed. */
  settle(): void {
    if (this.total > 0 && this.failures === this.total) throw this.last;
  }
}

/**
 * `collectItems` runs `run` for each item under the rule of `ItemTally`. `run` handles what is not a
 * failure itself (a 403 reported with `reportForbidden`, a 404 for an item that has just gone) by returning
 * normally; anything it throws makes that item a failed one.
 */
export async function collectItems<T>(
  ctx: Pick<CollectContext, 'itemFailed'>,
  items: readonly T[],
  name: (item: T) => string,
  run: (item: T) => Promise<void>,
  opts: { readonly sequential?: boolean } = {},
): Promise<void> {
  const tally = new ItemTally(ctx);
  if (opts.sequential) for (const item of items) await tally.run(name(item), () => run(item));
  else await Promise.all(items.map((item) => tally.run(name(item), () => run(item))));
  tally.settle();
}
