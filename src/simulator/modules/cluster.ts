/**
 * Cluster-level endpoints answered from the node model: /pools, /pools/default, nodeServices, serverGroups.
 * Shapes follow the real 7.0.1 payload in pools-default/docs-server-pools-nodes-7.0.1-2nodes.json (plus the
 * 8.0 `serverGroup` per node) and pools-default-nodeServices/goxdcr-ipv6-external.json.
 *
 * The node model (`ctx.nodes`) holds what a test sets; scenarios lay their effects over it in
 * `effectiveNodes()` (simulated time):
 * - `default`: every node healthy and active, balanced, counters of two past rebalances.
 * - `demo`: the second node goes unhealthy for 2 minutes every 10 (minute 5 to 7 of each 10), then warms up
 *   for 30 s; the last node was auto-failed over once (inactiveFailed, healthy again: waiting for a rebalance);
 *   a rebalance runs 10 minutes out of 15 (rebalance module); alternate (external) addresses are advertised.
 * - `incident`: nodes are failed over as the auto-failover count grows (autofailover module), from the last
 *   node on, always keeping the node answering; a failed-over node is unhealthy (down) and sends no
 *   systemStats; the last rebalance failed.
 * Three server groups (Group 1..3) with the default three nodes; memory quotas kv 4 GiB, index 1 GiB, fts
 * 512 MiB, cbas 1 GiB, eventing 256 MiB. Knob `unhealthyNodes` (number): that many nodes after the first are
 * unhealthy in any scenario.
 * `storageTotals` is summed over the nodes that answer (those with systemStats), as the cluster manager does:
 * ram from their systemStats and the bucket quotas, hdd from a 500 GiB data file system per node, 35% used
 * (`incident`: 92%); knob `diskUsedRatio` (0-1) sets the used share in any scenario.
 * `alerts` (Couchbase's own alert list) is empty, as in the 7.0.1 payload; knob `alerts` (array of message
 * strings) lists those messages in the 7.x entry form `{msg, serverTime, disableUIPopUp}`.
 */
import { churnNames } from '../churn.js';
import { fixture } from '../fixtures.js';
import type { SimContext, SimModule, SimNode } from '../types.js';
import { failoversSoFar } from './autofailover.js';
import { rebalanceState } from './rebalance.js';

const CLUSTER_UUID = '8ebd144e243c942109c19842bdec9cdd';

function host(node: SimNode): string {
  return node.hostname.replace(/:\d+$/, '');
}

/** The nodes as the scenario shows them now (copies; the model itself is left as tests set it). */
export function effectiveNodes(ctx: SimContext): SimNode[] {
  const scenario = ctx.options.scenario;
  const elapsed = Math.max(0, (ctx.now() - ctx.startedAt) / 1000);
  const nodes = ctx.nodes.map((n) => ({ ...n }));
  const failed = Math.min(failoversSoFar(ctx), Math.max(0, nodes.length - 1));
  let marked = 0;
  for (let i = nodes.length - 1; i >= 0 && marked < failed; i--) {
    const n = nodes[i] as SimNode;
    if (n.thisNode) continue;
    n.membership = 'inactiveFailed';
    if (scenario !== 'demo') n.status = 'unhealthy';
    marked++;
  }
  if (scenario === 'demo' && nodes.length >= 3) {
    const flapping = nodes[1] as SimNode;
    // Within the first minute (a newcomer's first look at the landing page), then every ten minutes.
    const t = elapsed % 600;
    if (flapping.membership === 'active') {
      if (t >= 20 && t < 140) flapping.status = 'unhealthy';
      else if (t >= 140 && t < 170) flapping.status = 'warmup';
    }
  }
  const k = ctx.options.knobs.unhealthyNodes;
  if (typeof k === 'number') for (let i = 1; i <= k && i < nodes.length; i++) (nodes[i] as SimNode).status = 'unhealthy';
  for (const n of nodes) {
    const f = nodeFault(ctx, n.hostname);
    if (f.down === true) n.status = 'unhealthy';
    if (f.failedOver === true) n.membership = 'inactiveFailed';
  }
  return nodes;
}

/**
 * Per-node faults a test sets (knob `nodeFaults`, also through POST /_sim/knobs), keyed by `host:port`:
 * - `down`: the node is unhealthy: it answers nothing of its own (no systemStats, no /metrics, "Node is not
 *   available" in the range API) and the envelopes leave it out of their sums;
 * - `failedOver`: hard-failed-over (`inactiveFailed`), still running: it leaves the bucket's servers (its
 *   vBuckets' replicas are promoted on the others, so the bucket's totals stay whole), serves no bucket or XDCR
 *   data and is no longer an active node whose host stats the envelope sums;
 * - `slowMs`: its statistics arrive this many ms late (the range API gives up on it past the query's `timeout`);
 * - `clockAheadMs`: its clock runs ahead: its Prometheus stamps the value of real time t as t + clockAheadMs.
 */
export interface SimNodeFault {
  down?: boolean;
  failedOver?: boolean;
  slowMs?: number;
  clockAheadMs?: number;
}

export function nodeFault(ctx: SimContext, hostname: string): SimNodeFault {
  const all = ctx.options.knobs.nodeFaults as Readonly<Record<string, SimNodeFault>> | undefined;
  return all?.[hostname] ?? {};
}

/**
 * The bucket's servers: data nodes that are active cluster members as the scenario and the `nodeFaults` knob
 * show them now (a failed-over node leaves the vBucket map: ns_bucket's `servers` after failover).
 */
export function bucketServers(ctx: SimContext): SimNode[] {
  const kv = effectiveNodes(ctx).filter((n) => n.services.includes('kv') && n.membership === 'active');
  return kv.length > 0 ? kv : effectiveNodes(ctx).slice(0, 1);
}

/**
 * The bucket's servers that can answer now: ns_bucket:live_bucket_nodes (servers ∩ nodes that are up), the set
 * menelaus_stats sums a bucket's stats over.
 */
export function liveBucketNodes(ctx: SimContext): SimNode[] {
  const status = new Map(effectiveNodes(ctx).map((n) => [n.hostname, n.status]));
  return bucketServers(ctx).filter((n) => status.get(n.hostname) !== 'unhealthy');
}

/**
 * Active cluster members that are up: the nodes whose host stats (`@system`) the envelope aggregates
 * (menelaus_stats: the section's nodes; a node that is down sends nothing).
 */
export function liveActiveNodes(ctx: SimContext): SimNode[] {
  return effectiveNodes(ctx).filter((n) => n.membership === 'active' && n.status !== 'unhealthy');
}

/** The cluster manager's `counters`, consistent with the rebalance and auto-failover modules. */
export function clusterCounters(ctx: SimContext): Record<string, number> {
  const r = rebalanceState(ctx);
  const counters: Record<string, number> = {
    rebalance_start: 2 + r.started + (r.failed ? 1 : 0),
    rebalance_success: 2 + Math.max(0, r.started - (r.running ? 1 : 0)),
  };
  if (r.failed) counters.rebalance_fail = 1;
  const failovers = failoversSoFar(ctx);
  if (failovers > 0) {
    counters.failover = failovers;
    counters.failover_complete = failovers;
    counters.failover_node = failovers;
  }
  for (const name of churnNames(ctx)) counters[name] = 1;
  return counters;
}

/** The node's entry in /pools/default `nodes[]`. */
export function nodeEntry(ctx: SimContext, node: SimNode, index: number): Record<string, unknown> {
  const t = fixture<{ nodes: Array<Record<string, unknown>> }>('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json');
  const base = t.nodes[0] as Record<string, unknown>;
  const up = Math.floor((ctx.now() - ctx.startedAt) / 1000) + 86_400 * (index + 1);
  const r = ctx.rand(`${node.hostname}:${Math.floor(ctx.now() / 10_000)}`);
  const entry: Record<string, unknown> = {
    ...base,
    clusterMembership: node.membership,
    status: node.status,
    thisNode: node.thisNode,
    hostname: node.hostname,
    otpNode: `ns_1@${host(node)}`,
    configuredHostname: node.hostname,
    nodeUUID: node.uuid,
    version: node.version,
    clusterCompatibility: ctx.options.profile.clusterCompatibility,
    services: [...node.services].sort(),
    serverGroup: node.serverGroup,
    uptime: String(up),
    systemStats: {
      cpu_utilization_rate: 20 + 40 * r,
      cpu_stolen_rate: 0,
      swap_total: 2_147_483_648,
      swap_used: 104_857_600,
      mem_total: 17_179_869_184,
      mem_free: 6_000_000_000 + Math.floor(1e9 * r),
      mem_limit: 17_179_869_184,
      cpu_cores_available: 4,
      allocstall: 0,
    },
  };
  const churn = churnNames(ctx);
  if (churn.length > 0) entry.interestingStats = { ...(base.interestingStats as Record<string, unknown>), ...Object.fromEntries(churn.map((n) => [n, 1])) };
  // A node that is down answers nothing of its own: the cluster lists it without systemStats and interestingStats.
  if (node.status === 'unhealthy') {
    delete entry.systemStats;
    delete entry.interestingStats;
  }
  return entry;
}

const MIB = 1024 * 1024;
const KV_QUOTA_MIB = 4096;
const DISK_PER_NODE = 500 * 1024 * MIB;

/** /pools/default `storageTotals` over the answering node entries (bytes; hdd `free` = total - used). */
export function storageTotals(ctx: SimContext, entries: ReadonlyArray<Record<string, unknown>>): Record<string, Record<string, number>> {
  const up = entries.filter((e) => e.systemStats !== undefined);
  const kvNodes = up.filter((e) => Array.isArray(e.services) && e.services.includes('kv')).length;
  let memTotal = 0;
  let memUsed = 0;
  for (const e of up) {
    const s = e.systemStats as { mem_total: number; mem_free: number };
    memTotal += s.mem_total;
    memUsed += s.mem_total - s.mem_free;
  }
  const quotaUsedPerNode = ctx.buckets.reduce((sum, b) => sum + b.ramQuotaBytes, 0);
  const knob = ctx.options.knobs.diskUsedRatio;
  const usedRatio = typeof knob === 'number' ? knob : ctx.options.scenario === 'incident' ? 0.92 : 0.35;
  const diskTotal = DISK_PER_NODE * up.length;
  const diskUsed = Math.round(diskTotal * usedRatio);
  return {
    ram: {
      total: memTotal,
      quotaTotal: KV_QUOTA_MIB * MIB * kvNodes,
      quotaUsed: quotaUsedPerNode * kvNodes,
      used: memUsed,
      usedByData: Math.round(memUsed / 4),
      quotaUsedPerNode,
      quotaTotalPerNode: KV_QUOTA_MIB * MIB,
    },
    hdd: { total: diskTotal, quotaTotal: diskTotal, used: diskUsed, usedByData: Math.round(diskUsed / 2), free: diskTotal - diskUsed },
  };
}

/** The `alerts` array: the messages of knob `alerts`, raised at start-up, in the 7.x entry form. */
function simAlerts(ctx: SimContext): Array<Record<string, unknown>> {
  const knob = ctx.options.knobs.alerts;
  if (!Array.isArray(knob)) return [];
  const serverTime = new Date(Math.floor(ctx.startedAt / 1000) * 1000).toISOString();
  return knob.filter((m): m is string => typeof m === 'string').map((msg) => ({ msg, serverTime, disableUIPopUp: false }));
}

export const clusterModule: SimModule = (app, ctx) => {
  app.get('/pools', async () => ({
    ...fixture<Record<string, unknown>>('pools/goxdcr-8.0.0-21113.json'),
    implementationVersion: ctx.options.profile.fullVersion,
    uuid: CLUSTER_UUID,
  }));

  app.get('/pools/default', async () => {
    const t = fixture<Record<string, unknown>>('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json');
    const nodes = effectiveNodes(ctx);
    const rebalance = rebalanceState(ctx);
    const entries = nodes.map((n, i) => nodeEntry(ctx, n, i));
    return {
      ...t,
      clusterName: 'cbsim',
      clusterCompatibility: ctx.options.profile.clusterCompatibility,
      bucketNames: ctx.buckets.map((b) => ({ bucketName: b.name, uuid: b.uuid })),
      nodes: entries,
      storageTotals: storageTotals(ctx, entries),
      // A failed-over or added node, or a rebalance under way, leaves the cluster unbalanced.
      balanced: !rebalance.running && nodes.every((n) => n.membership === 'active'),
      rebalanceStatus: rebalance.running ? 'running' : 'none',
      counters: clusterCounters(ctx),
      memoryQuota: KV_QUOTA_MIB,
      indexMemoryQuota: 1024,
      ftsMemoryQuota: 512,
      cbasMemoryQuota: 1024,
      eventingMemoryQuota: 256,
      alerts: simAlerts(ctx),
    };
  });

  app.get('/pools/default/nodeServices', async () => ({
    rev: 1234,
    nodesExt: effectiveNodes(ctx).map((n, i) => {
      const services: Record<string, number> = { mgmt: 8091, mgmtSSL: 18091 };
      if (n.services.includes('kv')) Object.assign(services, { kv: 11210, kvSSL: 11207, capi: 8092, capiSSL: 18092, projector: 9999 });
      if (n.services.includes('n1ql')) Object.assign(services, { n1ql: 8093, n1qlSSL: 18093 });
      if (n.services.includes('index')) Object.assign(services, { indexAdmin: 9100, indexScan: 9101, indexHttp: 9102, indexHttps: 19102 });
      if (n.services.includes('fts')) Object.assign(services, { fts: 8094, ftsSSL: 18094, ftsGRPC: 9130 });
      if (n.services.includes('backup')) Object.assign(services, { backupAPI: 8097, backupAPIHTTPS: 18097, backupGRPC: 9124 });
      if (n.services.includes('eventing')) Object.assign(services, { eventingAdminPort: 8096, eventingDebug: 9140, eventingSSL: 18096 });
      if (n.services.includes('cbas')) Object.assign(services, { cbas: 8095, cbasSSL: 18095 });
      if (n.thisNode) {
        // The node the simulator answers as serves every port on the simulator's own port.
        for (const k of Object.keys(services)) if (!/SSL|HTTPS|GRPC/.test(k)) services[k] = ctx.port();
      }
      const entry: Record<string, unknown> = { services, hostname: n.thisNode ? '127.0.0.1' : host(n), serverGroup: n.serverGroup };
      if (n.thisNode) entry.thisNode = true;
      if (ctx.options.scenario === 'demo') {
        entry.alternateAddresses = {
          external: { hostname: `cb${i + 1}.external.cbsim.example`, ports: { mgmt: 31000 + i, mgmtSSL: 32000 + i, kv: 33000 + i, kvSSL: 34000 + i } },
        };
      }
      return entry;
    }),
    clusterCapabilitiesVer: [1, 0],
    clusterCapabilities: { n1ql: ['enhancedPreparedStatements'] },
  }));

  app.get('/pools/default/serverGroups', async () => {
    const nodes = effectiveNodes(ctx);
    const groups = [...new Set(nodes.map((n) => n.serverGroup))];
    return {
      groups: groups.map((g, i) => ({
        name: g,
        uri: `/pools/default/serverGroups/${i === 0 ? '0' : `${i}f6a1c0b2e7d4a9${i}`}`,
        addNodeURI: `/pools/default/serverGroups/${i}/addNode`,
        nodes: nodes.filter((n) => n.serverGroup === g).map((n, j) => nodeEntry(ctx, n, j)),
      })),
      uri: '/pools/default/serverGroups?rev=1234',
    };
  });
};

/** The envelope waits for the slowest node it gathers from (knob nodeFaults[…].slowMs), as menelaus_stats' gatherer does. */
export async function gatherDelay(ctx: SimContext, nodes: readonly SimNode[]): Promise<void> {
  const ms = Math.max(0, ...nodes.map((n) => nodeFault(ctx, n.hostname).slowMs ?? 0));
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
}

