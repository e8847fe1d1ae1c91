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
