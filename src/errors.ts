/**
 * One error base class with stable codes. Match on `code`, never on message text.
 * Messages carry method, URL (credentials stripped) and status, never a secret.
 */
import { processRedactor, safeExcerpt } from './redact.js';
import type { Redactor } from './redact.js';

/**
 * The longest message an error carries (its `message`, `brief` and the head of its `stack`): a log record of
 * an error holds it about three times, so a record stays under a few KB whatever an upstream answer held.
 */
export const MAX_MESSAGE_LENGTH = 1000;
/** The longest URL kept on a request error (a path holds upstream names: buckets, nodes, replications). */
export const MAX_URL_LENGTH = 400;

/**
 * Text for an error message that may hold upstream-derived parts: redacted (the process's secrets and
 * credential-looking values), on one line, and bounded (see `safeExcerpt`).
 */
export function boundedText(text: string, max = MAX_MESSAGE_LENGTH, redactor: Redactor = processRedactor): string {
  return safeExcerpt(text, redactor, max);
}

/** Text whose upstream parts have already passed the redactor, on one line and bounded (cbwatch's own words are
 * not redacted again: a password that is an ordinary word, `password`, would blank them). */
function oneLine(text: string, max = MAX_MESSAGE_LENGTH): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 3)}...` : t;
}

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
  /**
   * @param options.redacted the message's upstream parts have passed the redactor already (a request error
   *   redacts its URL and detail itself): it is only bounded.
   */
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; redacted?: boolean }) {
    // Every message may quote upstream text (a URL with a bucket's name, a JSON key, a body excerpt): it is
    // redacted and bounded here, once, before it can reach a log, `cbwatch check` or a page. Configuration
    // errors are the exception: cbwatch's own multi-line report of the user's file.
    const text = code === 'CBW_ERR_CONFIG' ? message : options?.redacted === true ? oneLine(message) : boundedText(message);
    super(text, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
    this.brief = text;
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
    options?: { cause?: unknown; ownDetail?: boolean },
  ) {
    const st = status === undefined ? '' : ` ${status}`;
    const bounded = { ...request, url: boundedText(request.url, MAX_URL_LENGTH) };
    // `ownDetail`: the detail is cbwatch's own words, or its upstream parts are redacted already.
    const text = options?.ownDetail === true ? detail : boundedText(detail);
    super(code, `${request.method} ${bounded.url}:${st} ${text}`.replace(/:\s+$/, ''), { cause: options?.cause, redacted: true });
    this.request = bounded;
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
    super(code, request, detail, status, { ...options, ownDetail: true });
    this.brief = `${request.method} ${this.request.url}: ${status} ${status === 404 ? 'not found' : 'unexpected status'}`;
  }
}

export class AuthError extends RequestError {
  constructor(request: RequestDescription) {
    super('CBW_ERR_AUTH', request, 'authentication failed: check the username and password', 401, { ownDetail: true });
  }
}

export class ForbiddenError extends RequestError {
  /** The `permissions` array of Couchbase's 403 body: what the user lacks. */
  readonly permissions: readonly string[];
  constructor(request: RequestDescription, permissions: readonly string[]) {
    // The body's list, as far as a message can hold it: a few names, each bounded, and a count of the rest.
    const shown = permissions.slice(0, MAX_PERMISSIONS).map((p) => boundedText(p, 120));
    const more = permissions.length > shown.length ? ` (and ${permissions.length - shown.length} more)` : '';
    const which = shown.length > 0 ? `missing permission ${shown.join(' or ')}${more}` : 'insufficient privileges';
    super('CBW_ERR_FORBIDDEN', request, `forbidden (403): ${which}`, 403, { ownDetail: true });
    this.permissions = shown;
  }
}

export class TimeoutError extends RequestError {
  constructor(request: RequestDescription, phase: string, options?: { cause?: unknown }) {
    super('CBW_ERR_TIMEOUT', request, `timed out (${phase})`, undefined, { ...options, ownDetail: true });
  }
}

export class NetworkError extends RequestError {
  constructor(request: RequestDescription, detail: string, options?: { cause?: unknown }) {
    super('CBW_ERR_NETWORK', request, `network error: ${detail}`, undefined, options);
  }
}

export class AbortedError extends RequestError {
  constructor(request: RequestDescription, options?: { cause?: unknown }) {
    super('CBW_ERR_ABORTED', request, 'aborted (poll deadline reached or shutting down)', undefined, { ...options, ownDetail: true });
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
      undefined,
      { ownDetail: true },
    );
  }
}

/** The process-wide budget for buffered answers is spent: this answer would push it past its cap. */
export class BudgetError extends RequestError {
  constructor(request: RequestDescription, budget: number) {
    super('CBW_ERR_BUDGET', request, `answer dropped: buffered answers would exceed the process-wide ${budget}-byte budget`, undefined, { ownDetail: true });
  }
}

/** Permissions named by a ForbiddenError (Couchbase names one or two). */
const MAX_PERMISSIONS = 5;

/** The shape of a schema issue this module reads (zod's issues have it). */
export interface SchemaIssue {
  readonly path: ReadonlyArray<PropertyKey>;
  readonly message: string;
}

/** Issues a summary names; the rest are counted. */
export const MAX_SUMMARY_ISSUES = 3;
/** Path segments a summary shows of one issue (the first ones and the last ones). */
const MAX_PATH_SEGMENTS = 8;
/** Characters a summary shows of one key of a path. */
const MAX_KEY_LENGTH = 40;

/**
 * A schema failure as text that is safe to keep and to show: the first few issues with their paths and a
 * count of the rest, in bounded bytes, every key of a path (they come from the answer's JSON keys) and every
 * message passed through the redactor. A zod error is never kept or logged itself: it holds every issue (a
 * 500 KB answer of `[1,1,…]` makes 250,000 of them) and its message is all of them as JSON.
 *
 * With `{ public: true }` (the landing page), a key that is not a plain identifier shows as `…`.
 */
export function summariseIssues(
  issues: readonly SchemaIssue[],
  opts: { readonly redactor?: Redactor; readonly public?: boolean; readonly total?: number } = {},
): string {
  const redactor = opts.redactor ?? processRedactor;
  const total = opts.total ?? issues.length;
  if (issues.length === 0) return 'does not match';
  const parts = issues.slice(0, MAX_SUMMARY_ISSUES).map((i) => `${issuePath(i.path, redactor, opts.public === true)}: ${safeExcerpt(i.message, redactor, 120)}`);
  const more = total - parts.length;
  return `${parts.join('; ')}${more > 0 ? ` (and ${more} more issue${more === 1 ? '' : 's'})` : ''}`;
}

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

function issuePath(path: ReadonlyArray<PropertyKey>, redactor: Redactor, isPublic: boolean): string {
  if (path.length === 0) return '(root)';
  const seg = (k: PropertyKey): string => {
    if (typeof k === 'number') return `[${k}]`;
    const key = typeof k === 'symbol' ? String(k.description) : k;
    const shown = safeExcerpt(key, redactor, MAX_KEY_LENGTH);
    if (isPublic && !(IDENTIFIER.test(key) && shown === key)) return '.…';
    return IDENTIFIER.test(shown) ? `.${shown}` : `[${JSON.stringify(shown)}]`;
  };
  const segs = path.length <= MAX_PATH_SEGMENTS ? path.map(seg) : [...path.slice(0, 5).map(seg), '…', ...path.slice(-2).map(seg)];
  return segs.join('').replace(/^\./, '');
}

export class SchemaError extends RequestError {
  /** How many issues the answer had (the message names the first few). */
  readonly issueCount: number;
  /**
   * @param detail cbwatch's own words, or a summary made by `summariseIssues`; never a zod error, whose
   *   issues must not be kept (pass `issues` instead).
   */
  constructor(
    request: RequestDescription,
    detail: string,
    status?: number,
    options?: { readonly issues?: readonly SchemaIssue[]; readonly redactor?: Redactor },
  ) {
    const issues = options?.issues;
    const text = issues === undefined ? detail : summariseIssues(issues, options?.redactor ? { redactor: options.redactor } : {});
    // The summary's keys and messages are redacted; any other detail is cbwatch's own words.
    super('CBW_ERR_SCHEMA', request, `unexpected response: ${text}`, status, { ownDetail: true });
    this.issueCount = issues?.length ?? 0;
    if (issues !== undefined) {
      const st = status === undefined ? '' : ` ${status}`;
      this.brief = oneLine(`${request.method} ${this.request.url}:${st} unexpected response: ${summariseIssues(issues, { public: true, ...(options?.redactor ? { redactor: options.redactor } : {}) })}`);
    }
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
  // Other errors are cbwatch's own words (a collector's check) or a runtime error, which can quote a value:
  // redacted and bounded all the same.
  return boundedText(err instanceof Error ? err.message : String(err));
}
