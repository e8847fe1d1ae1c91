import { describe, expect, it, vi } from 'vitest';
import { createSharedCache } from '../../src/collectors/shared.js';
import { HttpStatusError, TimeoutError } from '../../src/errors.js';

const desc = { method: 'GET', url: 'http://cb.test:8091/pools/default/buckets', endpoint: '/pools/default/buckets' };

describe('the shared fetch cache', () => {
  it('merges concurrent callers into one fetch and reuses the result for its maximum age', async () => {
    let t = 0;
    const cache = createSharedCache(() => t);
    let loads = 0;
    const load = async (): Promise<number> => ++loads;
    const [a, b] = await Promise.all([cache.get('k', 5000, load), cache.get('k', 5000, load)]);
    expect([a, b, loads]).toEqual([1, 1, 1]);
    t = 4000;
    expect(await cache.get('k', 5000, load)).toBe(1);
    t = 6000;
    expect(await cache.get('k', 5000, load)).toBe(2);
  });

  it('drops a value once it is past its maximum age, without waiting for the next caller', async () => {
    vi.useFakeTimers();
    try {
      const cache = createSharedCache(() => Date.now());
      let loads = 0;
      const big = { buckets: new Array(1000).fill('b') };
      expect(await cache.get('buckets', 5000, async () => (++loads, big))).toBe(big);
      // Within its age: the same value, no second load.
      vi.advanceTimersByTime(4000);
      expect(await cache.get('buckets', 5000, async () => (++loads, { buckets: [] }))).toBe(big);
      expect(loads).toBe(1);
      // Past the age it was fetched with, the cache no longer holds it: even a caller who would accept an older value
      // loads again.
      vi.advanceTimersByTime(1100);
      const fresh = await cache.get('buckets', 60_000, async () => (++loads, { buckets: ['c'] }));
      expect(fresh).toEqual({ buckets: ['c'] });
      expect(loads).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('is not bound to the shortest deadline: a joiner with time left fetches again when the starter times out', async () => {
    const cache = createSharedCache();
    let rejectFirst: (err: unknown) => void = () => undefined;
    // The starter's fetch runs on its own (short) poll deadline and is cut by it.
    const starter = cache.get('buckets', 5000, () => new Promise<string>((_res, rej) => (rejectFirst = rej)));
    // A collector with a longer deadline joins the same fetch; its own load would succeed.
    let joinerLoads = 0;
    const joiner = cache.get('buckets', 5000, async () => {
      joinerLoads++;
      return 'list';
    });
    rejectFirst(new TimeoutError(desc, 'poll deadline'));
    await expect(starter).rejects.toMatchObject({ code: 'CBW_ERR_TIMEOUT' });
    await expect(joiner).resolves.toBe('list');
    expect(joinerLoads).toBe(1);
  });

  it('shares a real failure (not a deadline) with every caller, and does not cache it', async () => {
    const cache = createSharedCache();
    let fail: (err: unknown) => void = () => undefined;
    const a = cache.get('buckets', 5000, () => new Promise<string>((_res, rej) => (fail = rej)));
    let joinerLoads = 0;
    const b = cache.get('buckets', 5000, async () => {
      joinerLoads++;
      return 'list';
    });
    fail(new HttpStatusError(desc, 500, 'boom'));
    await expect(a).rejects.toMatchObject({ code: 'CBW_ERR_HTTP' });
    await expect(b).rejects.toMatchObject({ code: 'CBW_ERR_HTTP' });
    expect(joinerLoads).toBe(0);
    expect(await cache.get('buckets', 5000, async () => 'fresh')).toBe('fresh');
  });
});
