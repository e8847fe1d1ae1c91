import type { SharedCache } from './types.js';

/** An error that only says the caller who started a shared fetch ran out of time (its poll deadline or shutdown). */
function callerGaveUp(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'CBW_ERR_TIMEOUT' || code === 'CBW_ERR_ABORTED' || (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'));
}

/**
 * Single-flight memo with a maximum age; failures are not cached. A value is dropped once it is older than the
 * maximum age of the caller who fetched it: no caller may use it then, and it would otherwise stay until the next
 * fetch (the bucket list of a large cluster, megabytes, from one poll to the next).
 *
 * A fetch runs on the client (and so the deadline) of the caller who started it. When that caller's deadline
 * ends it, a caller who merely joined and still has time starts the fetch again with its own client, so one slow
 * shared fetch is never bound to the shortest deadline among the collectors that share it.
 */
export function createSharedCache(now: () => number = Date.now): SharedCache {
  const entries = new Map<string, { at: number; value?: unknown; pending?: Promise<unknown> }>();
  const start = <T>(key: string, maxAgeMs: number, load: () => Promise<T>): Promise<T> => {
    const pending = load().then(
      (value) => {
        const entry = { at: now(), value };
        entries.set(key, entry);
        const expiry = setTimeout(() => {
          if (entries.get(key) === entry) entries.delete(key);
        }, maxAgeMs + 1);
        expiry.unref?.();
        return value;
      },
      (err: unknown) => {
        if (entries.get(key)?.pending === pending) entries.delete(key);
        throw err;
      },
    );
    entries.set(key, { at: now(), pending });
    return pending;
  };
  return {
    get<T>(key: string, maxAgeMs: number, load: () => Promise<T>): Promise<T> {
      const e = entries.get(key);
      if (e?.pending) {
        return (e.pending as Promise<T>).catch((err: unknown) => {
          if (!callerGaveUp(err)) throw err;
          // Join a fetch another joiner restarted meanwhile, else start one on this caller's own deadline.
          const again = entries.get(key);
          return again?.pending ? (again.pending as Promise<T>) : start(key, maxAgeMs, load);
        });
      }
      if (e && 'value' in e && now() - e.at <= maxAgeMs) return Promise.resolve(e.value as T);
      return start(key, maxAgeMs, load);
    },
  };
}
