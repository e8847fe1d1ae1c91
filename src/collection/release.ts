/**
 * Letting go of replaced exposition parts sooner than V8 would on its own.
 *
 * A part's buffers live outside the JavaScript heap; their small wrapper objects are in the old generation by
 * the time a poll replaces them, so only a full collection frees the megabytes behind them. The HTTP thread
 * allocates almost nothing between scrapes, and V8 counts memory outside the heap towards a full collection
 * only once it has grown by 64 MB since the last one: replaced parts piled up to that much before they were
 * freed (at scale, several generations of the bucket-statistics part; bench/RESULTS.md).
 *
 * Once replaced parts add up to RELEASE_AFTER_BYTES, the view asks V8 for a full collection in a task of its own
 * (`execution: 'async'`: V8 posts it to the thread's task queue rather than collecting inside `apply`). It is a
 * full stop-the-world collection of this thread's heap, which is small, so a scrape arriving at that moment waits
 * for it; the bench's scrape latency figures include it. That needs `gc` exposed, which the launcher does
 * (`--expose-gc`, bin/cbwatch.js); without it V8 collects when it would.
 *
 * The collection thread does the same for the answers it reads (`--collection.gc-every SIZE`, 8 MiB unless set):
 * every SIZE bytes of them since its last collection, it asks for a full collection of its heap, in the middle of a
 * burst of polls if need be. An answer's text and its parsed form are garbage once mapped, and V8 lets garbage
 * build up in proportion to the heap it keeps before it collects: a text larger than the young generation is made
 * in the old one, which only a full collection frees. At scale the process otherwise rises by the answers of a
 * whole poll before V8 collects, and the collections during the burst lower its peak (bench/RESULTS.md has the
 * figures). A burst that reads less than SIZE asks for none during the burst; the end of a burst asks for its own
 * as before (BurstCollector). `0` leaves the timing to V8 within a burst.
 * Without `gc` exposed it does nothing, and a warning at start says so (src/collection/discipline.ts).
 */

/** V8's gc extension, as `--expose-gc` installs it. */
type GcFunction = (options?: { readonly type?: 'major' | 'minor'; readonly execution?: 'sync' | 'async'; readonly flavor?: 'regular' | 'last-resort' }) => unknown;

/** Bytes of replaced parts (plain and deflated) after which a collection is asked for (the HTTP thread). */
export const RELEASE_AFTER_BYTES = 4 * 1024 * 1024;

/** A collection asked for whose task has not run yet. */
let pending = false;

/**
 * Ask V8 for a full collection soon, in a task of its own; false when `gc` is not exposed or one asked for has not
 * run yet (nothing is done). `giveBack`: the collection also returns the heap's emptied pages to the system (V8's
 * `last-resort` flavour: its memory-reducing collection, which Node 24's V8 makes only then or when its memory
 * reducer runs, seconds later). Node 20's V8 ignores the flavour: it frees old-space pages after any full collection
 * but shrinks the young generation only in its memory reducer's collections (bench/RESULTS.md, eighth round).
 */
export function collectSoon(giveBack = false): boolean {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== 'function') return false;
  // One asked for and not yet run frees this garbage too: many large answers at once ask for one, not a queue.
  if (pending) return false;
  try {
    const done = (gc as GcFunction)(giveBack ? { type: 'major', execution: 'async', flavor: 'last-resort' } : { type: 'major', execution: 'async' });
    if (done instanceof Promise) {
      pending = true;
      done.then(
        () => (pending = false),
        () => (pending = false),
      );
    }
  } catch {
    // An older V8 without the options object: leave the timing to V8.
    return false;
  }
  return true;
}

/** Counts bytes that became garbage and asks for a collection each time they reach the threshold. */
export class ReleaseCounter {
  protected stale = 0;
  /** Collections asked for (read by tests). */
  requested = 0;

  constructor(
    private readonly threshold = RELEASE_AFTER_BYTES,
    private readonly collect: () => boolean = collectSoon,
  ) {}

  count(bytes: number): void {
    this.stale += bytes;
    this.release();
  }

  /** Asks for a collection once the bytes counted reach the threshold, then counts from zero. */
  protected release(): void {
    if (this.stale < this.threshold) return;
    this.now();
  }

  /** Asks for a collection whatever was counted, then counts from zero. */
  now(): void {
    this.stale = 0;
    if (this.collect()) this.requested++;
  }
}

/**
 * Once, when start-up is over: a collection that gives the heap's emptied pages back (`collectSoon(true)`). Start-up
 * (loading the modules, building the server, the first polls) leaves a heap V8 has grown and a young generation at
 * its largest; Node 24's V8 keeps both until its memory reducer runs, which at rest can take a long while. This
 * gives that memory back at once (bench/RESULTS.md measures it on Node 20 and 24).
 */
export class StartupRelease {
  private done = false;

  constructor(private readonly counter: ReleaseCounter) {}

  /** Start-up is over (called on every occasion that may be the first; only the first does anything). */
  over(): void {
    if (this.done) return;
    this.done = true;
    this.counter.now();
  }
}

/** Answer bytes read since the last collection after which a burst's end asks for one (the collection thread). */
export const IDLE_COLLECT_AFTER_BYTES = 4 * 1024 * 1024;

/** `--collection.gc-every` unless set: answer bytes read since the last collection after which one is asked for. */
export { DEFAULT_GC_EVERY_BYTES as GC_EVERY_DEFAULT_BYTES } from '../config/settings.js';

/**
 * The collection thread's garbage at the end of a burst of polls. Answers are read, mapped and rendered in bursts
 * (every collector due at a slot); what they leave is garbage once the burst's parts are posted, and V8 collects
 * it only when the next burst allocates, or when its memory reducer notices the thread is idle, seconds later:
 * meanwhile the garbage is resident (for much of each cycle). `idle()` is called once a burst is over (no poll
 * running, its update posted) and asks for a full collection when at least `threshold` bytes of answers were read
 * since the last one: about one collection per cycle, after the bucket statistics, which lowered the median
 * resident memory with CPU within run-to-run noise (bench/RESULTS.md).
 * The 15 s collectors' small bursts add up to the threshold rather than each asking for one. V8's memory reducer
 * still runs after it (turning it off as well gave a higher median: it also gives pages back).
 */
export class BurstCollector extends ReleaseCounter {
  /** Bytes read since the last collection of either kind (`stale` counts since the last end-of-burst one). */
  private sinceAny = 0;

  /**
   * `every`: answer bytes since the last collection of either kind after which one is asked for during a burst (0:
   * none during a burst); `midBurst` asks for it (a regular collection: the burst goes on and reuses the pages).
   */
  constructor(
    threshold = IDLE_COLLECT_AFTER_BYTES,
    collect: () => boolean = () => collectSoon(true),
    private readonly every = 0,
    private readonly midBurst: () => boolean = () => collectSoon(),
  ) {
    super(threshold, collect);
  }

  /**
   * Counts; during a burst asks for a collection each `every` bytes. A collection during the burst does not
   * excuse the one at its end: what the burst makes after its last answer (its parts' text, garbage once deflated)
   * is freed only then.
   */
  override count(bytes: number): void {
    this.stale += bytes;
    this.sinceAny += bytes;
    if (this.every <= 0 || this.sinceAny < this.every) return;
    this.sinceAny = 0;
    if (this.midBurst()) this.requested++;
  }

  override now(): void {
    this.sinceAny = 0;
    super.now();
  }

  private readonly startup = new StartupRelease(this);

  /** The burst is over: the first one (the start-up's polls) always gives its pages back. */
  idle(): void {
    this.startup.over();
    this.release();
  }
}
