/**
 * What the statistics sources need of a poll: the client and shared cache, the poll's signal, clock, deadline and
 * log, the collector's state and options they read, and where they report what they skipped, what failed, what a
 * cap left out and which nodes were missing. Declared here, by the sources that use it: a collector's context
 * satisfies it structurally, and src/stats imports nothing from src/collectors.
 */
import type { ClusterConfig } from '../config/types.js';
import type { ClusterSource } from '../couchbase/source.js';
import type { Log } from '../log-core.js';
import type { CapWhat, DropReason, StatsGaps } from '../metrics/family.js';

/** The options every source reads: the poll interval and deadline, ms. */
export interface StatsOptions {
  readonly interval: number;
  readonly timeout: number;
}

export interface StatsContext<O extends StatsOptions = StatsOptions> extends ClusterSource {
  readonly cluster: Pick<ClusterConfig, 'statsSource' | 'requestTimeout' | 'concurrency'>;
  readonly options: O;
  readonly signal: AbortSignal;
  readonly log: Log;
  /** Wall clock, epoch ms. */
  readonly now: () => number;
  /** The poll's deadline on the clock of `performance.now()` (ms), when the poll has one. */
  readonly deadline?: number;
  /** Caps, refused points and the range source's node gaps, counted on the poll's sample set. */
  readonly out: { countCap(what: CapWhat, n?: number): void; countDropped?(reason: DropReason, n?: number): void; statsGaps: StatsGaps | undefined };
  /** Survives between polls of this (cluster, collector): the sources' memos. */
  readonly state: Map<string, unknown>;
  skipped(reason: string, detail?: string): void;
  itemFailed(item: string, err: unknown, count?: number): void;
  note?(text: string): void;
}
