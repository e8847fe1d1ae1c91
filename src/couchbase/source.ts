/**
 * What the API modules of src/couchbase/ need to fetch: a client and the per-cluster shared cache. They take
 * this, never a collector's context, so the REST layer does not depend on the collectors' API (a poll's
 * context satisfies it structurally).
 */
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
