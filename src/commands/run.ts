/**
 * `cbwatch [run]`: the daemon. It polls the configured clusters and serves /metrics until SIGINT or SIGTERM;
 * SIGHUP (and POST /-/reload with --web.enable-lifecycle) reloads the configuration. `--config.check` validates
 * the configuration and exits.
 */
import type { ParsedArgs } from '../config/flags.js';
import { describeConfig, loadConfig } from '../config/load.js';
import { secretFileWarnings } from '../config/warnings.js';
import { ignoredHangups, lifecyclePlugin, listenForHeapSnapshots, listenForTermination, makeReloader, serveUntilSignal, warnIfTooManyClusters } from '../lifecycle.js';
import type { ReloadResult } from '../lifecycle.js';
import { createLogger } from '../log.js';
import { clearCredentialWarnings } from './common.js';
import type { Out } from './common.js';
import { startServing } from './serve.js';

export async function commandRun(args: ParsedArgs, out: Out): Promise<number> {
  const hangupsBeforeLoad = ignoredHangups();
  // Before the configuration is read: a stop asked for at any moment of the start-up is a graceful one.
  const term = listenForTermination();
  const config = loadConfig(args.flags, process.env);
  if (args.flags['config.check']) {
    out(describeConfig(config));
    out('configuration is valid\n');
    return 0;
  }
  // loadConfig refuses a configuration without clusters unless it receives webhooks; a shard may still hold
  // none, and that replica serves its own metrics instead of exiting (and restarting in a loop).
  // The answer budget is set where the answers are read (src/collection/discipline.ts), by the daemon.
  const log = createLogger({ level: config.log.level, format: config.log.format });
  for (const w of clearCredentialWarnings(config.clusters)) log.warn({ cluster: w.cluster, urls: w.urls }, w.message);
  for (const w of secretFileWarnings(config)) log.warn({ file: w.file, ...(w.cluster === undefined ? {} : { cluster: w.cluster }) }, w.message);
  warnIfTooManyClusters(config, log);
  if (config.clusters.length === 0) {
    log.warn(
      config.shard === undefined ? {} : { shard: `${config.shard.index}/${config.shard.total}` },
      config.shard === undefined ? 'no cluster configured: receiving webhooks only' : 'no cluster falls in this shard: serving cbwatch\'s own metrics only',
    );
  }
  // The reloader needs the daemon, and the daemon the lifecycle route: the route calls it once both exist.
  let reload: (() => Promise<ReloadResult>) | undefined;
  const plugins = args.flags['web.enable-lifecycle'] ? [lifecyclePlugin(() => (reload ? reload() : Promise.resolve({ ok: false, error: 'not started yet' } as const)))] : [];
  const { daemon, applyWeb } = await startServing(config, log, plugins);
  reload = makeReloader(args, process.env, daemon, log, config, applyWeb);
  const stopSnapshots = listenForHeapSnapshots(config.heapSnapshotDir, daemon, log);
  // A SIGHUP while the server started came after the file was read: the file may have changed since, so it is
  // reloaded now rather than lost. (One before the file was read needs nothing: the file read is the newest.)
  const late = ignoredHangups() > hangupsBeforeLoad;
  const served = serveUntilSignal(daemon, log, term, [async () => stopSnapshots()], reload);
  if (late && !term.received()) {
    log.info('SIGHUP received during start-up: reloading the configuration');
    void reload();
  }
  return served;
}
