/** Messages between the daemon's HTTP thread and the collection worker. */
import type { ClusterConfig } from '../config/types.js';
import type { SnapshotUpdate } from './parts.js';

export interface WorkerInit {
  readonly clusters: readonly ClusterConfig[];
  /** Registered collector names to run (src/collectors/index.ts). */
  readonly collectors: readonly string[];
  readonly logLevel: string;
  /** The process-wide answer budget (`--couchbase.max-buffered-bytes`): per thread, so set again here. */
  readonly maxBufferedBytes?: number;
  /** The per-answer value cap (`--couchbase.max-answer-values`), module state too. */
  readonly maxAnswerValues?: number;
  /** `--collection.gc-every`: a collection of this thread's heap every this many bytes of answers read; 0: none; absent: the default (8 MiB). */
  readonly gcEveryAnswerBytes?: number;
  /** The collection thread's nice value (Linux; default WORKER_NICE, 0: leave it). */
  readonly nice?: number;
  /** Secrets besides the clusters' credentials (webhook token, web password hashes) for this thread's redactor. */
  readonly secrets?: readonly string[];
  /**
   * Extra collector modules (file paths of plain .js/.mjs files exporting `collector` and `options`), for
   * tests that need a collector with behaviour of their own inside the worker.
   */
  readonly extraModules?: readonly string[];
  /** Handed to the extra modules as they like (e.g. a SharedArrayBuffer to synchronise with the test). */
  readonly extraData?: unknown;
}

export type ToWorker =
  | { readonly t: 'pollAll'; readonly id: number }
  | { readonly t: 'reconfigure'; readonly id: number; readonly clusters: readonly ClusterConfig[]; readonly secrets?: readonly string[] }
  | { readonly t: 'stop' };

export type FromWorker =
  | { readonly t: 'update'; readonly update: SnapshotUpdate }
  | { readonly t: 'log'; readonly line: string }
  | { readonly t: 'polled'; readonly id: number; readonly error?: string }
  | { readonly t: 'stopped' };

/**
 * How much lower the collection thread's CPU priority is than the HTTP thread's (a nice value: +5 gives it about
 * a third of the HTTP thread's share when both are runnable on one core, and all of an idle core).
 */
export const WORKER_NICE = 5;
