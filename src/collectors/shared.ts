import type { SharedCache } from './types.js';

/** Single-flight memo with a maximum age; failures are not cached. */
export function createSharedCache(now: () => number = Date.now): SharedCache {
  const entries = new Map<string, { at: number; value?: unknown; pending?: Promise<unknown> }>();
  return {
    get<T>(key: string, maxAgeMs: number, load: () => Promise<T>): Promise<T> {
      const e = entries.get(key);
      if (e?.pending) return e.pending as Promise<T>;
      if (e && 'value' in e && now() - e.at <= maxAgeMs) return Promise.resolve(e.value as T);
      const pending = load().then(
        (value) => {
          entries.set(key, { at: now(), value });
          return value;
        },
        (err: unknown) => {
          entries.delete(key);
          throw err;
        },
      );
      entries.set(key, { at: now(), pending });
      return pending;
    },
  };
}
