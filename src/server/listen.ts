/**
 * Where the server listens. An empty host (`:9420`, the default) means every interface of both families, as
 * Go's net.Listen("tcp", ":9420") does for node_exporter: `::` with IPV6_V6ONLY off (IPv4 clients arrive as
 * ::ffff:a.b.c.d), or `0.0.0.0` on a machine without IPv6. An explicit host is taken as it is: `0.0.0.0:9420`
 * stays IPv4 only, `[::1]:9420` is the IPv6 loopback.
 */

/** The part of fastify's instance this needs (tests pass a stand-in). */
export interface Listener {
  listen(opts: { host: string; port: number; backlog?: number; ipv6Only?: boolean }): Promise<unknown>;
}

/** The errors binding `::` fails with when the system has no IPv6 (disabled in the kernel, or no such family). */
const NO_IPV6 = new Set(['EAFNOSUPPORT', 'EADDRNOTAVAIL', 'EPROTONOSUPPORT', 'EINVAL']);

/** Listen on `host:port` (see the module comment); returns the host actually bound. */
export async function listenOn(server: Listener, host: string, port: number, backlog?: number): Promise<string> {
  const extra = backlog === undefined ? {} : { backlog };
  if (host !== '') {
    await server.listen({ host, port, ...extra });
    return host;
  }
  try {
    await server.listen({ host: '::', port, ipv6Only: false, ...extra });
    return '::';
  } catch (err) {
    if (!NO_IPV6.has(String((err as NodeJS.ErrnoException).code))) throw err;
  }
  await server.listen({ host: '0.0.0.0', port, ...extra });
  return '0.0.0.0';
}
