/**
 * The cap on the JSON values one Couchbase answer may hold (`--couchbase.max-answer-values`) and the count
 * of its bytes that bounds them, read as the answer arrives. Module state, so per thread; no dependency.
 */

/**
 * Default cap on the values one answer may hold (`--couchbase.max-answer-values`). The largest real answer
 * is the bucket list: with 1,000 buckets on 4 nodes the simulator's is 8.3 MB and about 330,000 values (a
 * bucket's `zoom=year` stats, the next largest, about 400,000 at 1.3 MB), so this leaves a margin of ten.
 * At the cap, the worst shape (`[],[],…`: 2 million empty arrays) costs about 100 MB of heap to parse.
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
 * with one and each further element follows one. Bytes are not objects: 60 MB of `[],[],…` is under the
 * byte cap, yet JSON.parse makes 20 million arrays of it (about 1 GB of heap). Counting the bytes as they
 * arrive lets the read stop long before that. Commas inside strings count too: an upper bound, cheap (one
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
