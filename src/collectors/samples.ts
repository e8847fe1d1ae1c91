/**
 * Reducing a stats sample array to one value, shared by the bucket and XDCR stat collectors: both read
 * Couchbase's sample envelopes (`samples` arrays beside a `timestamp` array, nulls where a node had no value).
 */

export function finite(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/**
 * Index into the `timestamp` array of the first sample newer than `since`, or 0 when every sample counts
 * (first poll, no usable timestamps, or nothing new: the server's window restarted or we polled faster than
 * it samples — better the whole minute than a gap).
 */
export function firstNewIndex(ts: readonly unknown[] | undefined, since: number | undefined): number {
  if (since === undefined || ts === undefined) return 0;
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i];
    if (finite(t) && t > since) return i;
  }
  return 0;
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
