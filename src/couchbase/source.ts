/**
 * What the API modules of src/couchbase/ need to fetch: a client and the per-cluster shared cache. They take
 * this, never a collector's context, so the REST layer does not depend on the collectors' API (a poll's
 * context satisfies it structurally).
 */
import type { z } from 'zod';
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

/** An entry of a list answer that did not parse: its position, a name when it has one, and the first issue. */
export interface InvalidEntry {
  readonly index: number;
  readonly name: string | undefined;
  readonly message: string;
}

/**
 * Parses a list answer entry by entry, so one odd entry costs only itself (the caller counts it as an item
 * error). `nameKey` names the field that identifies an entry in messages (e.g. a bucket's `name`).
 */
export function parseEach<S extends z.ZodType>(raw: readonly unknown[], schema: S, nameKey: string): { ok: Array<z.output<S>>; invalid: InvalidEntry[] } {
  const ok: Array<z.output<S>> = [];
  const invalid: InvalidEntry[] = [];
  for (const [index, el] of raw.entries()) {
    const r = schema.safeParse(el);
    if (r.success) ok.push(r.data);
    else {
      const name = (el as Record<string, unknown> | null)?.[nameKey];
      invalid.push({ index, name: typeof name === 'string' ? name : undefined, message: r.error.issues[0]?.message ?? 'does not match' });
    }
  }
  return { ok, invalid };
}
