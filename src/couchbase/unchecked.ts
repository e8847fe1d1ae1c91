/**
 * Schemas for containers whose entries are checked elsewhere (by a per-entry parse or by the mapper), passed
 * through as they are. zod's `z.array(z.unknown())` and `z.record(z.string(), z.unknown())` accept the same
 * values but copy the container and allocate two objects per entry to do it: over the stat envelopes of one
 * poll (a bucket's ~200 sample arrays, the `timestamp` of each of 600 XDCR stat answers) that was a sixth of
 * everything the collection worker allocated (bench/RESULTS.md, "Where the resident memory goes").
 */
import { z } from 'zod';

/** An array, entries unchecked, not copied. */
export function uncheckedArray() {
  return z.custom<unknown[]>((v) => Array.isArray(v), { error: 'expected an array' });
}

/** A JSON object (not null, not an array), values unchecked, not copied. */
export function uncheckedRecord() {
  return z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), { error: 'expected an object' });
}

/**
 * An array whose entries are checked one by one, stopping at the first that fails, which is reported with
 * its index and its own issues. zod's `z.array` checks every entry and keeps an issue for each: a large answer
 * of bad entries made one issue per entry, heap and CPU spent before anything could summarise them. Use it wherever one bad entry fails the whole answer anyway; a list whose entries are items of their
 * own is parsed with `parseEach` instead.
 */
export function checkedArray<S extends z.ZodType>(entry: S) {
  return uncheckedArray().transform((arr, ctx): Array<z.output<S>> => {
    const out: Array<z.output<S>> = [];
    for (let i = 0; i < arr.length; i++) {
      const r = entry.safeParse(arr[i]);
      if (!r.success) {
        for (const issue of r.error.issues.slice(0, 3)) ctx.addIssue({ code: 'custom', message: issue.message, path: [i, ...issue.path], input: arr[i] });
        return z.NEVER;
      }
      out.push(r.data);
    }
    return out;
  });
}

/** A JSON object whose values are checked one by one, stopping at the first that fails (see `checkedArray`). */
export function checkedRecord<S extends z.ZodType>(value: S) {
  return uncheckedRecord().transform((rec, ctx): Record<string, z.output<S>> => {
    const out: Array<[string, z.output<S>]> = [];
    for (const [k, v] of Object.entries(rec)) {
      const r = value.safeParse(v);
      if (!r.success) {
        for (const issue of r.error.issues.slice(0, 3)) ctx.addIssue({ code: 'custom', message: issue.message, path: [k, ...issue.path], input: v });
        return z.NEVER;
      }
      out.push([k, r.data]);
    }
    // fromEntries defines each key as an own property: a `__proto__` key from the answer stays data.
    return Object.fromEntries(out);
  });
}
