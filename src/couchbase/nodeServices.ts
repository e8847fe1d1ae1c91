/**
 * GET /pools/default/nodeServices, shared by every collector that needs the node list or a service's URL
 * (search, backup, certificates, nodes). Fetched once per cluster per 10 s through the shared cache.
 */
import { z } from 'zod';
import { checkedArray, checkedRecord, uncheckedArray } from './unchecked.js';
import { parseEach } from './source.js';
import type { ClusterSource, InvalidEntry } from './source.js';

/** One entry of `nodesExt`: a node, its services and their ports. */
export const nodeExtSchema = z.looseObject({
  services: checkedRecord(z.number()).default({}),
  thisNode: z.boolean().optional(),
  hostname: z.string().optional(),
  serverGroup: z.string().optional(),
  alternateAddresses: z
    .looseObject({
      external: z.looseObject({ hostname: z.string().optional(), ports: checkedRecord(z.number()).optional() }).optional(),
    })
    .optional(),
});
export type NodeExt = z.output<typeof nodeExtSchema>;

/**
 * The answer. `nodesExt` is checked entry by entry: an entry that does not parse costs only that node (it is
 * left out and listed in `invalidNodes`; the `nodes` collector counts it as an item error), not every
 * collector that needs the node list.
 */
export const nodeServicesSchema = z
  .looseObject({
    rev: z.number().optional(),
    nodesExt: uncheckedArray(),
    clusterCapabilitiesVer: checkedArray(z.number()).optional(),
    clusterCapabilities: checkedRecord(checkedArray(z.string())).optional(),
  })
  .transform(({ nodesExt, ...rest }) => {
    const { ok, invalid, invalidCount } = parseEach(nodesExt, nodeExtSchema, 'hostname');
    return { ...rest, nodesExt: ok, invalidNodes: { shown: invalid, count: invalidCount } };
  });

export type NodeServices = Omit<z.output<typeof nodeServicesSchema>, 'invalidNodes'> & {
  /** Entries of `nodesExt` that did not parse: the first few (`shown`) and how many in all. */
  readonly invalidNodes?: { readonly shown: readonly InvalidEntry[]; readonly count: number };
};

export const NODE_SERVICES_ROUTE = '/pools/default/nodeServices';

export function fetchNodeServices(src: ClusterSource): Promise<NodeServices> {
  return src.shared.get('nodeServices', 10_000, () => src.client.getJson(NODE_SERVICES_ROUTE, {}, nodeServicesSchema));
}

/** Wrap an IPv6 literal in brackets for use in a URL. */
export function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * The base URL of a service (`fts`/`ftsSSL`, `backupAPI`/`backupAPIHTTPS`) found from nodeServices.
 * Prefers the node we talk to (its host is the configured URL's host, since nodesExt may omit or give an
 * internal address for it), then the first node running the service. TLS when the management URL is https.
 */
export function serviceUrl(ns: NodeServices, managementUrl: string, plainPort: string, tlsPort: string): string | undefined {
  const mgmt = new URL(managementUrl);
  const secure = mgmt.protocol === 'https:';
  const key = secure ? tlsPort : plainPort;
  const candidates = [...ns.nodesExt.filter((n) => n.thisNode), ...ns.nodesExt.filter((n) => !n.thisNode)];
  for (const n of candidates) {
    const port = n.services[key];
    if (port === undefined) continue;
    const host = n.thisNode || !n.hostname ? mgmt.hostname : urlHost(n.hostname);
    return `${secure ? 'https' : 'http'}://${host}:${port}`;
  }
  return undefined;
}

/** `host:8091`-style names of the cluster's nodes, as Couchbase writes them in stats and certificates. */
export function nodeNames(ns: NodeServices, managementUrl: string): string[] {
  const mgmtHost = new URL(managementUrl).hostname;
  return ns.nodesExt.map((n) => `${urlHost(n.hostname ?? mgmtHost)}:${n.services.mgmt ?? 8091}`);
}
