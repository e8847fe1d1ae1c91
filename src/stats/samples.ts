/**
 * The envelope source's sampling rules (envelope-buckets.ts, envelope-xdcr.ts): a sample envelope (arrays of samples beside a
 * `timestamp` array, nulls where a node had no value) becomes one value per stat and poll. The rules
 * (docs/metrics.md, "Sampled statistics", says the same for operators):
 *
 * - Zoom: the finest zoom whose window covers one poll interval (reference table: minute = 60 × 1 s,
 *   hour = 900 × 4 s, day = 1440 × 1 min…), so no sample between two polls falls outside the answer.
 * - Rates are the mean of exactly the samples since the previous answer; levels are the latest sample.
 * - Window means (`mean`): a stat that is itself a rate or an average over ONE sample period (CPU utilisation,
 *   avg_* times, hit ratios) is the mean over the same new samples as a rate, weighted by the sample of its
 *   denominator stat where the answer carries it (the reference computes each sample as numerator /
 *   denominator, so the weighted mean is Σnumerator / Σdenominator over the window); no weight: the plain mean.
 *   A window whose weights are all 0 (no commit, no get, no fetch since the previous poll) has no mean: absent.
 * - How many samples are new is decided by the time that passed between the two answers on the exporter's
 *   clock, counted back from the newest sample of the answer on the answering node's own timeline. When the
 *   cluster URL is a load balancer over nodes whose clocks differ by seconds, consecutive answers come from
 *   different clocks: comparing their timestamps with each other would double count (clock ahead) or leave
 *   gaps (clock behind); counting back from each answer's own newest sample does neither.
 * - An answer whose newest sample is not newer than the previous answer's brings nothing new (the server's
 *   stats collector stalled, or the node's clock stepped back): rates are left out, levels keep the latest
 *   sample (still the newest truth Couchbase has), and the newest sample's time is exported so stalled stats
 *   can page. A newest sample older than the remembered one (clock stepped back) resets the memo at once.
 * - `haveTStamp` is only a transfer saving: it asks for samples a little older than the previous newest one
 *   (`HAVE_SLACK_MS`, covering clock differences between nodes), and an empty answer to it is asked again
 *   without it.
 */

export function finite(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

export type ZoomName = 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';

export interface Zoom {
  readonly name: ZoomName;
  /** Time between two samples, ms. */
  readonly stepMs: number;
  /** Samples in a full answer. */
  readonly count: number;
}

/** The sampling table of the REST reference (sample counts may vary by one). */
export const ZOOMS: readonly Zoom[] = Object.freeze([
  { name: 'minute', stepMs: 1_000, count: 60 },
  { name: 'hour', stepMs: 4_000, count: 900 },
  { name: 'day', stepMs: 60_000, count: 1_440 },
  { name: 'week', stepMs: 600_000, count: 1_152 },
  { name: 'month', stepMs: 1_800_000, count: 1_488 },
  { name: 'year', stepMs: 21_600_000, count: 1_464 },
]);

/** The finest zoom whose window covers one poll interval (the coarsest one past a year). */
export function zoomFor(intervalMs: number): Zoom {
  for (const z of ZOOMS) if (z.stepMs * z.count >= intervalMs) return z;
  return ZOOMS[ZOOMS.length - 1] as Zoom;
}

/**
 * How far before the previous newest sample `haveTStamp` asks from: clock differences up to this much between
 * the nodes behind a load balancer lose no sample (at least two steps of the zoom).
 */
export const HAVE_SLACK_MS = 5_000;

/** What is remembered per sampled item (a bucket's envelope, a replication's stat) between polls. */
export interface SampleMemo {
  /** The newest sample time of the last answer that brought one, on the answering node's clock (epoch ms). */
  readonly last: number;
  /** The exporter's clock when that answer arrived (epoch ms). */
  readonly at: number;
}

/** `haveTStamp` for the next request, or undefined for a full window. */
export function haveTStampFor(memo: SampleMemo | undefined, zoom: Zoom): number | undefined {
  if (memo === undefined) return undefined;
  return Math.max(0, memo.last - Math.max(HAVE_SLACK_MS, 2 * zoom.stepMs));
}

export interface SampleWindow {
  /** Index into the timestamp array of the first sample a rate counts (the array's length when none). */
  readonly from: number;
  /** Whether the answer brought a sample newer than the previous answer's newest. */
  readonly fresh: boolean;
  /** The answer's newest sample time (epoch ms), when it has one. */
  readonly last: number | undefined;
  /** What to remember for the next poll (undefined: nothing known, ask for a full window). */
  readonly memo: SampleMemo | undefined;
}

/** The newest sample time of an answer: `lastTStamp`, else the last timestamp. */
export function newestSample(ts: readonly unknown[] | undefined, lastTStamp: unknown): number | undefined {
  if (finite(lastTStamp) && lastTStamp > 0) return lastTStamp;
  const lt = ts === undefined ? undefined : latest(ts);
  return lt !== undefined && lt > 0 ? lt : undefined;
}

/**
 * Which samples of an answer are new. `now` is the exporter's clock when the answer arrived, `intervalMs` the
 * poll interval (the window of the first poll), `stepMs` the zoom's sample spacing.
 */
export function sampleWindow(
  ts: readonly unknown[] | undefined,
  lastTStamp: unknown,
  memo: SampleMemo | undefined,
  now: number,
  intervalMs: number,
  stepMs: number,
): SampleWindow {
  const n = ts?.length ?? 0;
  const last = newestSample(ts, lastTStamp);
  if (last === undefined) return { from: n, fresh: false, last, memo };
  if (memo !== undefined && last <= memo.last) {
    // Nothing newer. Equal: stalled, keep the memo (and its time) so the next fresh answer's window spans the stall.
    // Older: the node's clock stepped back; start again from this answer rather than wait for it to catch up.
    return { from: n, fresh: false, last, memo: last < memo.last ? { last, at: now } : memo };
  }
  const next: SampleMemo = { last, at: now };
  if (ts === undefined) return { from: 0, fresh: true, last, memo: next };
  const elapsed = memo === undefined ? intervalMs : now - memo.at;
  // Samples within `elapsed` of the newest one, on the answer's own timeline (half a step of rounding).
  const cutoff = last - elapsed + stepMs / 2;
  let from = firstAfter(ts, cutoff);
  // Two answers within one step: the new samples are those after the previous newest one.
  if (from >= n && memo !== undefined) from = firstAfter(ts, memo.last);
  return { from, fresh: true, last, memo: next };
}

function firstAfter(ts: readonly unknown[], t: number): number {
  for (let i = 0; i < ts.length; i++) {
    const v = ts[i];
    if (finite(v) && v > t) return i;
  }
  return ts.length;
}

/** `from` for an array aligned on the newest sample but shorter (or longer) than the timestamp array. */
export function alignedFrom(from: number, tsLength: number, arrLength: number): number {
  return Math.max(0, from - (tsLength - arrLength));
}

/** The newest finite sample (levels: the latest value is the latest, new or not). */
export function latest(arr: readonly unknown[]): number | undefined {
  for (let i = arr.length - 1; i >= 0; i--) {
    const v = arr[i];
    if (finite(v)) return v;
  }
  return undefined;
}

/** The mean of the finite samples from index `from` on (rates: only the samples new since the last poll). */
export function mean(arr: readonly unknown[], from: number): number | undefined {
  let sum = 0;
  let n = 0;
  for (let i = Math.max(0, from); i < arr.length; i++) {
    const v = arr[i];
    if (finite(v)) {
      sum += v;
      n++;
    }
  }
  return n === 0 ? undefined : sum / n;
}

/**
 * The mean of the samples from index `from` on, each weighted by the sample of `weights` at the same time
 * (both arrays end at the newest sample; a weight array shorter or longer is aligned on its end). Samples whose
 * value or weight is not finite, or whose weight is not positive, do not count. Undefined when the window's
 * weights add up to 0: there is no event to average over. When the window has no finite weight at all (the
 * denominator stat is null there: a node or a version without it), the plain mean.
 */
export function weightedMean(arr: readonly unknown[], from: number, weights: readonly unknown[]): number | undefined {
  let sum = 0;
  let total = 0;
  let weighed = false;
  const shift = weights.length - arr.length;
  for (let i = Math.max(0, from); i < arr.length; i++) {
    const v = arr[i];
    const w = weights[i + shift];
    if (!finite(w)) continue;
    weighed = true;
    if (finite(v) && w > 0) {
      sum += v * w;
      total += w;
    }
  }
  if (!weighed) return mean(arr, from);
  return total === 0 ? undefined : sum / total;
}

/**
 * A value in Couchbase's unit to cbwatch's base unit. Scales below 1 (0.01 percent, 0.001 ms, 1e-6 µs) divide
 * by their inverse, so a value exact in decimal stays exact: 94 / 100 is 0.94, where 94 * 0.01 is
 * 0.9400000000000001.
 */
export function toBaseUnit(v: number, scale: number): number {
  return scale < 1 ? v / Math.round(1 / scale) : v * scale;
}

/**
 * How a stat's samples become one value: `rate` the mean of the new samples (nothing when none is new),
 * `mean` the mean of the new samples of a stat that is itself an average over one sample period, weighted by
 * its denominator's samples when given (nothing when none is new), `level` the latest sample, `cumulative` the
 * latest sample of a count that only grows (exported as a counter).
 */
export type SampleKind = 'level' | 'rate' | 'mean' | 'cumulative';

/**
 * One value from one stat's samples per its kind; `from` is the first new index in this array. `weights` (a
 * `mean` stat's denominator samples, from the same answer) weight the mean when present.
 */
export function reduceSamples(
  spec: { readonly kind: SampleKind; readonly scale: number },
  arr: readonly unknown[],
  from: number,
  fresh: boolean,
  weights?: readonly unknown[],
): number | undefined {
  if ((spec.kind === 'rate' || spec.kind === 'mean') && !fresh) return undefined;
  const v =
    spec.kind === 'rate' ? mean(arr, from) : spec.kind === 'mean' ? (weights === undefined ? mean(arr, from) : weightedMean(arr, from, weights)) : latest(arr);
  return v === undefined ? undefined : toBaseUnit(v, spec.scale);
}
