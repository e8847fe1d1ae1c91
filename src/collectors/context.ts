/** Builds the context of one poll and runs a collector: used by the scheduler, `cbwatch check` and tests. */
import { setMaxListeners } from 'node:events';
import { SILENT_LOG } from '../log-core.js';
import type { Log } from '../log-core.js';
import type { CollectorName } from '../config/schema.js';
import type { ClusterConfig, ResolvedCollectorOptions } from '../config/types.js';
import type { CouchbaseClient, RequestRecord } from '../couchbase/client.js';
import { boundedText, CbwError, describeError } from '../errors.js';
import { SampleSet } from '../metrics/family.js';
import type { PollResult } from '../metrics/store.js';
import { createSharedCache } from './shared.js';
import type { CollectContext, Collector, SharedCache } from './types.js';

/** A poll's outcome as the scheduler and `cbwatch check` see it: the store's record, with each request's record. */
export interface PollOutcome extends PollResult {
  readonly requests: RequestRecord[];
}

export interface PollInput<N extends CollectorName> {
  readonly collector: Collector<N>;
  readonly cluster: ClusterConfig;
  readonly options: ResolvedCollectorOptions<N>;
  readonly client: CouchbaseClient;
  readonly state?: Map<string, unknown>;
  readonly shared?: SharedCache;
  readonly log?: Log;
  readonly now?: () => number;
  /** Outer signal (shutdown); the poll adds its own deadline of `options.timeout`. */
  readonly signal?: AbortSignal;
}

const silent = SILENT_LOG;

/**
 * The poll's deadline passed before the collector finished (rather than a DOMException with code 23): names
 * the endpoints it was still waiting for.
 */
export class PollTimeoutError extends CbwError {
  readonly endpoints: readonly string[];
  constructor(collector: string, timeoutMs: number, endpoints: readonly string[]) {
    const waiting = endpoints.length === 0 ? '' : `; waiting for ${endpoints.slice(0, 5).join(', ')}${endpoints.length > 5 ? ` and ${endpoints.length - 5} more` : ''}`;
    super('CBW_ERR_TIMEOUT', `collector ${collector}: poll deadline of ${timeoutMs / 1000}s reached${waiting}`);
    this.endpoints = endpoints;
  }
}

export async function runPoll<N extends CollectorName>(input: PollInput<N>): Promise<PollOutcome> {
  const now = input.now ?? Date.now;
  const deadlineAt = performance.now() + input.options.timeout;
  const deadline = AbortSignal.timeout(input.options.timeout);
  const signal = input.signal ? AbortSignal.any([input.signal, deadline]) : deadline;
  // Every request of the poll listens on this signal (hundreds at once for XDCR): not a leak.
  setMaxListeners(0, signal);
  const requests: RequestRecord[] = [];
  // Endpoints asked and not yet answered: what a poll that hits its deadline was waiting for.
  const pending = new Map<string, number>();
  const skipped = new Map<string, number>();
  const itemErrors = new Map<string, number>();
  let notApplicable: string | undefined;
  let note: string | undefined;
  const log = input.log ?? silent;
  const set = new SampleSet({ maxLabelValueLength: input.cluster.maxLabelValueLength });
  // Requests of this poll not yet settled, queued for a slot included.
  const outstanding = new Set<Promise<void>>();
  const ctx: CollectContext<N> = {
    cluster: input.cluster,
    options: input.options,
    client: tracked(outstanding, input.client.scoped({
      signal,
      // One lane per collector: a collector whose endpoint hangs holds at most its share of the slots.
      lane: input.collector.name,
      onStart: (e) => pending.set(e, (pending.get(e) ?? 0) + 1),
      onRequest: (r) => {
        requests.push(r);
        const n = (pending.get(r.endpoint) ?? 1) - 1;
        if (n <= 0) pending.delete(r.endpoint);
        else pending.set(r.endpoint, n);
      },
    })),
    signal,
    log,
    now,
    deadline: deadlineAt,
    out: set,
    state: input.state ?? new Map(),
    shared: input.shared ?? createSharedCache(now),
    // Item names and details come from the answer (a bucket's name, a JSON key): redacted and bounded.
    skipped(reason, detail) {
      skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
      if (log.isLevelEnabled('debug')) log.debug({ reason, detail: detail === undefined ? undefined : boundedText(detail, 300) }, 'skipped an item');
    },
    itemFailed(item, err, count = 1) {
      const reason = itemErrorReason(err);
      itemErrors.set(reason, (itemErrors.get(reason) ?? 0) + count);
      if (log.isLevelEnabled('debug')) {
        log.debug({ item: boundedText(item, 300), reason, err: describeError(err), ...(count > 1 ? { count } : {}) }, 'item failed; its series are left out of this poll');
      }
    },
    notApplicable(reason) {
      notApplicable = reason;
    },
    note(text) {
      note = text;
    },
  };
  const started = performance.now();
  let error: unknown;
  try {
    await raceAbort(input.collector.collect(ctx), signal);
  } catch (err) {
    error = err;
    // A collector that fails on one answer (a 401, say) while its other requests are out: the poll ends when
    // they do (and any they start meanwhile), within its deadline. Ending at once left them running after the
    // poll, on a client `check` then closed (they showed as `network`), and beside the next poll.
    while (error !== deadline.reason && outstanding.size > 0 && !signal.aborted) await raceAbort(Promise.all(outstanding), signal).catch(() => undefined);
  }
  if (error !== undefined && error === deadline.reason) error = new PollTimeoutError(input.collector.name, input.options.timeout, [...pending.keys()]);
  return {
    collector: input.collector.name,
    ok: error === undefined,
    set,
    error,
    durationSeconds: (performance.now() - started) / 1000,
    requests,
    skipped,
    itemErrors,
    notApplicable,
    note,
    finishedAt: now(),
  };
}

/** A view of `client` (and of every view made from it) that keeps each request in `outstanding` until it settles. */
function tracked(outstanding: Set<Promise<void>>, client: CouchbaseClient): CouchbaseClient {
  const track = <T>(p: Promise<T>): Promise<T> => {
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    outstanding.add(settled);
    void settled.then(() => outstanding.delete(settled));
    return p;
  };
  return {
    baseUrl: client.baseUrl,
    getJson: (route, params, schema, options) => track(client.getJson(route, params, schema, options)),
    requestJson: (route, params, schema, options) => track(client.requestJson(route, params, schema, options)),
    scoped: (scope) => tracked(outstanding, client.scoped(scope)),
    load: () => client.load(),
    close: () => client.close(),
    ...(client.setPassword ? { setPassword: (password: string | undefined) => client.setPassword?.(password) } : {}),
  };
}

/** A collector that ignores its signal still cannot hold the poll past the deadline. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** The `reason` label of `cbwatch_collector_item_errors_total` for an item's error (stable, bounded values). */
export function itemErrorReason(err: unknown): string {
  const e = err as { code?: unknown; status?: unknown } | undefined;
  const status = typeof e?.status === 'number' ? e.status : undefined;
  switch (e?.code) {
    case 'CBW_ERR_NOT_FOUND':
      return 'not_found';
    case 'CBW_ERR_FORBIDDEN':
    case 'CBW_ERR_AUTH':
      return 'forbidden';
    case 'CBW_ERR_TIMEOUT':
    case 'CBW_ERR_ABORTED':
      return 'timeout';
    case 'CBW_ERR_NETWORK':
      return 'network';
    case 'CBW_ERR_SCHEMA':
      return 'bad_body';
    case 'CBW_ERR_TOO_LARGE':
      return 'too_large';
    case 'CBW_ERR_HTTP':
      if (status !== undefined && status >= 500) return 'http_5xx';
      if (status !== undefined && status >= 400) return 'http_4xx';
      return 'other';
    default:
      return 'other';
  }
}
