/**
 * The daemon: the HTTP server on this thread, and the collection — a client per cluster, the scheduler, the
 * snapshot store and the renderer of exposition parts — in a worker thread (src/collection/), so that a scrape
 * never waits for a poll, a parse or a render. Used by `cbwatch run`, `cbwatch demo` and the integration and
 * end-to-end tests. With `--collection.inline` (or `collection: 'inline'`) the collection runs on this thread
 * instead, in one V8 isolate: less memory, for scrapes that wait for the collection's work and its heap's
 * collections.
 */
import type { Readable } from 'node:stream';
import type { ResourceLimits } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { LocalView } from './collection/engine.js';
import { WorkerCollection } from './collection/host.js';
import type { StatusSource } from './collection/view.js';
import type { Collector } from './collectors/types.js';
import { COLLECTOR_NAMES } from './config/schema.js';
import { registerConfigSecrets } from './config/secrets.js';
import type { Config } from './config/types.js';
import { createLogger } from './log.js';
import { Exposition } from './metrics/exposition.js';
import { startProcessMetrics } from './metrics/process.js';
import { registerSecret } from './redact.js';
import { recordConfigLoad } from './metrics/self.js';
import { buildApp } from './server/app.js';
import { listenOn } from './server/listen.js';
import { registerSyncGatewayWebhooks } from './webhooks/sync-gateway.js';
import type { WebhookReceiver } from './webhooks/sync-gateway.js';
import type { AppDeps } from './server/app.js';

export interface DaemonOptions {
  readonly config: Config;
  readonly logger?: Logger;
  /** Defaults to every registered collector. In worker mode only registered collectors can run (by name). */
  readonly collectors?: readonly Collector[];
  /** Default true; tests may turn process metrics off. */
  readonly processMetrics?: boolean;
  readonly authorize?: AppDeps['authorize'];
  readonly https?: AppDeps['https'];
  readonly plugins?: AppDeps['plugins'];
  readonly checkClientCertificate?: AppDeps['checkClientCertificate'];
  readonly rateLimit?: AppDeps['rateLimit'];
  readonly headers?: AppDeps['headers'];
  readonly http2?: AppDeps['http2'];
  /** Where collection runs: a worker thread, or this thread. Default: this thread when `config.collectionInline` is set and no `worker` options are given. */
  readonly collection?: 'worker' | 'inline';
  /** Worker mode: test hooks and tuning (src/collection/host.ts). */
  readonly worker?: {
    readonly extraModules?: readonly string[];
    readonly extraData?: unknown;
    readonly restartDelayMs?: { readonly first: number; readonly max: number };
    /** The worker thread's heap limits (default: WORKER_RESOURCE_LIMITS in collection/host.ts). */
    readonly resourceLimits?: ResourceLimits;
  };
}

export interface Daemon {
  /** http(s)://host:port of the listening server. */
  readonly url: string;
  readonly app: FastifyInstance;
  /** Collector statuses as the HTTP thread knows them. */
  readonly store: StatusSource;
  readonly scheduler: {
    /** Poll every collector now; resolves once the results are served. */
    pollAllOnce(): Promise<void>;
  };
  /** Resolves once every enabled collector has finished its first poll. */
  ready(): Promise<void>;
  /**
   * Apply a reloaded configuration's clusters to the collection: unchanged (cluster, collector) jobs keep
   * their state and series, the others are replaced or removed. Resolves once the collection has applied it.
   */
  reconfigure(config: Config): Promise<void>;
  /** A heap snapshot of the collection worker (undefined when collection runs on this thread). */
  readonly collectionHeapSnapshot?: () => Promise<Readable>;
  close(): Promise<void>;
}

/** Secrets besides the clusters' credentials, for the worker's redactor. */
function extraSecrets(config: Config): string[] {
  return [config.webhooks.syncGateway?.token, ...Object.values(config.web.settings?.basicAuthUsers ?? {})].filter((s): s is string => typeof s === 'string' && s !== '');
}

export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  const { config } = opts;
  const log = opts.logger ?? createLogger({ level: config.log.level, format: config.log.format });
  if (opts.processMetrics !== false) startProcessMetrics();
  recordConfigLoad(true);
  // The collectors' code is loaded where it runs: here when inline, or in the worker (the HTTP thread then never
  // loads the HTTP client, the collectors or their schemas).
  const mode = opts.collection ?? (config.collectionInline === true && opts.worker === undefined ? 'inline' : 'worker');

  let view: LocalView | WorkerCollection['view'];
  let start: () => void;
  let pollAllOnce: () => Promise<void>;
  let stopCollection: () => Promise<void>;
  let reconfigure: (c: Config) => Promise<void>;
  let jobs: number;
  let collectionHeapSnapshot: (() => Promise<Readable>) | undefined;
  if (mode === 'inline') {
    const [{ CollectionEngine, LocalView }, { collectorList }, { setUpAnswers }] = await Promise.all([
      import('./collection/engine.js'),
      import('./collectors/index.js'),
      import('./collection/discipline.js'),
    ]);
    // The answer budget and the heap's collections after answers, and the secrets to redact from what the
    // collectors log and report, as the worker sets them in its own thread (a configuration not read by loadConfig
    // has not registered them).
    const burst = setUpAnswers(config, log);
    const redact = (c: Config): void => {
      registerConfigSecrets({ clusters: c.clusters, webhooks: {}, web: {} });
      for (const secret of extraSecrets(c)) registerSecret(secret);
    };
    redact(config);
    const engine = new CollectionEngine({ clusters: config.clusters, collectors: opts.collectors ?? collectorList(), log });
    // A burst of polls is over once no poll runs and its parts are served: what its answers left is collected then.
    const local = new LocalView(engine.store, { eager: true, onApplied: () => (engine.scheduler.busy() ? undefined : burst.idle()) });
    view = local;
    start = () => engine.start();
    pollAllOnce = async () => {
      await engine.pollAllOnce();
      await local.flush();
    };
    stopCollection = async () => {
      await engine.stop();
      local.preparer.dispose();
    };
    reconfigure = async (c) => {
      redact(c);
      log.info(await engine.reconfigure(c.clusters), 'collection reconfigured');
      await local.flush();
    };
    jobs = engine.scheduler.jobCount;
  } else {
    const wc = new WorkerCollection({
      clusters: config.clusters,
      collectors: opts.collectors?.map((c) => c.name) ?? COLLECTOR_NAMES,
      log,
      ...(config.maxBufferedBytes !== undefined ? { maxBufferedBytes: config.maxBufferedBytes } : {}),
      ...(config.maxAnswerValues !== undefined ? { maxAnswerValues: config.maxAnswerValues } : {}),
      ...(config.gcEveryAnswerBytes !== undefined ? { gcEveryAnswerBytes: config.gcEveryAnswerBytes } : {}),
      secrets: extraSecrets(config),
      ...(opts.worker?.extraModules ? { extraModules: opts.worker.extraModules } : {}),
      ...(opts.worker?.extraData !== undefined ? { extraData: opts.worker.extraData } : {}),
      ...(opts.worker?.restartDelayMs ? { restartDelayMs: opts.worker.restartDelayMs } : {}),
      ...(opts.worker?.resourceLimits ? { resourceLimits: opts.worker.resourceLimits } : {}),
    });
    view = wc.view;
    start = () => wc.start();
    pollAllOnce = () => wc.pollAllOnce();
    stopCollection = () => wc.stop();
    reconfigure = (c) => wc.reconfigure(c.clusters, extraSecrets(c));
    collectionHeapSnapshot = () => wc.heapSnapshot();
    jobs = wc.view.statusList().length;
  }
  const exposition = new Exposition(view, { processMetrics: opts.processMetrics !== false });
  const plugins = [...(opts.plugins ?? [])];
  const sg = config.webhooks.syncGateway;
  let receiver: WebhookReceiver | undefined;
  if (sg?.enabled) plugins.push((app) => void (receiver = registerSyncGatewayWebhooks(app, sg, log)));
  // The landing page reads the clusters and webhooks of the configuration in force, which a reload replaces.
  let current = config;
  const deps: AppDeps = {
    store: view,
    exposition,
    get config() {
      return current;
    },
    log,
    plugins,
    ...(opts.authorize ? { authorize: opts.authorize } : {}),
    ...(opts.https ? { https: opts.https } : {}),
    ...(opts.checkClientCertificate ? { checkClientCertificate: opts.checkClientCertificate } : {}),
    ...(config.web.maxRequests === undefined ? {} : { maxRequests: config.web.maxRequests }),
    ...(config.web.telemetryPath === undefined ? {} : { telemetryPath: config.web.telemetryPath }),
    ...(opts.rateLimit ? { rateLimit: opts.rateLimit } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
    ...(opts.http2 !== undefined ? { http2: opts.http2 } : {}),
  };
  const app = buildApp(deps);
  // A backlog as deep as the system allows (Go servers, node_exporter among them, use somaxconn): a burst of
  // connections waits to be accepted, and refused with 503 beyond --web.max-requests, instead of being reset.
  try {
    await listenOn(app, config.web.listenHost, config.web.listenPort, 4096);
  } catch (err) {
    // Nothing may keep the process alive after a failed start (EADDRINUSE): the caller exits 1.
    await app.close().catch(() => undefined);
    await stopCollection().catch(() => undefined);
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.web.listenPort;
  const shownHost = ['', '0.0.0.0', '::'].includes(config.web.listenHost) ? '127.0.0.1' : config.web.listenHost;
  const url = `${opts.https ? 'https' : 'http'}://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
  start();
  log.info({ url, clusters: config.clusters.map((c) => c.name), collectors: jobs, collection: mode }, 'cbwatch started');

  let closed = false;
  return {
    url,
    app,
    store: view,
    scheduler: { pollAllOnce },
    async ready() {
      while (!view.allPolledOnce()) {
        if (closed) throw new Error('daemon closed before it was ready');
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async reconfigure(c: Config) {
      if (closed) throw new Error('daemon closed');
      await reconfigure(c);
      // A rotated webhook token applies at once; the receiver's other settings need a restart.
      const token = c.webhooks.syncGateway?.token;
      if (receiver && token) receiver.setToken(token);
      current = { ...c, web: current.web };
    },
    ...(collectionHeapSnapshot ? { collectionHeapSnapshot } : {}),
    async close() {
      if (closed) return;
      closed = true;
      await stopCollection();
      await app.close();
      log.info('cbwatch stopped');
    },
  };
}
