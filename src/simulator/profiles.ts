/**
 * Cluster profiles by Couchbase Server version. A profile decides what the simulator reports as its version
 * (/pools `implementationVersion`, /pools/default `clusterCompatibility`, each node's `version`) and which
 * statistics APIs it answers: before 7.0 only the legacy envelopes (the range API and /metrics answer 404, as
 * a 6.x cluster manager does); 7.0+ also GET/POST /pools/default/stats/range and each node's native /metrics;
 * 7.2.1+ also GET /prometheus_sd_config. Builds: those of real releases the fixtures or the release notes name.
 * A profile also fixes what differs between server lines in the statistics (read from ns_server's 7.0.0, 7.1.4,
 * 7.2.0, 7.6.0, 7.6.8 and 8.0.0 trees): the native name table of its line (../native.ts), the
 * ep_cache_miss_rate formula (menelaus_stats computed_stats_lazy_proplist) and the 7.2+ min-file-size rule of
 * couch_docs_data_size (stat_names_mappings.erl).
 */
import type { SimNode, SimProfile } from './types.js';

const BUILDS: Readonly<Record<string, string>> = {
  '6.6.5': '10080',
  '7.0.5': '7658',
  '7.1.6': '3955',
  '7.2.4': '7070',
  '7.6.5': '5706',
  '8.0.0': '21113',
};

export const DEFAULT_VERSION = '7.6.5';

/** The profile of version `X.Y.Z` (throws on anything else: a test that mistypes a version should fail). */
export function simProfile(version: string = DEFAULT_VERSION): SimProfile {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (!m) throw new Error(`simulator: version must be X.Y.Z, got ${JSON.stringify(version)}`);
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const atLeast = (a: number, b: number, c: number): boolean => major > a || (major === a && (minor > b || (minor === b && patch >= c)));
  return {
    version,
    fullVersion: `${version}-${BUILDS[version] ?? '0000'}-enterprise`,
    clusterCompatibility: major * 0x10000 + minor,
    rangeApi: atLeast(7, 0, 0),
    prometheusSd: atLeast(7, 2, 1),
    major,
    line: major >= 8 ? '8.0' : atLeast(7, 6, 0) ? '7.6' : atLeast(7, 2, 0) ? '7.2' : atLeast(7, 1, 0) ? '7.1' : atLeast(7, 0, 0) ? '7.0' : 'pre-7.0',
    cacheMiss: atLeast(7, 6, 8) ? 'get_misses/cmd_get' : atLeast(7, 0, 0) ? 'ep_bg_fetched/cmd_lookup' : 'ep_bg_fetched/cmd_get',
    minFileSizeRule: atLeast(7, 2, 0),
  };
}

const GIB = 1024 ** 3;

/** The machine of the non-data node below: 64 GiB, 16 cores, busy (its host stats, SimNode.host). */
export const NON_DATA_HOST: Readonly<Record<string, number>> = Object.freeze({
  mem_total: 64 * GIB,
  mem_free: 20 * GIB,
  mem_actual_free: 24 * GIB,
  mem_actual_used: 40 * GIB,
  mem_used_sys: 44 * GIB,
  cpu_cores_available: 16,
  cpu_utilization_rate: 90,
});

/**
 * One more node, running index and query only (no data service), on a machine of its own, to add to a simulator's
 * `ctx.nodes` before it listens. It holds no vBucket, but ns_server sums a bucket's host stats (`@system`) over every
 * active node of any service (menelaus_stats section_nodes("@system") → ns_cluster_membership:actual_active_nodes()),
 * so its machine counts in every bucket's envelope; its own /metrics serves its sys_* series.
 */
export function nonDataNode(nodes: readonly SimNode[], version: string = simProfile().fullVersion, host: Readonly<Record<string, number>> = NON_DATA_HOST): SimNode {
  const i = nodes.length + 1;
  return {
    hostname: `cb${i}.cbsim.local:8091`,
    uuid: `non-data-node-${i}`.padEnd(32, '0'),
    status: 'healthy',
    membership: 'active',
    services: ['index', 'n1ql'],
    serverGroup: 'Group 1',
    version,
    thisNode: false,
    host,
  };
}

/**
 * Mark the nodes of a simulator as running `version` (`X.Y.Z`, the full version as the profile builds it), for a
 * cluster mid-upgrade: each node reports its own version, and the node the simulator answers as (`thisNode`)
 * computes the envelope's ep_cache_miss_rate with its own formula (modules/buckets.ts servingCacheMiss).
 */
export function setNodeVersions(nodes: readonly SimNode[], versions: Readonly<Record<string, string>>): void {
  for (const n of nodes) {
    const v = versions[n.hostname];
    if (v !== undefined) n.version = simProfile(v).fullVersion;
  }
}
