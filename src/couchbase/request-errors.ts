/**
 * How a failed Couchbase request becomes a typed RequestError (from its status, its transport error or its
 * signal) and the `code` label its record carries. Error messages stay redacted: a body is only ever quoted
 * through safeExcerpt and the cluster's redactor.
 */
import { errors as undiciErrors } from './undici.js';
import { AbortedError, AuthError, ForbiddenError, HttpStatusError, NetworkError, RequestError, TimeoutError } from '../errors.js';
import type { RequestDescription } from '../errors.js';
import { safeExcerpt } from '../redact.js';
import type { Redactor } from '../redact.js';

/** What a refused answer tells: its status and its body (the client's RawResponse is one). */
export interface RefusedAnswer {
  readonly status: number;
  readonly text: string;
}

export function statusError(desc: RequestDescription, raw: RefusedAnswer, redactor: Redactor): RequestError {
  if (raw.status === 401) return new AuthError(desc);
  if (raw.status === 403) return new ForbiddenError(desc, permissionsOf(raw.text).map((p) => redactor.redact(p)));
  return new HttpStatusError(desc, raw.status, briefBody(raw.text, redactor));
}

/** The `permissions` array of a Couchbase 403 body, or [] when there is none. */
export function permissionsOf(text: string): string[] {
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object' && 'permissions' in body) {
      const p = (body as { permissions: unknown }).permissions;
      if (Array.isArray(p)) return p.filter((x): x is string => typeof x === 'string');
    }
  } catch {
    /* not JSON: no permissions to report */
  }
  return [];
}

/** A short, single-line, redacted excerpt of an error body (Couchbase puts the reason there). */
function briefBody(text: string, redactor: Redactor): string {
  const t = safeExcerpt(text, redactor);
  return t === '' ? 'unexpected status' : t;
}

/** The error for a request whose signal fired: the poll's deadline (a timeout) or a shutdown. */
export function abortError(desc: RequestDescription, signal: AbortSignal | undefined, cause: unknown): RequestError {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') return new TimeoutError(desc, 'poll deadline', { cause: cause ?? reason });
  return new AbortedError(desc, { cause: cause ?? reason });
}

export function transportError(desc: RequestDescription, err: unknown, signal: AbortSignal | undefined): RequestError {
  if (err instanceof RequestError) return err;
  const code = (err as { code?: string } | null)?.code;
  if (signal?.aborted) return abortError(desc, signal, err);
  if (err instanceof undiciErrors.ConnectTimeoutError || code === 'UND_ERR_CONNECT_TIMEOUT') return new TimeoutError(desc, 'connect', { cause: err });
  if (err instanceof undiciErrors.HeadersTimeoutError || code === 'UND_ERR_HEADERS_TIMEOUT') return new TimeoutError(desc, 'headers', { cause: err });
  if (err instanceof undiciErrors.BodyTimeoutError || code === 'UND_ERR_BODY_TIMEOUT') return new TimeoutError(desc, 'body', { cause: err });
  const msg = (err as { message?: string } | null)?.message ?? String(err);
  if (desc.url.startsWith('https:') && speaksPlainHttp(code, msg)) return new NetworkError(desc, `${code ?? 'EPROTO'} ${PLAIN_PORT_HINT}`, { cause: err });
  return new NetworkError(desc, code ? `${code}` : msg.slice(0, 120), { cause: err });
}

/** What an https:// URL to a port that answers in plain HTTP gets: the TLS handshake reads an HTTP answer. */
export const PLAIN_PORT_HINT =
  '(the port answered without TLS: Couchbase serves plain HTTP on 8091 and TLS on 18091; use https://HOST:18091, or http://HOST:8091)';

function speaksPlainHttp(code: string | undefined, message: string): boolean {
  return code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number/i.test(message) || (code === 'EPROTO' && /ssl|tls/i.test(message));
}

export function codeOf(err: RequestError | undefined): string {
  switch (err?.code) {
    case 'CBW_ERR_TIMEOUT':
      return 'timeout';
    case 'CBW_ERR_ABORTED':
      return 'aborted';
    case 'CBW_ERR_TOO_LARGE':
      return 'too_large';
    case 'CBW_ERR_BUDGET':
      return 'over_budget';
    default:
      return 'network';
  }
}
