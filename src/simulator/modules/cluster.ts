/**
 * Cluster-level endpoints answered from the node model: /pools, /pools/default, nodeServices, serverGroups.
 * Shapes follow the real 7.0.1 payload in pools-default/docs-server-pools-nodes-7.0.1-2nodes.json.
 */
import { fixture } from '../fixtures.js';
import type { SimContext, SimModule, SimNode } from '../types.js';

const CLUSTER_UUID = '8ebd144e243c942109c19842bdec9cdd';

function host(node: SimNode): string {
  return node.hostname.replace(/:\d+$/, '');
}

/** The node's entry in /pools/default `nodes[]`. */
export function nodeEntry(ctx: SimContext, node: SimNode, index: number): Record<string, unknown> {
  const t = fixture<{ nodes: Array<Record<string, unknown>> }>('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json');
  const base = t.nodes[0] as Record<string, unknown>;
  const up = Math.floor((ctx.now() - ctx.startedAt) / 1000) + 86_400 * (index + 1);
  const r = ctx.rand(`${node.hostname}:${Math.floor(ctx.now() / 10_000)}`);
  return {
    ...base,
    clusterMembership: node.membership,
    status: node.status,
    thisNode: node.thisNode,
    hostname: node.hostname,
    otpNode: `ns_1@${host(node)}`,
    configuredHostname: node.hostname,
    nodeUUID: node.uuid,
    version: node.version,
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
}

export const clusterModule: SimModule = (app, ctx) => {
  app.get('/pools', async () => ({
    ...fixture<Record<string, unknown>>('pools/goxdcr-8.0.0-21113.json'),
    uuid: CLUSTER_UUID,
  }));

  app.get('/pools/default', async () => {
    const t = fixture<Record<string, unknown>>('pools-default/docs-server-pools-nodes-7.0.1-2nodes.json');
    return {
      ...t,
      clusterName: 'cbsim',
      bucketNames: ctx.buckets.map((b) => ({ bucketName: b.name, uuid: b.uuid })),
      nodes: ctx.nodes.map((n, i) => nodeEntry(ctx, n, i)),
      balanced: true,
      rebalanceStatus: 'none',
    };
  });

  app.get('/pools/default/nodeServices', async () => ({
    rev: 1234,
    nodesExt: ctx.nodes.map((n) => {
      const services: Record<string, number> = { mgmt: 8091, mgmtSSL: 18091 };
      if (n.services.includes('kv')) Object.assign(services, { kv: 11210, kvSSL: 11207, capi: 8092, capiSSL: 18092, projector: 9999 });
      if (n.services.includes('n1ql')) Object.assign(services, { n1ql: 8093, n1qlSSL: 18093 });
      if (n.services.includes('index')) Object.assign(services, { indexAdmin: 9100, indexScan: 9101, indexHttp: 9102, indexHttps: 19102 });
      if (n.services.includes('fts')) Object.assign(services, { fts: 8094, ftsSSL: 18094, ftsGRPC: 9130 });
      if (n.services.includes('backup')) Object.assign(services, { backupAPI: 8097, backupAPIHTTPS: 18097, backupGRPC: 9124 });
      if (n.thisNode) {
        // The node the simulator answers as serves every port on the simulator's own port.
        for (const k of Object.keys(services)) if (!/SSL|HTTPS|GRPC/.test(k)) services[k] = ctx.port();
      }
      const entry: Record<string, unknown> = { services, hostname: n.thisNode ? '127.0.0.1' : host(n) };
      if (n.thisNode) entry.thisNode = true;
      return entry;
    }),
    clusterCapabilitiesVer: [1, 0],
    clusterCapabilities: { n1ql: ['enhancedPreparedStatements'] },
  }));

  app.get('/pools/default/serverGroups', async () => {
    const groups = [...new Set(ctx.nodes.map((n) => n.serverGroup))];
    return {
      groups: groups.map((g, i) => ({
        name: g,
        uri: `/pools/default/serverGroups/${i === 0 ? '0' : `${i}f6a1c0b2e7d4a9${i}`}`,
        addNodeURI: `/pools/default/serverGroups/${i}/addNode`,
        nodes: ctx.nodes.filter((n) => n.serverGroup === g).map((n, j) => nodeEntry(ctx, n, j)),
      })),
      uri: '/pools/default/serverGroups?rev=1234',
    };
  });
};
