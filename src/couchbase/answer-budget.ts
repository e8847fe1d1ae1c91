/**
 * The thread's accounting of Couchbase answer bytes, shared by every client: the byte budget that bounds the
 * sum of the answers being buffered or parsed (`--couchbase.max-buffered-bytes`), and the listener told each
 * whole answer's size. Module state, so per thread; no I/O and no dependency, so it loads anywhere.
 */

/**
 * A byte budget shared by every answer being buffered or parsed, across all clients of the process. The
 * per-answer cap (max_response_bytes) bounds one answer; this bounds their sum, so sixteen answers just
 * under the cap cannot add up to gigabytes. An answer's bytes are reserved as they arrive and given back
 * once it is parsed (or dropped).
 */
export class ByteBudget {
  private used = 0;
  constructor(private cap: number) {}
  /** Reserve n bytes; false (and nothing reserved) when that would pass the cap. */
  tryReserve(n: number): boolean {
    if (this.used + n > this.cap) return false;
    this.used += n;
    return true;
  }
  release(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
  get reserved(): number {
    return this.used;
  }
  get limit(): number {
    return this.cap;
  }
  setLimit(bytes: number): void {
    this.cap = bytes;
  }
}

export const DEFAULT_ANSWER_BUDGET_BYTES = 256 * 1024 * 1024;
const processBudget = new ByteBudget(DEFAULT_ANSWER_BUDGET_BYTES);

/** The process-wide budget for buffered answers (`--couchbase.max-buffered-bytes`). */
export function answerBudget(): ByteBudget {
  return processBudget;
}
export function setAnswerBudget(bytes: number): void {
  processBudget.setLimit(bytes);
}

/** Told the size in bytes of each answer read whole (module state: per thread, like the budget). */
let answerListener: ((bytes: number) => void) | undefined;

/**
 * Sets (or, with undefined, removes) the listener told each whole answer's size as it is read. The collection
 * worker counts these bytes towards a collection of its heap (src/collection/release.ts): an answer's text and
 * its parsed form are garbage once mapped.
 */
export function setAnswerListener(fn: ((bytes: number) => void) | undefined): void {
  answerListener = fn;
}

/** Tells the listener (if any) the size of an answer read whole; called after the request is settled. */
export function reportAnswerBytes(bytes: number): void {
  // After settling: a listener that threw would otherwise leave the request unanswered.
  try {
    answerListener?.(bytes);
  } catch {
    // Its bookkeeping only; the answer stands.
  }
}
