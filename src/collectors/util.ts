/**
 * Small helpers shared by collectors that keep per-item state between polls and fan out per-item requests.
 */

/**
 * Drop the state of items that are gone (a bucket deleted, a replication removed), so a re-created item with
 * the same name starts afresh instead of inheriting the old one's timestamps. `state` is keyed by item name;
 * keys starting with NUL are the collector's own (e.g. its dynamic families) and are kept.
 */
export function forgetGone(state: Map<string, unknown>, present: ReadonlySet<string>): void {
  for (const key of [...state.keys()]) if (!present.has(key) && !key.startsWith('\u0000')) state.delete(key);
}

/**
 * Wait for every job, whatever its outcome, so no request of this poll is left running into the next one; the
 * caller decides what a rejection means (one failed item, or the whole poll).
 */
export async function settleAll<T>(jobs: ReadonlyArray<Promise<T>>): Promise<PromiseSettledResult<T>[]> {
  return Promise.allSettled(jobs);
}
