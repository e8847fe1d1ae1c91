/** Defaults for every collector and cluster, applied after the file, environment and flags are merged. */
import { collectorSchemas } from './schema.js';
import type { CollectorName, CollectorOptions } from './schema.js';
import { CLUSTER_SETTINGS } from './settings.js';
import type { ClusterConfig, ResolvedCollectorOptions, ResolvedCollectors } from './types.js';

export { DEFAULT_MAX_ANSWER_VALUES, DEFAULT_MAX_BUFFERED_BYTES } from './settings.js';

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
  search_index: 30_000,
  eventing: 30_000,
  query: 30_000,
  analytics: 30_000,
  processes: 30_000,
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
    concurrency: CLUSTER_SETTINGS.concurrency.default,
    connectTimeout: CLUSTER_SETTINGS.connect_timeout.default,
    requestTimeout: CLUSTER_SETTINGS.request_timeout.default,
    maxResponseBytes: CLUSTER_SETTINGS.max_response_bytes.default,
    collectors: resolveCollectors(),
    ...overrides,
  };
}

/**
 * Clusters one process should carry: past it, `cbwatch run` logs a warning (and `--config.check` says so) with the
 * advice to shard (`--shard i/n`). Each cluster costs resident memory and a share of a core at the default intervals;
 * this many small clusters fit the shipped unit's MemoryMax (bench/RESULTS.md has the measurements).
 */
export const CLUSTERS_PER_PROCESS = 250;
