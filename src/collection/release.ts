/**
 * Letting go of replaced exposition parts sooner than V8 would on its own.
 *
 * A part's buffers live outside the JavaScript heap; their small wrapper objects are in the old generation by
 * the time a poll replaces them, so only a full collection frees the megabytes behind them. The HTTP thread
 * allocates almost nothing between scrapes, and V8 counts memory outside the heap towards a full collection
 * only once it has grown by 64 MB since the last one: replaced parts piled up to that much before they were
 * freed (at 1,000 buckets, three generations of the 26 MB bucket-statistics part; bench/RESULTS.md, "Where the
 * peak goes").
 *
 * Once replaced parts add up to RELEASE_AFTER_BYTES, the view asks V8 for a full collection in a task of its own
 * (`execution: 'async'`: V8 posts it to the thread's task queue rather than collecting inside `apply`). It is a
 * full stop-the-world collection of this thread's heap, about 16 MB, so a scrape arriving at that moment waits for
 * it; the bench's scrape latency figures include it. That needs `gc` exposed, which the launcher does
 * (`--expose-gc`, bin/cbwatch.js); without it V8 collects when it would.
 *
 * The collection thread does the same for the answers it reads. An answer's text and its parsed form are garbage
 * once mapped, yet V8 lets garbage build up in proportion to the heap it keeps (at 1,000 buckets, 50 MB live and
 * about 60 MB of answers per 30 s poll) before it collects: the thread's heap went to 150–190 MB. Counting the bytes
 * of the answers read and asking for a collection every COLLECT_AFTER_ANSWER_BYTES of them bounds that garbage.
 * Side by side at 1,000 buckets (bench/RESULTS.md, "Where the peak goes"): peak 239 MB at 4 MiB, 255–269 MB at
 * 8 MiB, 293–298 MB at 16 MiB, against 319–336 MB without; CPU 4.5, 3.8–4.0, 3.9–4.0 and 3.1–3.5 s/min. At the
 * realistic scenario (about 5 MB of answers per 30 s) the difference in CPU and peak was within run-to-run noise.
 * V8's own way to collect sooner (`--heap-growing-percent=20`) cost far more CPU for less: 6.9 s/min for 318 MB.
 */

/** V8's gc extension, as `--expose-gc` installs it. */
type GcFunction = (options?: { readonly type?: 'major' | 'minor'; readonly execution?: 'sync' | 'async' }) => unknown;

/** Bytes of replaced parts (plain and deflated) after which a collection is asked for (the HTTP thread). */
export const RELEASE_AFTER_BYTES = 4 * 1024 * 1024;

/** Bytes of answers read after which a collection is asked for (the collection thread). */
export const COLLECT_AFTER_ANSWER_BYTES = 8 * 1024 * 1024;

/** Ask V8 for a full collection soon, in a task of its own; false when `gc` is not exposed (nothing is done). */
export function collectSoon(): boolean {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== 'function') return false;
  try {
    const done = (gc as GcFunction)({ type: 'major', execution: 'async' });
    if (done instanceof Promise) done.catch(() => undefined);
  } catch {
    // An older V8 without the options object: leave the timing to V8.
    return false;
  }
  return true;
}

/** Counts bytes that became garbage and asks for a collection each time they reach the threshold. */
export class ReleaseCounter {
  private stale = 0;
  /** Collections asked for (read by tests). */
  requested = 0;

  constructor(
    private readonly threshold = RELEASE_AFTER_BYTES,
    private readonly collect: () => boolean = collectSoon,
  ) {}

  count(bytes: number): void {
    this.stale += bytes;
    if (this.stale < this.threshold) return;
    this.stale = 0;
    if (this.collect()) this.requested++;
  }
}
