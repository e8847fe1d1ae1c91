/**
 * The collection on the daemon's own thread (`--collection.inline`, one isolate): it keeps the worker's
 * discipline — the answer budget and value limit, the clusters' secrets redacted, a collection of the heap every
 * `gcEveryAnswerBytes` of answers and one that gives pages back when a burst of polls is over — and without the
 * setting the collection runs in a worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setUpAnswers } from '../../src/collection/discipline.js';
import { DEFAULT_MAX_ANSWER_VALUES, DEFAULT_MAX_BUFFERED_BYTES } from '../../src/config/defaults.js';
import type { Config } from '../../src/config/types.js';
import { setAnswerBudget, setAnswerValueLimit } from '../../src/couchbase/client.js';
import { processRedactor } from '../../src/redact.js';
import { onlyCollectors, startHarness } from '../helpers/daemon.js';

const only = onlyCollectors;

type Gc = (options?: { type?: string; execution?: string; flavor?: string }) => unknown;
const g = globalThis as { gc?: Gc };
const realGc = g.gc;

afterEach(() => {
  // Module state of this thread, which the daemons below set as the collection worker sets its own.
  setAnswerBudget(DEFAULT_MAX_BUFFERED_BYTES);
  setAnswerValueLimit(DEFAULT_MAX_ANSWER_VALUES);
  if (realGc === undefined) delete g.gc;
  else g.gc = realGc;
});

describe('collection on the daemon thread (--collection.inline)', () => {
  // First in the file: the redactor is this thread's, and nothing may have registered the password before.
  it("registers the clusters' secrets with this thread's redactor, as the worker does with its own", async () => {
    const password = 'inline-secret-7f3a';
    expect(processRedactor.redact(`quoting ${password}`)).toBe(`quoting ${password}`);
    // A configuration built by hand, as an embedding program would: loadConfig, which also registers them, is not involved.
    const h = await startHarness({ sim: { users: { admin: { username: 'Administrator', password } } }, mutate: (c) => ({ ...only(['buckets'])(c), collectionInline: true }) });
    try {
      await h.daemon.ready();
      expect(processRedactor.redact(`quoting ${password}`)).toBe('quoting [redacted]');
      expect(await h.metrics()).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"} 1');
    } finally {
      await h.close();
    }
  });

  it('starts no worker: no collection heap snapshot, and the collectors poll and are served', async () => {
    const h = await startHarness({ mutate: (c) => ({ ...only(['buckets', 'nodes'])(c), collectionInline: true }) });
    try {
      await h.daemon.ready();
      expect(h.daemon.collectionHeapSnapshot).toBeUndefined();
      const started = h.logs.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { msg: string; collection?: string }).find((l) => l.msg === 'cbwatch started');
      expect(started?.collection).toBe('inline');
      const text = await h.metrics();
      expect(text).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"} 1');
      expect(text).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="nodes"} 1');
    } finally {
      await h.close();
    }
  });

  it('without collectionInline, runs the collection in a worker thread', async () => {
    const h = await startHarness({ mutate: only(['buckets']) });
    try {
      await h.daemon.ready();
      const started = h.logs.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { msg: string; collection?: string }).find((l) => l.msg === 'cbwatch started');
      expect(started?.collection).toBe('worker');
      expect(typeof h.daemon.collectionHeapSnapshot).toBe('function');
      expect(await h.metrics()).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"} 1');
    } finally {
      await h.close();
    }
  });

  it("asks for the heap's collections as the worker does: during a burst every gcEveryAnswerBytes of answers, and one giving pages back at its end", async () => {
    const calls: Array<{ type?: string; execution?: string; flavor?: string } | undefined> = [];
    g.gc = (options) => {
      calls.push(options);
      return Promise.resolve();
    };
    // 100 buckets with the full stat set: one poll of bucket_stats reads well over 64 KiB of answers.
    const h = await startHarness({ sim: { buckets: 100, nodes: 4, statSet: 'full' }, mutate: (c) => ({ ...only(['buckets', 'bucket_stats'])(c), gcEveryAnswerBytes: 64 * 1024, collectionInline: true }) });
    try {
      await h.daemon.ready();
      await h.daemon.scheduler.pollAllOnce();
      const regular = calls.filter((o) => o?.type === 'major' && o.flavor === undefined);
      const giveBack = calls.filter((o) => o?.flavor === 'last-resort');
      expect(regular.length).toBeGreaterThanOrEqual(2);
      expect(giveBack.length).toBeGreaterThanOrEqual(1);
      // Every one in a task of its own, never inside the caller's turn.
      expect(calls.every((o) => o?.execution === 'async')).toBe(true);
    } finally {
      await h.close();
    }
  }, 60_000);

  it('applies the answer budget on this thread: an answer larger than --couchbase.max-buffered-bytes fails its collector, named', async () => {
    const h = await startHarness({ mutate: (c) => ({ ...only(['buckets', 'nodes'])(c), maxBufferedBytes: 256, collectionInline: true }) });
    try {
      await h.daemon.ready();
      const text = await h.metrics();
      expect(text).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"} 0');
      expect(text).toMatch(/cbwatch_couchbase_requests_total\{[^}]*code="over_budget"[^}]*\} [1-9]/);
    } finally {
      await h.close();
    }
  });

  it('setUpAnswers warns when a gc-every size is set and gc is not exposed, and not otherwise', () => {
    delete g.gc;
    const warned: string[] = [];
    const log = { warn: (m: unknown) => void warned.push(String(m)), info: () => undefined, debug: () => undefined, error: () => undefined, trace: () => undefined, child: () => log };
    setUpAnswers({ gcEveryAnswerBytes: 8 * 1024 * 1024 }, log as never);
    expect(warned).toEqual(['--collection.gc-every has no effect: node was started without --expose-gc (bin/cbwatch.js passes it)']);
    setUpAnswers({}, log as never);
    expect(warned).toHaveLength(1);
  });
});
