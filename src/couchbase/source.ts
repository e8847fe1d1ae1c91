/**
 * What the API modules of src/couchbase/ need to fetch: a client and the per-cluster shared cache. They take
 * this, never a collector's context, so the REST layer does not depend on the collectors' API (a poll's
 * context satisfies it structurally).
 */
import type { z } from 'zod';
import { boundedText, summariseIssues } from '../errors.js';
import type { CouchbaseClient } from './client.js';

export interface SharedCache {
  /**
   * Single-flight memo per key: concurrent callers share one promise; a result is reused for `maxAgeMs`.
   * Failures are not cached.
   */
  get<T>(key: string, maxAgeMs: number, load: () => Promise<T>): Promise<T>;
}

export interface ClusterSource {
  readonly client: CouchbaseClient;
  readonly shared: SharedCache;
}

/** An entry of a list answer that did not parse: its position, a name when it has one, and a summary of its issues. */
export interface InvalidEntry {
  readonly index: number;
  /** The entry's name, redacted and bounded (it comes from the answer). */
  readonly name: string | undefined;
  /** `summariseIssues` of the entry's issues: redacted and bounded. */
  readonly message: string;
}

/**
 * For an entry that must be a JSON object: the summary of why it is not one, or undefined when it is. Said
 * without zod, whose failed parse is costly enough to matter over an answer of a million bad entries; the words
 * are zod's own.
 */
export function notAnObject(el: unknown): string | undefined {
  if (typeof el === 'object' && el !== null && !Array.isArray(el)) return undefined;
  return `(root): Invalid input: expected object, received ${el === null ? 'null' : Array.isArray(el) ? 'array' : typeof el}`;
}

/** Invalid entries of one answer described one by one; the rest are only counted (`invalidCount`). */
export const MAX_INVALID_SHOWN = 20;

/**
 * Parses a list answer entry by entry, so one odd entry costs only itself (the caller counts it as an item
 * error). `nameKey` names the field that identifies an entry in messages (e.g. a bucket's `name`). The first
 * MAX_INVALID_SHOWN invalid entries are described; every one is counted in `invalidCount`, so an answer of a
 * million bad entries costs a million small parses, not a million error messages. Every entry must be a JSON
 * object (`schema` is an object schema, possibly transformed): one that is not is refused without zod.
 */
export function parseEach<S extends z.ZodType>(
  raw: readonly unknown[],
  schema: S,
  nameKey: string,
): { ok: Array<z.output<S>>; invalid: InvalidEntry[]; invalidCount: number } {
  const ok: Array<z.output<S>> = [];
  const invalid: InvalidEntry[] = [];
  let invalidCount = 0;
  for (const [index, el] of raw.entries()) {
    const wrong = notAnObject(el);
    const r = wrong === undefined ? schema.safeParse(el) : undefined;
    if (r?.success === true) ok.push(r.data);
    else {
      invalidCount++;
      if (invalid.length >= MAX_INVALID_SHOWN) continue;
      const name = wrong === undefined ? (el as Record<string, unknown>)[nameKey] : undefined;
      invalid.push({ index, name: typeof name === 'string' ? boundedText(name, 100) : undefined, message: r === undefined ? (wrong as string) : summariseIssues(r.error.issues) });
    }
  }
  return { ok, invalid, invalidCount };
}
