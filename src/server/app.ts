/**
 * The fastify app, built apart from listening so tests can use `app.inject()`.
 * Routes: /metrics (gzip when accepted), /-/healthy, /-/ready, /, and the Sync Gateway webhook receiver.
 */
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { packageVersion } from '../metrics/build.js';
import type { Exposition } from '../metrics/exposition.js';
import type { StatusSource } from '../collection/view.js';
import { landingPage } from './landing.js';

export interface AppDeps {
  readonly store: StatusSource;
  readonly exposition: Exposition;
  readonly config: Pick<Config, 'clusters' | 'webhooks'>;
  readonly log: Logger;
  /** Checks an Authorization header when web basic auth is configured; undefined = open. */
  readonly authorize?: (header: string | undefined) => Promise<boolean>;
  /** fastify's https options when web TLS is configured. */
  readonly https?: FastifyServerOptions extends { https?: infer H } ? H : unknown;
  /** Client-certificate policies Node cannot enforce in the handshake: a reason to refuse, or undefined. */
  readonly checkClientCertificate?: (socket: TLSSocket) => string | undefined;
  /** Registers extra routes (the webhook receiver) on the app. */
  readonly plugins?: ReadonlyArray<(app: FastifyInstance) => void>;
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function buildApp(deps: AppDeps): FastifyInstance {
  const opts: Record<string, unknown> = {
    loggerInstance: deps.log.child({ component: 'http' }),
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    return503OnClosing: true,
  };
  if (deps.https) opts.https = deps.https;
  const app = Fastify(opts as FastifyServerOptions) as unknown as FastifyInstance;

  if (deps.checkClientCertificate) {
    const check = deps.checkClientCertificate;
    app.addHook('onRequest', async (req, reply) => {
      const reason = check(req.raw.socket as TLSSocket);
      if (reason !== undefined) return reply.code(403).type('text/plain').send(`Forbidden: ${reason}\n`);
    });
  }

  if (deps.authorize) {
    const authorize = deps.authorize;
    app.addHook('onRequest', async (req, reply) => {
      // Health endpoints stay open for orchestrators; webhooks carry their own token.
      if (req.url === '/-/healthy' || req.url.startsWith('/webhooks/')) return;
      if (!(await authorize(req.headers.authorization))) {
        return reply.code(401).header('www-authenticate', 'Basic realm="cbwatch"').send('Unauthorized\n');
      }
    });
  }

  app.get('/metrics', async (req, reply) => {
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = await deps.exposition.body(gzip);
    void reply.header('content-type', METRICS_CONTENT_TYPE).header('content-length', body.length);
    if (gzip) void reply.header('content-encoding', 'gzip').header('vary', 'accept-encoding');
    // The memoised buffers are written as they are, never joined (see Exposition).
    return reply.send(Readable.from(body.chunks, { objectMode: false }));
  });

  app.get('/-/healthy', async (_req, reply) => reply.type('text/plain').send('Healthy\n'));

  app.get('/-/ready', async (_req, reply) => {
    if (deps.store.allPolledOnce()) return reply.type('text/plain').send('Ready\n');
    return reply.code(503).type('text/plain').send('Not ready: waiting for the first poll of every collector\n');
  });

  app.get('/', async (_req, reply) =>
    reply.type('text/html; charset=utf-8').send(
      landingPage({
        version: packageVersion(),
        statuses: deps.store.statusList(),
        clusters: deps.config.clusters.map((c) => ({ name: c.name, url: c.url })),
        webhooks: deps.config.webhooks.syncGateway?.enabled === true,
        now: Date.now(),
      }),
    ),
  );

  for (const p of deps.plugins ?? []) p(app);
  return app;
}
