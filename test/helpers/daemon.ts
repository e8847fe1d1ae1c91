/** Start the real daemon against a simulator, both on ephemeral ports, with a captured log. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { defaultClusterConfig, resolveCollectors } from '../../src/config/defaults.js';
import type { Config } from '../../src/config/types.js';
import { startDaemon } from '../../src/daemon.js';
import type { Daemon, DaemonOptions } from '../../src/daemon.js';
import { createLogger } from '../../src/log.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { SimOptions, Simulator } from '../../src/simulator/index.js';

export interface Harness {
  sim: Simulator;
  daemon: Daemon;
  logs: string[];
  metrics(): Promise<string>;
  close(): Promise<void>;
}

export async function startHarness(
  opts: { sim?: SimOptions; intervalMs?: number; password?: string; mutate?: (c: Config) => Config; daemon?: Omit<DaemonOptions, 'config' | 'logger'> } = {},
): Promise<Harness> {
  const sim = createSimulator(opts.sim ?? {});
  const simUrl = await sim.listen();
  const collectors = resolveCollectors();
  for (const c of Object.values(collectors)) {
    c.interval = opts.intervalMs ?? 60_000;
    c.timeout = Math.min(c.interval, 20_000);
  }
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      logs.push(chunk.toString('utf8'));
      cb();
    },
  });
  let config: Config = {
    clusters: [defaultClusterConfig({ name: 'sim', url: simUrl, username: 'Administrator', password: opts.password ?? sim.ctx.options.users.admin.password, collectors })],
    webhooks: { syncGateway: undefined },
    web: { listenHost: '127.0.0.1', listenPort: 0, configFile: undefined },
    log: { level: 'trace', format: 'json' },
  };
  if (opts.mutate) config = opts.mutate(config);
  const daemon = await startDaemon({ ...opts.daemon, config, logger: createLogger({ level: 'trace', destination: sink }) });
  return {
    sim,
    daemon,
    logs,
    async metrics() {
      return (await fetch(`${daemon.url}/metrics`)).text();
    },
    async close() {
      await daemon.close();
      await sim.close();
    },
  };
}

/**
 * `sim` listening on an ephemeral port and a daemon (silent, every collector at its defaults, no process
 * metrics) polling it as cluster `name` with the simulator's admin user; resolves once its first polls are in.
 */
export async function startQuietDaemon(sim: Simulator, name: string): Promise<Daemon> {
  const url = await sim.listen(0);
  const users = sim.ctx.options.users;
  const config: Config = {
    clusters: [defaultClusterConfig({ name, url, username: users.admin.username, password: users.admin.password, collectors: resolveCollectors() })],
    webhooks: { syncGateway: undefined },
    web: { listenHost: '127.0.0.1', listenPort: 0, configFile: undefined },
    log: { level: 'silent', format: 'json' },
  };
  const daemon = await startDaemon({ config, logger: pino({ level: 'silent' }), processMetrics: false });
  await daemon.ready();
  return daemon;
}

/** A configuration change enabling only the collectors named, on every cluster. */
export function onlyCollectors(names: readonly string[]): (c: Config) => Config {
  return (c) => ({
    ...c,
    clusters: c.clusters.map((cl) => ({
      ...cl,
      collectors: Object.fromEntries(Object.entries(cl.collectors).map(([k, v]) => [k, { ...v, enabled: names.includes(k) }])) as typeof cl.collectors,
    })),
  });
}
