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
