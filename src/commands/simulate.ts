/**
 * `cbwatch simulate`: only the Couchbase REST simulator (src/simulator), for benchmarks and trials, until SIGINT
 * or SIGTERM. `demo` starts the same simulator with its own scenario.
 */
import type { ParsedArgs } from '../config/flags.js';
import { listenForTermination, untilSignal } from '../lifecycle.js';
import type { SimOptions } from '../simulator/index.js';
import { thisCommandName } from './common.js';
import type { Out } from './common.js';

/** The simulator's options from the command line; `scenario` when --scenario is not given. */
export function simOptions(args: ParsedArgs, scenario: string): SimOptions {
  const f = args.flags;
  const num = (k: string): number | undefined => (f[k] === undefined ? undefined : Number(f[k]));
  const opts: SimOptions = { scenario: typeof f.scenario === 'string' ? f.scenario : scenario };
  const b = num('buckets');
  const n = num('nodes');
  const l = num('latency');
  const r = num('replications');
  const s = num('speed');
  if (b !== undefined) opts.buckets = b;
  if (n !== undefined) opts.nodes = n;
  if (l !== undefined) opts.latencyMs = l;
  if (r !== undefined) opts.replications = r;
  if (s !== undefined) opts.speed = s;
  if (f['stat-set'] === 'full') opts.statSet = 'full';
  if (typeof f['server-version'] === 'string') opts.version = f['server-version'];
  return opts;
}

export async function commandSimulate(args: ParsedArgs, out: Out): Promise<number> {
  const { createSimulator } = await import('../simulator/index.js');
  const sim = createSimulator(simOptions(args, 'default'));
  const term = listenForTermination();
  const port = args.flags.port === undefined ? 8091 : Number(args.flags.port);
  const url = await sim.listen(port, typeof args.flags.host === 'string' ? args.flags.host : '127.0.0.1');
  const u = sim.ctx.options.users;
  out(`cbwatch simulator (Couchbase Server ${sim.ctx.options.profile.version}, scenario ${sim.ctx.options.scenario}) listening on ${url}\n`);
  out(`  admin user:   ${u.admin.username} / ${u.admin.password}\n`);
  out(`  limited user: ${u.limited.username} / ${u.limited.password}\n`);
  const cmd = thisCommandName();
  out(`  try: CBWATCH_COUCHBASE_PASSWORD=${u.admin.password} ${cmd} check --couchbase.url ${url} --couchbase.username ${u.admin.username}\n`);
  await untilSignal(term);
  await sim.close();
  return 0;
}
