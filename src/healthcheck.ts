/**
 * `cbwatch healthcheck`: ask a running cbwatch whether it is alive (GET /-/healthy), reading the same flags,
 * environment and web config as `run` so it finds the daemon wherever it listens: another address or port,
 * TLS, basic auth. Exit 0 when it answers 200, 1 otherwise. Meant for Docker's HEALTHCHECK (the slim image
 * has no curl) and other supervisors; it needs no Couchbase and never polls one.
 *
 * - The address: the listen address, with a wildcard host (0.0.0.0, ::, or none) replaced by the loopback.
 * - TLS: the server's certificate names the host clients use, not the loopback, so it is not verified here
 *   (the check is of our own process on this machine, not of the network path).
 * - Basic auth: /-/healthy is exempt (as in the exporter-toolkit), so no password is needed.
 * - Client certificates: when the web config requires one, the server's own certificate and key are
 *   presented. That passes RequireAnyClientCert, and RequireAndVerifyClientCert when the client CA also
 *   signed the server certificate; otherwise the check fails and says why.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Config } from './config/types.js';

export interface HealthcheckTarget {
  readonly url: string;
  /** For https: what the client presents and accepts. Key material inside: never print this object. */
  readonly tls?: { readonly rejectUnauthorized: false; readonly cert?: Buffer; readonly key?: Buffer };
}

/** Where the daemon configured by `config` answers, as seen from this machine. */
export function healthcheckTarget(config: Config): HealthcheckTarget {
  const { listenHost, listenPort, settings } = config.web;
  let host = listenHost;
  if (host === '' || host === '0.0.0.0') host = '127.0.0.1';
  else if (host === '::' || host === '[::]') host = '::1';
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const tls = settings?.tls;
  if (tls === undefined) return { url: `http://${hostPart}:${listenPort}/-/healthy` };
  const needsCert = tls.clientAuthType === 'RequireAnyClientCert' || tls.clientAuthType === 'RequireAndVerifyClientCert';
  return {
    url: `https://${hostPart}:${listenPort}/-/healthy`,
    tls: { rejectUnauthorized: false, ...(needsCert ? { cert: tls.cert, key: tls.key } : {}) },
  };
}

export interface HealthcheckResult {
  readonly ok: boolean;
  /** One line for the user: the URL and the status, or why it failed (never key material). */
  readonly message: string;
}

export function probe(target: HealthcheckTarget, timeoutMs = 5000): Promise<HealthcheckResult> {
  return new Promise((resolve) => {
    const url = new URL(target.url);
    const options = {
      method: 'GET',
      headers: { 'user-agent': 'cbwatch-healthcheck' },
      signal: AbortSignal.timeout(timeoutMs),
      ...(target.tls ?? {}),
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, (res) => {
      res.resume();
      res.on('end', () => {
        const ok = res.statusCode === 200;
        resolve({ ok, message: `${target.url}: ${res.statusCode ?? '?'}${ok ? ' healthy' : ' not healthy'}` });
      });
      res.on('error', (err) => resolve({ ok: false, message: `${target.url}: ${err.message}` }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const why = err.name === 'AbortError' || err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (err.code ?? err.message);
      resolve({ ok: false, message: `${target.url}: ${why}` });
    });
    req.end();
  });
}
