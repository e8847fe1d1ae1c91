/**
 * GET /pools/default/nodeServices, shared by every collector that needs the node list or a service's URL
 * (search, backup, certificates, nodes). Fetched once per cluster per 10 s through the shared cache.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
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
 * The hosts the Couchbase credentials may go to under `credentials_hosts: configured`: those of the cluster's
 * `url`, `search_url` and `backup_url`, lowercased.
 */
export function allowedCredentialHosts(cluster: { readonly url: string; readonly searchUrl: string | undefined; readonly backupUrl: string | undefined }): ReadonlySet<string> {
  const hosts = [cluster.url, cluster.searchUrl, cluster.backupUrl].filter((u): u is string => u !== undefined);
  return new Set(hosts.map((u) => bareHost(new URL(u).hostname)));
}

/** A host name as compared: lowercase, an IPv6 literal without its brackets. */
function bareHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/**
 * The base URL of a service (`fts`/`ftsSSL`, `backupAPI`/`backupAPIHTTPS`) found from nodeServices.
 * Prefers the node we talk to (its host is the configured URL's host, since nodesExt may omit or give an
 * internal address for it), then the first node running the service. TLS when the management URL is https.
 * The request will carry the cluster's credentials: with `onlyHosts` (credentials_hosts: configured) a node on
 * another host is never chosen, and a service that runs only on such nodes is a failure (CBW_ERR_CONFIG) —
 * not "no such service", which would hide it.
 */
export function serviceUrl(ns: NodeServices, managementUrl: string, plainPort: string, tlsPort: string, onlyHosts?: ReadonlySet<string>): string | undefined {
  const mgmt = new URL(managementUrl);
  const secure = mgmt.protocol === 'https:';
  const key = secure ? tlsPort : plainPort;
  const candidates = [...ns.nodesExt.filter((n) => n.thisNode), ...ns.nodesExt.filter((n) => !n.thisNode)];
  let elsewhere = false;
  for (const n of candidates) {
    const port = n.services[key];
    if (port === undefined) continue;
    // The node answering the management URL is reached at the configured host itself.
    const own = n.thisNode === true || !n.hostname;
    if (!own && onlyHosts !== undefined && !onlyHosts.has(bareHost(n.hostname as string))) {
      elsewhere = true;
      continue;
    }
    const host = own ? mgmt.hostname : urlHost(n.hostname as string);
    return `${secure ? 'https' : 'http'}://${host}:${port}`;
  }
  if (elsewhere) {
    throw new ConfigError(
      `the ${plainPort} service runs only on nodes outside the configured hosts, where credentials_hosts: configured sends no credentials; set its URL (search_url or backup_url) or credentials_hosts: nodes`,
    );
  }
  return undefined;
}

/** `host:8091`-style names of the cluster's nodes, as Couchbase writes them in stats and certificates. */
export function nodeNames(ns: NodeServices, managementUrl: string): string[] {
  const mgmtHost = new URL(managementUrl).hostname;
  return ns.nodesExt.map((n) => `${urlHost(n.hostname ?? mgmtHost)}:${n.services.mgmt ?? 8091}`);
}
