/**
 * The collector interface: `{ name, defaultInterval, families, role, collect(ctx) }`.
 * A collector knows nothing of fastify, the scheduler or the renderer. It fetches through `ctx.client`,
 * maps payloads with pure functions, and adds samples to `ctx.out`.
 */
import type { Log } from '../log-core.js';
import type { CollectorName } from '../config/schema.js';
import type { ClusterConfig, ResolvedCollectorOptions } from '../config/types.js';
import type { CouchbaseClient } from '../couchbase/client.js';
import type { SharedCache } from '../couchbase/source.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';

export interface CollectContext<N extends CollectorName = CollectorName> {
  readonly cluster: ClusterConfig;
  readonly options: ResolvedCollectorOptions<N>;
  /** Scoped to this poll: carries its abort signal and records each request for `cbwatch check`. */
  readonly client: CouchbaseClient;
  readonly signal: AbortSignal;
  readonly log: Log;
  /** Wall clock, epoch ms (injectable for tests). */
  readonly now: () => number;
  /**
   * When the poll's deadline falls, on the monotonic clock of `performance.now()` (ms): what a request that a
   * server may hold (the range API's `timeout`) is sized from. Absent in contexts made outside runPoll.
   */
  readonly deadline?: number;
  readonly out: SampleSet;
  /** Survives between polls of this (cluster, collector): last sample timestamps, cancelled query ids… */
  readonly state: Map<string, unknown>;
  /** Per cluster, shared between collectors: one fetch serves several (e.g. the tasks list). */
  readonly shared: SharedCache;
  /** Count an item that was skipped because it did not parse or made no sense (logged at debug by the caller). */
  skipped(reason: string, detail?: string): void;
  /**
   * One item of the poll (a bucket, a replication, one stat, a node, an index…) failed: its request or answer
   * was bad. The caller emits none of that item's series and carries on with the others; the failure is counted
   * in `cbwatch_collector_item_errors_total{reason}` (reason from `itemErrorReason(err)`) and logged at debug.
   * A collector fails the whole poll only when its list request fails or every item failed. `count` (default 1)
   * reports that many items failing alike under one description (the rest of a list's invalid entries).
   */
  itemFailed(item: string, err: unknown, count?: number): void;
  /** This collector does not apply to the cluster (e.g. no Search service): success, no series. */
  notApplicable(reason: string): void;
  /** A line about how this poll was made (e.g. the statistics source), for `cbwatch check` and the landing page. */
  note?(text: string): void;
}

export type { SharedCache };

/** Counts an item that was skipped (see `CollectContext.skipped`); what pure mappers take instead of a context. */
export type Skip = (reason: string, detail?: string) => void;

export interface Collector<N extends CollectorName = CollectorName> {
  readonly name: N;
  /** ms */
  readonly defaultInterval: number;
  readonly families: readonly FamilyDef[];
  /** The least Couchbase RBAC role that lets this collector read everything it needs. */
  readonly role: string;
  /** One line for docs and the landing page. */
  readonly description: string;
  collect(ctx: CollectContext<N>): Promise<void>;
}
