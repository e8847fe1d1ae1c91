/**
 * The collection side of the daemon: a client per cluster, the scheduler, the snapshot store, and the part
 * renderer that turns each change into prepared exposition parts. It runs in the collection worker
 * (src/collection/worker.ts) and, with `--collection.inline`, in the daemon's own thread.
 */
import type { Log } from '../log-core.js';
import type { Collector } from '../collectors/types.js';
import type { ClusterConfig } from '../config/types.js';
import { createClient } from '../couchbase/client.js';
import type { CouchbaseClient } from '../couchbase/client.js';
import { packageVersion } from '../metrics/build.js';
import { observeRequest } from '../metrics/requests.js';
import { SnapshotStore } from '../metrics/store.js';
import type { CollectorStatus } from '../metrics/store.js';
import { Scheduler, clusterSignature } from '../scheduler/index.js';
import { PartRenderer } from './parts.js';
import type { SnapshotUpdate } from './parts.js';
import { SnapshotView } from './view.js';

/** How long after a change the parts are rendered, so polls ending together share one render. */
const WARM_DELAY_MS = 50;

/** Renders a store's changes into parts and hands each update to `emit`, soon after the change (eager) or on flush. */
export class Preparer {
  private readonly renderer: PartRenderer;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private disposed = false;

  constructor(
    store: SnapshotStore,
    private readonly emit: (u: SnapshotUpdate) => void,
    opts: { eager?: boolean; requestMetrics?: boolean } = {},
  ) {
    this.renderer = new PartRenderer(store, opts.requestMetrics === false ? { requestMetrics: false } : {});
    if (opts.eager) store.onChange(() => this.soon());
  }

  private soon(): void {
    if (this.timer !== undefined || this.disposed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A failure here resurfaces on the next flush, which renders again.
      this.flush().catch(() => undefined);
    }, WARM_DELAY_MS);
    this.timer.unref();
  }

  /** Render whatever changed and emit it; updates are emitted in order, one render at a time. */
  flush(force = false): Promise<void> {
    const run = this.chain.then(async () => {
      const u = await this.renderer.update(force);
      if (u) this.emit(u);
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * A view fed in-process from a store: tests, and the daemon when the collection runs on its thread. Statuses are read from
 * the store itself (true the moment a poll ends); parts are rendered eagerly or on flush.
 */
export class LocalView extends SnapshotView {
  readonly preparer: Preparer;

  constructor(
    private readonly store: SnapshotStore,
    opts: { eager?: boolean; requestMetrics?: boolean; onApplied?: () => void } = {},
  ) {
    super();
    this.preparer = new Preparer(
      store,
      (u) => {
        this.apply(u);
        opts.onApplied?.();
      },
      opts,
    );
  }

  protected override rawStatusVersion(): number {
    return this.store.version;
  }

  protected override rawStatusList(): CollectorStatus[] {
    return this.store.statusList();
  }

  override allPolledOnce(): boolean {
    return this.store.allPolledOnce();
  }

  flush(): Promise<void> {
    return this.preparer.flush();
  }
}

export interface EngineOptions {
  readonly clusters: readonly ClusterConfig[];
  readonly collectors: readonly Collector[];
  readonly log: Log;
  /** Where prepared parts go (the worker posts them). Absent: the caller renders the store itself (LocalView). */
  readonly emit?: (u: SnapshotUpdate) => void;
}

function clientFor(c: ClusterConfig): CouchbaseClient {
  return createClient({
    cluster: c.name,
    url: c.url,
    username: c.username,
    password: c.password,
    passwordFile: c.passwordFile,
    tls: c.tls,
    concurrency: c.concurrency,
    connectTimeout: c.connectTimeout,
    requestTimeout: c.requestTimeout,
    maxResponseBytes: c.maxResponseBytes,
    observe: observeRequest,
    userAgent: `cbwatch/${packageVersion()}`,
  });
}

export class CollectionEngine {
  readonly store = new SnapshotStore();
  readonly scheduler: Scheduler;
  readonly preparer: Preparer | undefined;
  private clients = new Map<string, CouchbaseClient>();
  private clusters: readonly ClusterConfig[];

  constructor(opts: EngineOptions) {
    this.clusters = opts.clusters;
    for (const c of opts.clusters) this.clients.set(c.name, clientFor(c));
    this.preparer = opts.emit ? new Preparer(this.store, opts.emit, { eager: true }) : undefined;
    this.scheduler = new Scheduler({ clusters: opts.clusters, clients: this.clients, collectors: opts.collectors, store: this.store, log: opts.log });
  }

  start(): void {
    this.scheduler.start();
    // The statuses of the registered collectors (not polled yet) go out at once, for readiness and the landing page.
    void this.preparer?.flush(true);
  }

  /** Poll everything now; resolves once the resulting parts have been emitted. */
  async pollAllOnce(): Promise<void> {
    await this.scheduler.pollAllOnce();
    await this.preparer?.flush(true);
  }

  /**
   * Apply a reloaded cluster list: a cluster whose connection settings are unchanged keeps its client, and each
   * of its collectors whose options are unchanged keeps its job (state, memos, last series); the rest is
   * replaced or removed (src/scheduler/index.ts).
   */
  async reconfigure(clusters: readonly ClusterConfig[]): Promise<{ kept: number; added: number; removed: number }> {
    const before = new Map(this.clusters.map((c) => [c.name, c]));
    const clients = new Map<string, CouchbaseClient>();
    for (const c of clusters) {
      const prev = before.get(c.name);
      const client = prev && clusterSignature(prev) === clusterSignature(c) ? this.clients.get(c.name) : undefined;
      client?.setPassword?.(c.password);
      clients.set(c.name, client ?? clientFor(c));
    }
    const result = await this.scheduler.reconfigure(clusters, clients);
    const unused = [...this.clients.values()].filter((c) => ![...clients.values()].includes(c));
    this.clients = clients;
    this.clusters = clusters;
    await Promise.all(unused.map((c) => c.close()));
    await this.preparer?.flush(true);
    return result;
  }

  async stop(): Promise<void> {
    await this.scheduler.stop();
    this.preparer?.dispose();
    await Promise.all([...this.clients.values()].map((c) => c.close()));
  }
}
