/**
 * One error base class with stable codes. Match on `code`, never on message text.
 * Messages carry method, URL (credentials stripped) and status, never a secret.
 */
import { redact } from './redact.js';

export type ErrorCode =
  | 'CBW_ERR_HTTP'
  | 'CBW_ERR_TIMEOUT'
  | 'CBW_ERR_NETWORK'
  | 'CBW_ERR_AUTH'
  | 'CBW_ERR_FORBIDDEN'
  | 'CBW_ERR_NOT_FOUND'
  | 'CBW_ERR_SCHEMA'
  | 'CBW_ERR_TOO_LARGE'
  | 'CBW_ERR_BUDGET'
  | 'CBW_ERR_ABORTED'
  | 'CBW_ERR_CONFIG';

export class CbwError extends Error {
  readonly code: ErrorCode;
  /** The message without any text quoted from an upstream answer: what a public page may show. */
  brief: string;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
    this.brief = message;
  }
}

export interface RequestDescription {
  readonly method: string;
  /** URL with any userinfo removed. */
  readonly url: string;
  /** Route template, e.g. `/pools/default/buckets/{bucket}/stats`. */
  readonly endpoint: string;
}

/** Base for every failure of a request to Couchbase. */
export class RequestError extends CbwError {
  readonly request: RequestDescription;
  readonly status: number | undefined;
  constructor(
    code: ErrorCode,
    request: RequestDescription,
    detail: string,
    status?: number,
    options?: { cause?: unknown },
  ) {
    const st = status === undefined ? '' : ` ${status}`;
    super(code, `${request.method} ${request.url}:${st} ${detail}`.replace(/:\s+$/, ''), options);
    this.request = request;
    this.status = status;
  }
}

export class HttpStatusError extends RequestError {
  /**
   * @param detail an excerpt of the answer's body, which must already have passed the redactor
   *   (src/redact.ts): it is shown in logs and by `cbwatch check`, never on the landing page (see `brief`).
   */
  constructor(request: RequestDescription, status: number, detail = 'unexpected status', options?: { cause?: unknown }) {
    const code: ErrorCode = status === 404 ? 'CBW_ERR_NOT_FOUND' : 'CBW_ERR_HTTP';
    super(code, request, detail, status, options);
    this.brief = `${request.method} ${request.url}: ${status} ${status === 404 ? 'not found' : 'unexpected status'}`;
  }
}

export class AuthError extends RequestError {
  constructor(request: RequestDescription) {
    super('CBW_ERR_AUTH', request, 'authentication failed: check the username and password', 401);
  }
}

export class ForbiddenError extends RequestError {
  /** The `permissions` array of Couchbase's 403 body: what the user lacks. */
  readonly permissions: readonly string[];
  constructor(request: RequestDescription, permissions: readonly string[]) {
    const which = permissions.length > 0 ? `missing permission ${permissions.join(' or ')}` : 'insufficient privileges';
    super('CBW_ERR_FORBIDDEN', request, `forbidden (403): ${which}`, 403);
    this.permissions = permissions;
  }
}

export class TimeoutError extends RequestError {
  constructor(request: RequestDescription, phase: string, options?: { cause?: unknown }) {
    super('CBW_ERR_TIMEOUT', request, `timed out (${phase})`, undefined, options);
  }
}

export class NetworkError extends RequestError {
  constructor(request: RequestDescription, detail: string, options?: { cause?: unknown }) {
    super('CBW_ERR_NETWORK', request, `network error: ${detail}`, undefined, options);
  }
}

export class AbortedError extends RequestError {
  constructor(request: RequestDescription, options?: { cause?: unknown }) {
    super('CBW_ERR_ABORTED', request, 'aborted (poll deadline reached or shutting down)', undefined, options);
  }
}

export class TooLargeError extends RequestError {
  /** `values`: the answer holds more JSON values than --couchbase.max-answer-values (read stopped there). */
  constructor(request: RequestDescription, limit: number, unit: 'bytes' | 'values' = 'bytes') {
    super(
      'CBW_ERR_TOO_LARGE',
      request,
      unit === 'bytes'
        ? `response body larger than the ${limit}-byte cap`
        : `response body holds more than ${limit} JSON values (the --couchbase.max-answer-values cap); not read further`,
    );
  }
}

/** The process-wide budget for buffered answers is spent: this answer would push it past its cap. */
export class BudgetError extends RequestError {
  constructor(request: RequestDescription, budget: number) {
    super('CBW_ERR_BUDGET', request, `answer dropped: buffered answers would exceed the process-wide ${budget}-byte budget`);
  }
}

export class SchemaError extends RequestError {
  constructor(request: RequestDescription, detail: string, status?: number, options?: { cause?: unknown }) {
    super('CBW_ERR_SCHEMA', request, `unexpected response: ${detail}`, status, options);
  }
}

export class ConfigError extends CbwError {
  constructor(message: string) {
    super('CBW_ERR_CONFIG', message);
  }
}

export function isCbwError(err: unknown): err is CbwError {
  return err instanceof CbwError;
}

/**
 * Short text for logs and `cbwatch check` (upstream excerpts in it are redacted). With `{ public: true }`,
 * for the landing page: the code and the reason, no upstream text at all.
 */
export function describeError(err: unknown, opts: { public?: boolean } = {}): string {
  if (err instanceof CbwError) return opts.public === true ? `${err.code}: ${err.brief}` : err.message;
  // Other errors are cbwatch's own words (a collector's check), passed through the redactor all the same.
  if (err instanceof Error) return opts.public === true ? redact(err.message) : err.message;
  return opts.public === true ? redact(String(err)) : String(err);
}
