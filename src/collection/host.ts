/**
 * The HTTP thread's side of the collection worker: starts it, applies its updates to a SnapshotView, writes
 * its log lines, and restarts it with backoff when it dies. A dead worker never takes the HTTP thread down and
 * never goes unnoticed: the failure is logged, every collector shows as failed (success 0, its series
 * dropped), and a new worker starts after 1 s, 2 s, 4 s … up to 60 s (back to 1 s once one has lived a minute).
 */
import { monotonicMs } from '../clock.js';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type { ResourceLimits } from 'node:worker_threads';
import pino from 'pino';
import type { Logger } from 'pino';
import type { CollectorName } from '../config/schema.js';
import type { ClusterConfig, ResolvedCollectorOptions } from '../config/types.js';
import { PACKAGE_ROOT } from '../paths.js';
import { pendingStatus } from '../metrics/store.js';
import type { CollectorStatus } from '../metrics/store.js';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.js';
import { SnapshotView } from './view.js';
import { limitMemoryReducer, setWorkerSemiSpace } from '../v8-flags.js';

/**
 * The worker runs the built bundle (scripts/bundle.mjs), from src/ (tests) and dist/ (installed) alike: a worker
 * thread needs JavaScript. `npm ci` builds dist/ (prepare script); the test suite's global setup rebuilds it when
 * a source file is newer (test/setup/dist.ts).
 */
export const WORKER_FILE = join(PACKAGE_ROOT, 'dist', 'bundle', 'worker.js');

/**
 * The collection worker's heap limits unless the caller gives its own. The worker is where nearly all of
 * cbwatch's garbage is made (answers, parsed JSON, mapping, rendering); V8 lets a thread's young generation
 * grow to 48 MB (two 16 MB semi-spaces and the new large-object space), which the worker fills between polls
 * and keeps resident. A smaller young generation keeps less memory for a little more scavenging; the figure
 * comes from bench/RESULTS.md ("Heap sizes per thread"). The old generation is left to V8: a cap would turn
 * one hostile answer into a dead worker (every collector failing until the restart) rather than one failed
 * poll. A `--max-semi-space-size` flag overrides this (V8 flags win over per-isolate limits): the launcher's
 * daemon sets one for the worker before starting it (src/v8-flags.ts, setWorkerSemiSpace).
 */
export const WORKER_RESOURCE_LIMITS: Readonly<ResourceLimits> & { readonly maxYoungGenerationSizeMb: number } = { maxYoungGenerationSizeMb: 8 };

export interface WorkerCollectionOptions {
  readonly clusters: readonly ClusterConfig[];
  readonly collectors: readonly string[];
  readonly log: Logger;
  /** The answer budget and the secrets to redact, which the worker thread must know (module state is per thread). */
  readonly maxBufferedBytes?: number;
  readonly maxAnswerValues?: number;
  /** `--collection.gc-every` (src/collection/release.ts); absent: the default. */
  readonly gcEveryAnswerBytes?: number;
  readonly secrets?: readonly string[];
  readonly extraModules?: readonly string[];
  readonly extraData?: unknown;
  /** Restart backoff, ms: first delay and cap (default 1 s and 60 s). */
  readonly restartDelayMs?: { readonly first: number; readonly max: number };
  /** The worker thread's heap limits (default WORKER_RESOURCE_LIMITS). */
  readonly resourceLimits?: ResourceLimits;
}

/** Where the daemon's logger writes, so the worker's JSON lines land in the same place and format. */
function logStream(log: Logger): { write(s: string): unknown } | undefined {
  const s = (log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  return s && typeof (s as { write?: unknown }).write === 'function' ? (s as { write(s: string): unknown }) : undefined;
}

export class WorkerCollection {
  readonly view = new SnapshotView();
  private worker: Worker | undefined;
  private stopping = false;
  private startedAt = 0;
  private delay: number;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private readonly polls = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private readonly stream: { write(s: string): unknown } | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** The clusters a (re)started worker polls: the latest reloaded list. */
  private clusters: readonly ClusterConfig[];
  private secrets: readonly string[] | undefined;
  private started = false;

  constructor(private readonly opts: WorkerCollectionOptions) {
    this.delay = opts.restartDelayMs?.first ?? 1000;
    this.clusters = opts.clusters;
    this.secrets = opts.secrets;
    this.stream = logStream(opts.log);
    const pending: CollectorStatus[] = [];
    for (const cluster of opts.clusters) {
      for (const name of opts.collectors) {
        const o = cluster.collectors[name as CollectorName] as ResolvedCollectorOptions | undefined;
        if (o?.enabled) pending.push(pendingStatus(cluster.name, name));
      }
    }
    this.view.seed(pending);
  }

  start(): void {
    this.started = true;
    if (this.clusters.length === 0) {
      // Nothing to poll (webhooks only, or an empty shard): no worker, ready at once.
      this.view.apply({ order: [], parts: [], statuses: [] });
      return;
    }
    this.spawn();
  }

  private spawn(): void {
    const init: WorkerInit = {
      clusters: this.clusters,
      collectors: this.opts.collectors,
      logLevel: this.opts.log.level,
      ...(this.opts.maxBufferedBytes !== undefined ? { maxBufferedBytes: this.opts.maxBufferedBytes } : {}),
      ...(this.opts.maxAnswerValues !== undefined ? { maxAnswerValues: this.opts.maxAnswerValues } : {}),
      ...(this.opts.gcEveryAnswerBytes !== undefined ? { gcEveryAnswerBytes: this.opts.gcEveryAnswerBytes } : {}),
      ...(this.secrets ? { secrets: this.secrets } : {}),
      ...(this.opts.extraModules ? { extraModules: this.opts.extraModules } : {}),
      ...(this.opts.extraData !== undefined ? { extraData: this.opts.extraData } : {}),
    };
    // Before the worker's isolate exists (src/v8-flags.ts).
    limitMemoryReducer();
    setWorkerSemiSpace();
    const w = new Worker(WORKER_FILE, {
      workerData: init,
      resourceLimits: { ...(this.opts.resourceLimits ?? WORKER_RESOURCE_LIMITS) },
      // The worker's stdout/stderr are the process's; its logs come as messages.
    });
    this.worker = w;
    this.startedAt = monotonicMs();
    w.on('message', (m: FromWorker) => this.onMessage(m));
    w.on('error', (err) => {
      this.opts.log.error({ err: { message: err.message, stack: err.stack } }, 'collection worker failed');
    });
    this.exited = new Promise((resolve) => {
      w.once('exit', (code) => {
        this.onExit(w, code);
        resolve();
      });
    });
  }

  private onMessage(m: FromWorker): void {
    switch (m.t) {
      case 'update':
        this.view.apply(m.update);
        break;
      case 'log':
        if (this.stream) this.stream.write(m.line);
        break;
      case 'polled': {
        const p = this.polls.get(m.id);
        this.polls.delete(m.id);
        if (m.error !== undefined) p?.reject(new Error(m.error));
        else p?.resolve();
        break;
      }
      case 'stopped':
        break;
    }
  }

  private onExit(w: Worker, code: number): void {
    if (this.worker === w) this.worker = undefined;
    for (const p of this.polls.values()) p.reject(new Error('collection worker exited'));
    this.polls.clear();
    if (this.stopping) return;
    const reason = `collection worker exited (code ${code}); restarting`;
    this.opts.log.error({ code }, 'collection worker exited; collectors marked failed until it is back');
    this.view.failAll(reason);
    const max = this.opts.restartDelayMs?.max ?? 60_000;
    // How long the worker lived: a duration, on the monotonic clock.
    if (monotonicMs() - this.startedAt > 60_000) this.delay = this.opts.restartDelayMs?.first ?? 1000;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, max);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopping) this.spawn();
    }, wait);
  }

  /** Poll every collector now, in the worker; resolves once the resulting parts are in the view. */
  pollAllOnce(): Promise<void> {
    const w = this.worker;
    if (!w) return Promise.reject(new Error('collection worker not running'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.polls.set(id, { resolve, reject });
      w.postMessage({ t: 'pollAll', id } satisfies ToWorker);
    });
  }

  /**
   * Apply a reloaded cluster list in the running worker (unchanged collectors keep their jobs, see
   * CollectionEngine.reconfigure). Without a worker (none was needed, or it is being restarted), the next
   * worker starts with the new list.
   */
  reconfigure(clusters: readonly ClusterConfig[], secrets?: readonly string[]): Promise<void> {
    this.clusters = clusters;
    if (secrets) this.secrets = secrets;
    const w = this.worker;
    if (this.stopping || !this.started) return Promise.resolve();
    if (!w) {
      if (this.restartTimer === undefined && clusters.length > 0) this.spawn();
      else if (clusters.length === 0) this.view.apply({ order: [], parts: [], statuses: [] });
      return Promise.resolve();
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.polls.set(id, { resolve, reject });
      w.postMessage({ t: 'reconfigure', id, clusters, ...(secrets ? { secrets } : {}) } satisfies ToWorker);
    });
  }

  /** A heap snapshot of the collection worker's isolate, streamed out of it; rejects while no worker runs. */
  heapSnapshot(): Promise<Readable> {
    const w = this.worker;
    if (!w) return Promise.reject(new Error('collection worker not running'));
    return w.getHeapSnapshot();
  }

  /** Stop the worker: its polls are aborted; after `graceMs` it is terminated. */
  async stop(graceMs = 5000): Promise<void> {
    this.stopping = true;
    if (this.restartTimer !== undefined) clearTimeout(this.restartTimer);
    const w = this.worker;
    if (!w) return;
    w.postMessage({ t: 'stop' } satisfies ToWorker);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), graceMs);
    });
    const how = await Promise.race([this.exited.then(() => 'exited' as const), timeout]);
    clearTimeout(timer);
    if (how === 'timeout') await w.terminate();
  }
}
