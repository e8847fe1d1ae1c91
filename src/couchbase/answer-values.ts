/**
 * The cap on the JSON values one Couchbase answer may hold (`--couchbase.max-answer-values`) and the count
 * of its bytes that bounds them, read as the answer arrives. Module state, so per thread; no dependency.
 */

/**
 * Default cap on the values one answer may hold (`--couchbase.max-answer-values`): about ten times the largest
 * real answers (the bucket list of a 1,000-bucket cluster, a bucket's `zoom=year` stats), while the worst shape at
 * the cap (`[],[],…`, empty arrays) still parses in a bounded heap (bench/RESULTS.md has the figures).
 */
export const DEFAULT_MAX_ANSWER_VALUES = 4_000_000;
let processValueLimit = DEFAULT_MAX_ANSWER_VALUES;

/** The process-wide cap on the values of one answer (`--couchbase.max-answer-values`). */
export function answerValueLimit(): number {
  return processValueLimit;
}
export function setAnswerValueLimit(values: number): void {
  processValueLimit = values;
}

/**
 * How many values an answer's bytes can create, counted as its `[`, `{` and `,` bytes: each container opens
 * with one and each further element follows one. Bytes are not objects: `[],[],…` under the byte cap still
 * makes JSON.parse build an array per three bytes, gigabytes of heap. Counting the bytes as they arrive lets the
 * read stop long before that. Commas inside strings count too: an upper bound, cheap (one
 * pass over bytes already in memory, no decoding), and real answers stay far below the cap either way.
 */
export function countValueMarks(buf: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i] as number;
    if (b === 0x2c || b === 0x5b || b === 0x7b) n++;
  }
  return n;
}

/**
 * How deep an answer may nest (arrays and objects) before it is refused unparsed. Couchbase's REST answers nest
 * fewer than 15 levels; the value cap does not bound what nesting costs: nested arrays up to the cap make
 * JSON.parse take hundreds of megabytes of heap.
 */
export const MAX_ANSWER_DEPTH = 64;

/**
 * Answers shorter than this are parsed without a depth scan: nesting as deep as their length allows costs a
 * bounded heap, and the scan would cost every small answer time.
 */
export const DEPTH_SCAN_FROM_CHARS = 1 << 20;

/**
 * Whether a JSON text nests deeper than `limit` (arrays and objects; strings skipped whole, with their escapes),
 * stopping as soon as it does. Only checks depth: whether the text is JSON is the parser's to say. Pure.
 */
export function nestsDeeperThan(text: string, limit = MAX_ANSWER_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: one preceded by an even run of backslashes.
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return false;
        let k = i - 1;
        while (text.charCodeAt(k) === 0x5c) k--;
        if ((i - 1 - k) % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
