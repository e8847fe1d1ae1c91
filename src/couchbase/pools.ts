/**
 * GET /pools/default (cluster and node health) and GET /pools/default/serverGroups, read by the `nodes`
 * collector. Schemas are loose with every field optional: the payload has grown from 3.0 (no services, no
 * quotas, no `balanced`) to 8.0 (serverGroup per node, encryption-at-rest info), and a node entry that does
 * not parse is skipped on its own (the node list stays `unknown[]` here and each entry is parsed by the mapper).
 */
import { z } from 'zod';
import { checkedArray, uncheckedArray, uncheckedRecord } from './unchecked.js';
import type { ClusterSource } from './source.js';

const num = z.number().nullable().optional();

export const systemStatsSchema = z.looseObject({
  cpu_utilization_rate: num,
  cpu_stolen_rate: num,
  cpu_cores_available: num,
  swap_total: num,
  swap_used: num,
  mem_total: num,
  mem_free: num,
  mem_limit: num,
  allocstall: num,
});

export const poolNodeSchema = z.looseObject({
  hostname: z.string().min(1),
  otpNode: z.string().optional(),
  /** The node's uuid: what the Search service puts in its query keys. */
  nodeUUID: z.string().optional(),
  thisNode: z.boolean().optional(),
  status: z.string().optional(),
  clusterMembership: z.string().optional(),
  recoveryType: z.string().optional(),
  version: z.string().optional(),
  services: checkedArray(z.string()).optional(),
  serverGroup: z.string().optional(),
  /** Seconds, as a string on every version seen (a number is accepted too). */
  uptime: z.union([z.string(), z.number()]).optional(),
  systemStats: systemStatsSchema.nullable().optional(),
  /** Stat name → number; values are checked one by one by the mapper. */
  interestingStats: uncheckedRecord().nullable().optional(),
  /** MiB. */
  mcdMemoryReserved: num,
  mcdMemoryAllocated: num,
});
export type PoolNode = z.output<typeof poolNodeSchema>;

export const poolsDefaultSchema = z.looseObject({
  name: z.string().optional(),
  clusterName: z.string().optional(),
  nodes: uncheckedArray().default([]),
  balanced: z.boolean().optional(),
  rebalanceStatus: z.string().optional(),
  /** MiB, per node. */
  memoryQuota: num,
  indexMemoryQuota: num,
  ftsMemoryQuota: num,
  cbasMemoryQuota: num,
  eventingMemoryQuota: num,
  maxBucketCount: num,
  maxScopeCount: num,
  maxCollectionCount: num,
  /** Alerts Couchbase raised and nobody dismissed yet: message strings (3.x) or `{msg, serverTime, …}` (7.x). */
  alerts: uncheckedArray().nullable().optional(),
  /** Cluster-wide event counters (rebalance_start, rebalance_success, rebalance_fail, failover_node, …). */
  counters: uncheckedRecord().nullable().optional(),
  /** Bytes, summed over the nodes: `ram` (memory, bucket quota) and `hdd` (the data path's file system). */
  storageTotals: z.looseObject({ ram: uncheckedRecord().nullable().optional(), hdd: uncheckedRecord().nullable().optional() }).nullable().optional(),
});
export type PoolsDefault = z.output<typeof poolsDefaultSchema>;

export const POOLS_DEFAULT_ROUTE = '/pools/default';

/** Shared for 10 s per cluster so that several collectors polling together fetch it once. */
export function fetchPoolsDefault(src: ClusterSource): Promise<PoolsDefault> {
  return src.shared.get('poolsDefault', 10_000, () => src.client.getJson(POOLS_DEFAULT_ROUTE, {}, poolsDefaultSchema));
}

export const serverGroupsSchema = z.looseObject({
  groups: checkedArray(
    z.looseObject({
      name: z.string(),
      uri: z.string().optional(),
      nodes: checkedArray(z.looseObject({ hostname: z.string().optional() })).default([]),
    }),
  ),
  uri: z.string().optional(),
});
export type ServerGroups = z.output<typeof serverGroupsSchema>;

export const SERVER_GROUPS_ROUTE = '/pools/default/serverGroups';
