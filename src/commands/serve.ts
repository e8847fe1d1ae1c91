/**
 * The daemon behind `run` and `demo`, started with its web config (`--web.config.file`: TLS, basic auth, rate
 * limit, headers), and what a reload of that web config can change while it runs.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { TLSSocket } from 'node:tls';
import type { Config } from '../config/types.js';
import { httpsOptions, loadWebConfig, webConfigToServerOptions } from '../config/webconfig.js';
import type { WebSettings } from '../config/webconfig.js';
import { startDaemon } from '../daemon.js';
import type { Daemon } from '../daemon.js';

export async function startWithWebConfig(config: Config, log: Logger, plugins: ReadonlyArray<(app: FastifyInstance) => void> = []): Promise<Daemon> {
  return (await startServing(config, log, plugins)).daemon;
}

/**
 * Start the daemon with the web config, and return how to apply a reloaded one: basic auth users, the TLS
 * certificate and key (and client CA, ciphers) and the per-request client-certificate rules follow at once;
 * turning TLS on or off, the handshake's client_auth_type, rate_limit, headers and http2 need a restart (named
 * in the returned list).
 */
export async function startServing(
  config: Config,
  log: Logger,
  plugins: ReadonlyArray<(app: FastifyInstance) => void>,
): Promise<{ daemon: Daemon; applyWeb: (next: WebSettings | undefined) => string[] }> {
  if (!config.web.configFile) return { daemon: await startDaemon({ config, logger: log, plugins }), applyWeb: () => [] };
  // loadConfig validated the web config file already; its settings hold the TLS key: never log them.
  let settings = config.web.settings ?? loadWebConfig(config.web.configFile);
  let server = webConfigToServerOptions(settings);
  const daemon = await startDaemon({
    config,
    logger: log,
    plugins,
    // Indirections, so that a reload can change the users and the certificate rules of a running server.
    authorize: (header, client) => (server.authorize ? server.authorize(header, client) : Promise.resolve(true)),
    ...(server.https ? { https: server.https } : {}),
    ...(server.https ? { checkClientCertificate: (socket: TLSSocket) => server.checkClientCertificate?.(socket) } : {}),
    ...(server.rateLimit ? { rateLimit: server.rateLimit } : {}),
    ...(server.headers ? { headers: server.headers } : {}),
    ...(server.http2 !== undefined ? { http2: server.http2 } : {}),
  });
  const applyWeb = (next: WebSettings | undefined): string[] => {
    if (next === undefined) return ['web.config.file'];
    const restart: string[] = [];
    const was = settings;
    if ((was.tls === undefined) !== (next.tls === undefined)) restart.push('tls_server_config (TLS on or off)');
    else if (was.tls && next.tls) {
      if (was.tls.clientAuthType !== next.tls.clientAuthType) restart.push('tls_server_config.client_auth_type (in the handshake)');
      // The certificate, key, client CA and ciphers of new handshakes; connections open keep theirs.
      const { requestCert: _r, rejectUnauthorized: _u, ...context } = httpsOptions(next.tls);
      (daemon.app.server as unknown as { setSecureContext(o: object): void }).setSecureContext(context);
    }
    if (JSON.stringify(was.rateLimit) !== JSON.stringify(next.rateLimit)) restart.push('rate_limit');
    if (JSON.stringify(was.headers) !== JSON.stringify(next.headers)) restart.push('http_server_config.headers');
    if (was.http2 !== next.http2) restart.push('http_server_config.http2');
    settings = next;
    server = webConfigToServerOptions(next);
    return restart;
  };
  return { daemon, applyWeb };
}
