/**
 * The daemon: a client per cluster, the scheduler, the snapshot store and the HTTP server, started and
 * stopped together. Used by `cbwatch run`, `cbwatch demo` and the integration and end-to-end tests.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { collectorList } from './collectors/index.js';
import type { Collector } from './collectors/types.js';
import type { Config } from './config/types.js';
import { createClient } from './couchbase/client.js';
import type { CouchbaseClient } from './couchbase/client.js';
import { createLogger } from './log.js';
import { packageVersion } from './metrics/build.js';
import { Exposition } from './metrics/exposition.js';
import { startProcessMetrics } from './metrics/process.js';
import { observeRequest } from './metrics/self.js';
import { SnapshotStore } from './metrics/store.js';
import { Scheduler } from './scheduler/index.js';
import { buildApp } from './server/app.js';
import { registerSyncGatewayWebhooks } from './webhooks/sync-gateway.js';
import type { AppDeps } from './server/app.js';

export interface DaemonOptions {
  readonly config: Config;
  readonly logger?: Logger;
  /** Defaults to every registered collector. */
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
}

export interface Daemon {
  /** http(s)://host:port of the listening server. */
  readonly url: string;
  readonly app: FastifyInstance;
  readonly store: SnapshotStore;
  readonly scheduler: Scheduler;
  /** Resolves once every enabled collector has finished its first poll. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  const { config } = opts;
  const log = opts.logger ?? createLogger({ level: config.log.level, format: config.log.format });
  if (opts.processMetrics !== false) startProcessMetrics();
  const clients = new Map<string, CouchbaseClient>();
  for (const c of config.clusters) {
    clients.set(
      c.name,
      createClient({
        cluster: c.name,
        url: c.url,
        username: c.username,
        password: c.password,
        tls: c.tls,
        concurrency: c.concurrency,
        connectTimeout: c.connectTimeout,
        requestTimeout: c.requestTimeout,
        maxResponseBytes: c.maxResponseBytes,
        observe: observeRequest,
        userAgent: `cbwatch/${packageVersion()}`,
      }),
    );
  }
  const store = new SnapshotStore();
  const exposition = new Exposition(store, { processMetrics: opts.processMetrics !== false, eager: true });
  const scheduler = new Scheduler({ clusters: config.clusters, clients, collectors: opts.collectors ?? collectorList(), store, log });
  const plugins = [...(opts.plugins ?? [])];
  const sg = config.webhooks.syncGateway;
  if (sg?.enabled) plugins.push((app) => registerSyncGatewayWebhooks(app, sg, log));
  const deps: AppDeps = {
    store,
    exposition,
    config,
    log,
    plugins,
    ...(opts.authorize ? { authorize: opts.authorize } : {}),
    ...(opts.https ? { https: opts.https } : {}),
    ...(opts.checkClientCertificate ? { checkClientCertificate: opts.checkClientCertificate } : {}),
    ...(config.web.maxRequests === undefined ? {} : { maxRequests: config.web.maxRequests }),
    ...(opts.rateLimit ? { rateLimit: opts.rateLimit } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
    ...(opts.http2 !== undefined ? { http2: opts.http2 } : {}),
  };
  const app = buildApp(deps);
  // A backlog as deep as the system allows (Go servers, node_exporter among them, use somaxconn): a burst of
  // connections waits to be accepted, and refused with 503 beyond --web.max-requests, instead of being reset.
  try {
    await app.listen({ host: config.web.listenHost, port: config.web.listenPort, backlog: 4096 });
  } catch (err) {
    // Nothing may keep the process alive after a failed start (EADDRINUSE): the caller exits 1.
    await app.close().catch(() => undefined);
    await Promise.all([...clients.values()].map((c) => c.close()));
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.web.listenPort;
  const shownHost = config.web.listenHost === '0.0.0.0' || config.web.listenHost === '::' ? '127.0.0.1' : config.web.listenHost;
  const url = `${opts.https ? 'https' : 'http'}://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
  scheduler.start();
  log.info({ url, clusters: config.clusters.map((c) => c.name), collectors: scheduler.jobCount }, 'cbwatch started');

  let closed = false;
  return {
    url,
    app,
    store,
    scheduler,
    async ready() {
      while (!store.allPolledOnce()) {
        if (closed) throw new Error('daemon closed before it was ready');
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await scheduler.stop();
      await app.close();
      await Promise.all([...clients.values()].map((c) => c.close()));
      log.info('cbwatch stopped');
    },
  };
}
