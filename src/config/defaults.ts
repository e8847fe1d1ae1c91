/** Defaults for every collector and cluster, applied after the file, environment and flags are merged. */
import { collectorSchemas } from './schema.js';
import type { CollectorName, CollectorOptions } from './schema.js';
import type { ClusterConfig, ResolvedCollectorOptions, ResolvedCollectors } from './types.js';

/** Couchbase answers buffered at once, process-wide (--couchbase.max-buffered-bytes). */
export const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
/** JSON values in one answer (--couchbase.max-answer-values); as DEFAULT_MAX_ANSWER_VALUES in src/couchbase/answer-values.ts (test/couchbase/answer-values.test.ts checks they agree). */
export const DEFAULT_MAX_ANSWER_VALUES = 4_000_000;

/** Default poll intervals (DESIGN.md "Collectors"), ms. */
export const DEFAULT_INTERVALS: Readonly<Record<CollectorName, number>> = {
  buckets: 30_000,
  bucket_stats: 30_000,
  xdcr: 30_000,
  nodes: 30_000,
  tasks: 15_000,
  autofailover: 60_000,
  certificates: 300_000,
  security: 300_000,
  collections: 300_000,
  search: 15_000,
  backup: 300_000,
  index: 30_000,
  eventing: 30_000,
};

export function resolveCollectorOptions<N extends CollectorName>(
  name: N,
  raw: CollectorOptions<N> | undefined,
): ResolvedCollectorOptions<N> {
  const parsed = (raw ?? collectorSchemas[name].parse({})) as CollectorOptions<N>;
  const interval = parsed.interval ?? DEFAULT_INTERVALS[name];
  // A poll may use most of its interval but must finish before the next one is due.
  const timeout = parsed.timeout ?? Math.max(1000, Math.min(interval - 500, 120_000));
  // A scheduled collector keeps the default interval's deadline unless given one; its slots are at least a minute
  // apart, and a poll still running at a slot skips it (src/scheduler/index.ts), so its deadline is not clamped.
  if (parsed.schedule !== undefined) return { ...parsed, interval, timeout } as ResolvedCollectorOptions<N>;
  return { ...parsed, interval, timeout: Math.min(timeout, interval) } as ResolvedCollectorOptions<N>;
}

export function resolveCollectors(raw: { [K in CollectorName]?: CollectorOptions<K> | undefined } = {}): ResolvedCollectors {
  const out: Partial<Record<CollectorName, unknown>> = {};
  for (const name of Object.keys(DEFAULT_INTERVALS) as CollectorName[]) out[name] = resolveCollectorOptions(name, raw[name] as never);
  return out as ResolvedCollectors;
}

/** A cluster with every default, for tests and the demo. */
export function defaultClusterConfig(overrides: Partial<ClusterConfig> & { url: string }): ClusterConfig {
  return {
    name: 'test',
    username: 'Administrator',
    password: 'password',
    tls: { insecureSkipVerify: false },
    searchUrl: undefined,
    backupUrl: undefined,
    concurrency: 8,
    connectTimeout: 5000,
    requestTimeout: 10_000,
    maxResponseBytes: 64 * 1024 * 1024,
    collectors: resolveCollectors(),
    ...overrides,
  };
}

/**
 * Clusters one process should carry: past it, `cbwatch run` logs a warning (and `--config.check` says so) with the
 * advice to shard (`--shard i/n`). Each cluster costs about 1 MB of resident memory (0.8–1.0 MB settled, peaks about
 * 1.7 times the settled figure) and its share of a core at the default intervals: 250 small clusters fit the shipped
 * unit's MemoryMax=640M. bench/RESULTS.md, "Chaos, third round: clusters per process" (issue 39, item 5).
 */
export const CLUSTERS_PER_PROCESS = 250;
