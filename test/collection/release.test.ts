/**
 * Replaced parts are let go of early: the view counts their bytes and, past a threshold, asks V8 for an
 * full collection in a task of its own (src/collection/release.ts). The collection itself is V8's; these tests check the
 * counting, the call, and that a real `node --expose-gc` accepts the call as made.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { preparePart } from '../../src/metrics/part.js';
import type { SnapshotUpdate } from '../../src/collection/parts.js';
import { BurstCollector, GC_EVERY_DEFAULT_BYTES, IDLE_COLLECT_AFTER_BYTES, RELEASE_AFTER_BYTES, ReleaseCounter, StartupRelease, collectSoon } from '../../src/collection/release.js';
import { SnapshotView } from '../../src/collection/view.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

const update = (parts: Array<[string, string]>, order: string[]): SnapshotUpdate => ({
  order,
  parts: parts.map(([name, text]) => preparePart(name, text)),
  statuses: [],
});

describe('ReleaseCounter', () => {
  it('asks for one collection each time the replaced bytes reach the threshold, then counts from zero', () => {
    let calls = 0;
    const r = new ReleaseCounter(100, () => (calls++, true));
    r.count(60);
    expect(calls).toBe(0);
    r.count(40);
    expect(calls).toBe(1);
    r.count(99);
    expect(calls).toBe(1);
    r.count(1);
    expect(calls).toBe(2);
    expect(r.requested).toBe(2);
  });

  it('does not count a collection that could not be asked for', () => {
    const r = new ReleaseCounter(10, () => false);
    r.count(25);
    expect(r.requested).toBe(0);
  });
});

describe('BurstCollector', () => {
  it('asks for a collection at the end of a burst once 4 MiB of answers were read since the last one, never during one', () => {
    let calls = 0;
    const b = new BurstCollector(undefined, () => (calls++, true));
    expect(IDLE_COLLECT_AFTER_BYTES).toBe(4 * 1024 * 1024);
    // Reading, however much, asks for nothing: only the end of a burst does.
    b.count(3 * 1024 * 1024);
    b.count(2 * 1024 * 1024);
    expect(calls).toBe(0);
    b.idle();
    expect(calls).toBe(1);
    // Nothing read since: a second end of a burst (a collector's small poll) asks for nothing.
    b.idle();
    expect(calls).toBe(1);
    // Small bursts add up: 3 MiB then 1 MiB.
    b.count(3 * 1024 * 1024);
    b.idle();
    expect(calls).toBe(1);
    b.count(1024 * 1024);
    b.idle();
    expect(calls).toBe(2);
    expect(b.requested).toBe(2);
  });

  it('asks for one at the end of the first burst (start-up) whatever was read, then only past the threshold', () => {
    let calls = 0;
    const b = new BurstCollector(100, () => (calls++, true));
    b.idle();
    expect(calls).toBe(1);
    b.idle();
    b.count(99);
    b.idle();
    expect(calls).toBe(1);
    b.count(1);
    b.idle();
    expect(calls).toBe(2);
  });

  it('does not count a collection that could not be asked for, and starts counting afresh all the same', () => {
    let ok = false;
    const b = new BurstCollector(10, () => ok);
    b.count(25);
    b.idle();
    expect(b.requested).toBe(0);
    ok = true;
    b.count(9);
    b.idle();
    expect(b.requested).toBe(0);
    b.count(1);
    b.idle();
    expect(b.requested).toBe(1);
  });
});

describe('BurstCollector with a size (--collection.gc-every)', () => {
  it('asks during a burst for a regular collection each time that many bytes were read since the last collection of either kind; the end of the burst still asks for its own', () => {
    const asked: string[] = [];
    const b = new BurstCollector(
      100,
      () => (asked.push('end'), true),
      250,
      () => (asked.push('mid'), true),
    );
    expect(GC_EVERY_DEFAULT_BYTES).toBe(8 * 1024 * 1024);
    b.idle(); // start-up's: both counts start from zero
    b.count(200);
    expect(asked).toEqual(['end']);
    b.count(60); // 260 since the last: one during the burst
    expect(asked).toEqual(['end', 'mid']);
    // 90 more: under the size since that one, but the burst read 350 since the last end-of-burst collection, which
    // the end of the burst asks for (what the burst made after its answers is freed only then).
    b.count(90);
    expect(asked).toEqual(['end', 'mid']);
    b.idle();
    expect(asked).toEqual(['end', 'mid', 'end']);
    // An end-of-burst collection starts the count again for the size too: 10 + 240 after it is not 250.
    b.count(10);
    b.count(239);
    expect(asked).toEqual(['end', 'mid', 'end']);
    b.count(1);
    expect(asked).toEqual(['end', 'mid', 'end', 'mid']);
    // That burst's end asks (250 since the last end-of-burst collection); a later burst of 50, under both, asks for nothing.
    b.idle();
    expect(asked).toEqual(['end', 'mid', 'end', 'mid', 'end']);
    b.count(50);
    b.idle();
    expect(asked).toEqual(['end', 'mid', 'end', 'mid', 'end']);
    expect(b.requested).toBe(5);
  });

  it('with 0, asks for none during a burst however much is read', () => {
    let mid = 0;
    const b = new BurstCollector(100, () => true, 0, () => (mid++, true));
    for (let i = 0; i < 100; i++) b.count(1024 * 1024);
    expect(mid).toBe(0);
  });
});

describe('StartupRelease', () => {
  it('asks once, on the first call only, and counts from zero afterwards', () => {
    let calls = 0;
    const counter = new ReleaseCounter(100, () => (calls++, true));
    counter.count(60);
    const s = new StartupRelease(counter);
    s.over();
    s.over();
    expect(calls).toBe(1);
    // The 60 bytes counted before were collected with it: 40 more do not reach the threshold.
    counter.count(40);
    expect(calls).toBe(1);
    counter.count(60);
    expect(calls).toBe(2);
  });
});

describe('SnapshotView at the end of start-up', () => {
  const status = (collector: string, ok: boolean | undefined) => ({ cluster: 'c', collector, ok, durationSeconds: 0, lastSuccess: undefined, lastAttempt: 0, intervalSeconds: 30 });

  it('asks for one collection that gives pages back once every collector has polled once, not before, and once only', () => {
    let calls = 0;
    const view = new SnapshotView(new ReleaseCounter(RELEASE_AFTER_BYTES, () => (calls++, true)));
    view.apply({ order: [], parts: [], statuses: [status('a', true), status('b', undefined)] as never });
    expect(calls).toBe(0);
    view.apply({ order: [], parts: [], statuses: [status('a', true), status('b', false)] as never });
    expect(calls).toBe(1);
    view.apply({ order: [], parts: [], statuses: [status('a', true), status('b', true)] as never });
    expect(calls).toBe(1);
  });
});

describe('SnapshotView and replaced parts', () => {
  it("counts a replaced part's plain and deflated bytes, a removed part's, and every part when the worker is gone", () => {
    const seen: number[] = [];
    const counter = new ReleaseCounter(Number.MAX_SAFE_INTEGER);
    const replaced = counter.count.bind(counter);
    counter.count = (n: number) => {
      seen.push(n);
      replaced(n);
    };
    const view = new SnapshotView(counter);
    view.apply(update([['a', 'x 1\n'], ['b', 'y 2\n']], ['a', 'b']));
    // First parts: nothing replaced.
    expect(seen).toEqual([]);
    const a1 = view.parts()[0];
    view.apply(update([['a', 'x 10\n']], ['a', 'b']));
    // Only the deflated bytes cross to this thread (the text is not kept): 'x 1\n' deflates to a few bytes.
    expect(seen).toEqual([a1?.deflated.byteLength ?? 0]);
    expect(seen[0]).toBeGreaterThan(0);
    const b = view.parts()[1];
    view.apply(update([], ['a']));
    expect(seen[1]).toBe(b?.deflated.byteLength ?? 0);
    view.failAll('worker exited');
    expect(seen).toHaveLength(3);
    expect(view.parts()).toEqual([]);
  });
});

describe('collectSoon', () => {
  const g = globalThis as { gc?: unknown };
  const had = g.gc;
  afterEach(() => {
    g.gc = had;
  });

  it('does nothing without an exposed gc', () => {
    g.gc = undefined;
    expect(collectSoon()).toBe(false);
  });

  it('asks for a major collection, run in a task of its own', () => {
    const asked: unknown[] = [];
    g.gc = (o: unknown) => {
      asked.push(o);
      return Promise.resolve();
    };
    expect(collectSoon()).toBe(true);
    expect(asked).toEqual([{ type: 'major', execution: 'async' }]);
  });

  it("asked to give pages back, asks for V8's last-resort flavour (its memory-reducing collection)", () => {
    const asked: unknown[] = [];
    g.gc = (o: unknown) => {
      asked.push(o);
      return Promise.resolve();
    };
    expect(collectSoon(true)).toBe(true);
    expect(asked).toEqual([{ type: 'major', execution: 'async', flavor: 'last-resort' }]);
  });

  it('the view and the burst collector ask for that flavour by default', async () => {
    const asked: unknown[] = [];
    g.gc = (o: unknown) => {
      asked.push(o);
      return Promise.resolve();
    };
    new BurstCollector().idle();
    await Promise.resolve();
    await Promise.resolve();
    const view = new SnapshotView();
    view.apply({ order: [], parts: [], statuses: [] });
    expect(asked).toEqual([
      { type: 'major', execution: 'async', flavor: 'last-resort' },
      { type: 'major', execution: 'async', flavor: 'last-resort' },
    ]);
  });

  it('asks for no second one while the first has not run: a burst of large answers makes one, not a queue', async () => {
    let asked = 0;
    let run: () => void = () => undefined;
    g.gc = () => {
      asked++;
      return new Promise<void>((r) => (run = r));
    };
    expect(collectSoon()).toBe(true);
    expect(collectSoon()).toBe(false);
    expect(collectSoon()).toBe(false);
    expect(asked).toBe(1);
    run();
    await Promise.resolve();
    await Promise.resolve();
    expect(collectSoon()).toBe(true);
    expect(asked).toBe(2);
    run();
    await Promise.resolve();
    await Promise.resolve();
  });

  it('under node --expose-gc (as the launcher runs it), V8 takes the call', () => {
    const mod = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'collection', 'release.js')).href;
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', `const { collectSoon } = await import(${JSON.stringify(mod)}); process.stdout.write(String(collectSoon()));`], { encoding: 'utf8' });
    expect(out).toBe('true');
  });

  it('under node --expose-gc, V8 takes the give-back call too (Node 20 and 24 both run this suite in CI)', () => {
    const mod = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'collection', 'release.js')).href;
    const script = `const { collectSoon } = await import(${JSON.stringify(mod)}); const ok = collectSoon(true); await new Promise((r) => setTimeout(r, 50)); process.stdout.write(String(ok));`;
    expect(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' })).toBe('true');
  });
});

describe('a replaced part is not kept alive', () => {
  it('by the view or the gzip memo: a full collection right after the update frees it (real node --expose-gc)', () => {
    const url = (f: string): string => pathToFileURL(join(PACKAGE_ROOT, 'dist', ...f.split('/'))).href;
    const script = `
      const { SnapshotView } = await import(${JSON.stringify(url('collection/view.js'))});
      const { preparePart } = await import(${JSON.stringify(url('metrics/part.js'))});
      const { Exposition } = await import(${JSON.stringify(url('metrics/exposition.js'))});
      const view = new SnapshotView();
      const exposition = new Exposition(view, { processMetrics: false });
      let first = preparePart('bucket_stats', 'x{bucket="a"} 1\\n'.repeat(1000));
      const gone = new WeakRef(first);
      view.apply({ order: ['bucket_stats'], parts: [first], statuses: [] });
      first = undefined;
      // A gzip scrape remembers the body it joined; a plain one returns the part's own buffer.
      await exposition.body(true);
      await exposition.body(false);
      view.apply({ order: ['bucket_stats'], parts: [preparePart('bucket_stats', 'x{bucket="a"} 2\\n')], statuses: [] });
      await new Promise((r) => setTimeout(r, 10));
      gc();
      process.stdout.write(gone.deref() === undefined ? 'freed' : 'kept');
    `;
    expect(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' })).toBe('freed');
  });
});
