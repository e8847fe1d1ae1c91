/**
 * The command line: `cbwatch [run]`, `check`, `demo`, `simulate`. User-facing output goes to stdout/stderr
 * here and only here; everything else logs through pino. Exit codes: 0 ok, 1 a check failed or a runtime
 * error, 2 a bad configuration or command line.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { CLUSTERS_PER_PROCESS, defaultClusterConfig, resolveCollectors } from './config/defaults.js';
import { parseArgs, usage } from './config/flags.js';
import type { ParsedArgs } from './config/flags.js';
import { describeConfig, loadConfig } from './config/load.js';
import type { Config } from './config/types.js';
import { secretFileWarnings } from './config/warnings.js';
import { startDaemon } from './daemon.js';
import type { Daemon } from './daemon.js';
import { ConfigError } from './errors.js';
import { ignoredHangups, installHangupHandler, onHangup } from './hangup.js';
import { createLogger, safeStderr } from './log.js';
import { DEFAULT_MAX_ANSWER_VALUES, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_TELEMETRY_PATH } from './config/load.js';
import { applySwitches, collectorSwitches } from './config/switches.js';
import { packageVersion, versionText } from './metrics/build.js';
import { recordConfigLoad } from './metrics/self.js';
import type { SimOptions, Simulator } from './simulator/index.js';
import { httpsOptions, loadWebConfig, webConfigToServerOptions } from './config/webconfig.js';
import type { WebSettings } from './config/webconfig.js';
import type { TLSSocket } from 'node:tls';
import { createRequire } from 'node:module';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative } from 'node:path';
import { PACKAGE_ROOT } from './paths.js';

type Out = (s: string) => void;

/**
 * The CLI's stdout. A reader that goes away early (`cbwatch rules --list | head`) is not our error: on EPIPE
 * the rest of the output is dropped quietly, where an unhandled 'error' event would print a stack trace.
 */
export function quietOnClosedPipe(stream: NodeJS.WriteStream): Out {
  let listening = false;
  let gone = false;
  return (s) => {
    if (!listening) {
      listening = true;
      stream.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code !== 'EPIPE') throw e;
        gone = true;
      });
    }
    if (!gone && !stream.destroyed) stream.write(s);
  };
}

const stdout: Out = quietOnClosedPipe(process.stdout);
// Error messages go where the log goes, through the destination that drops (and counts) what a full disk or a
// closed pipe refuses, instead of throwing (src/log.ts). It writes to fd 2 directly: process.stderr is never
// created, so a pipe on fd 2 keeps its blocking mode.
const stderr: Out = (s) => void safeStderr().write(s);

/** The first SIGINT or SIGTERM, listened for from the moment a long-running command begins. */
interface Termination {
  /** Resolves with the first SIGINT or SIGTERM. */
  readonly signal: Promise<NodeJS.Signals>;
  /** Whether it has come. */
  received(): boolean;
  /** The logger that reports a hangup ignored during shutdown, once one exists. */
  setLog(log: Logger): void;
}

/**
 * Listen for SIGINT and SIGTERM from now on. A command installs this before it starts anything, so a stop asked
 * for while the daemon starts (after "cbwatch started" is logged, or earlier) is carried out gracefully once it
 * has started, instead of meeting the default action in the gap before a later listener (the process died with
 * SIGTERM, its worker and server not closed). From the first of them on, a SIGHUP is logged and ignored: a reload
 * during shutdown would race the shutdown (exiting 129 there was issue 25, item 6). The SIGHUP listener itself
 * was installed before anything else (src/hangup.ts) and stays until exit.
 */
function listenForTermination(): Termination {
  let log: Logger | undefined;
  let got = false;
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    const on = (sig: NodeJS.Signals): void => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      got = true;
      onHangup(() => log?.info('SIGHUP ignored: shutting down'));
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
  return { signal, received: () => got, setLog: (l) => void (log = l) };
}

/**
 * Resolves on `term`'s signal. Until then a SIGHUP calls `onHangupDo` (a configuration reload) or is logged and
 * ignored.
 */
function untilSignal(term: Termination, log?: Logger, onHangupDo?: () => unknown): Promise<NodeJS.Signals> {
  if (log) term.setLog(log);
  if (!term.received()) {
    onHangup(() => {
      if (onHangupDo) void onHangupDo();
      else log?.warn('SIGHUP ignored: nothing to reload');
    });
  }
  return term.signal;
}

export type ReloadResult = { readonly ok: true } | { readonly ok: false; readonly error: string };

/** Past CLUSTERS_PER_PROCESS clusters, a warning with the advice to shard (at start and after a reload). */
function warnIfTooManyClusters(config: Config, log: Logger): void {
  if (config.clusters.length <= CLUSTERS_PER_PROCESS) return;
  log.warn(
    { clusters: config.clusters.length, per_process: CLUSTERS_PER_PROCESS },
    `more clusters than one process should carry (${CLUSTERS_PER_PROCESS}): each costs about 1 MB of memory and its share of a core; run several processes with --shard i/n (docs/configuration.md, "Many clusters")`,
  );
}

/** Queued reloads start at least this long after the previous one started (see makeReloader). */
export const RELOAD_MIN_SPACING_MS = 1000;

/**
 * Reload the configuration as `run` loaded it (file, environment, flags): a good one is applied, a bad one
 * leaves the running configuration in place and is logged at error with the loader's file:line:col lines.
 * Reloads run one at a time, coalesced (see below); `cbwatch_config_last_reload_successful` says how the latest
 * one went and `cbwatch_config_reload_failures_total` counts the failed ones.
 */
export function makeReloader(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  daemon: Daemon,
  log: Logger,
  initial: Config,
  applyWeb: (next: WebSettings | undefined) => string[] = () => [],
  minSpacingMs = RELOAD_MIN_SPACING_MS,
): () => Promise<ReloadResult> {
  let current = initial;
  const once = async (): Promise<ReloadResult> => {
    log.info({ file: current.file }, 'reloading configuration');
    let next: Config;
    try {
      next = loadConfig(args.flags, env);
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      recordConfigLoad(false);
      log.error({ err: { message: error } }, 'configuration reload failed; the previous configuration stays in force');
      return { ok: false, error };
    }
    const fixed: string[] = [];
    if (next.web.listenHost !== current.web.listenHost || next.web.listenPort !== current.web.listenPort) fixed.push('web listen address');
    if (next.log.level !== current.log.level || next.log.format !== current.log.format) fixed.push('log level and format');
    if (next.maxBufferedBytes !== current.maxBufferedBytes) fixed.push('couchbase.max-buffered-bytes');
    if (next.maxAnswerValues !== current.maxAnswerValues) fixed.push('couchbase.max-answer-values');
    if (next.gcEveryAnswerBytes !== current.gcEveryAnswerBytes) fixed.push('collection.gc-every');
    const receiver = (c: Config): string => JSON.stringify({ ...c.webhooks.syncGateway, token: undefined });
    if (receiver(next) !== receiver(current)) fixed.push('webhooks (except a rotated token)');
    if (next.web.maxRequests !== current.web.maxRequests) fixed.push('web.max-requests');
    if (next.web.telemetryPath !== current.web.telemetryPath) fixed.push('web.telemetry-path');
    try {
      await daemon.reconfigure(next);
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      recordConfigLoad(false);
      log.error({ err: { message: error } }, 'configuration reload failed; the previous configuration stays in force');
      return { ok: false, error };
    }
    if (next.web.configFile !== current.web.configFile) fixed.push('--web.config.file');
    else if (next.web.configFile !== undefined) fixed.push(...applyWeb(next.web.settings));
    current = next;
    recordConfigLoad(true);
    if (fixed.length > 0) log.warn({ settings: fixed }, 'configuration reloaded; these settings take effect only after a restart');
    // The environment was read again too, but it is the one the process started with: an operator who changed
    // a variable and reloaded must not think the new value is in use. (Names only, never values.)
    const fromEnv = next.clusters.filter((c) => c.passwordSource?.startsWith('environment variable ') === true).map((c) => `cluster ${c.name}: password from ${c.passwordSource}`);
    const sg = next.webhooks.syncGateway;
    if (sg?.token !== undefined && sg.tokenFile === undefined) fromEnv.push('webhooks.sync_gateway: token from token_env');
    if (fromEnv.length > 0) log.info({ settings: fromEnv }, 'values from environment variables are those the process started with (a running process cannot see a changed environment); restart to change them');
    log.info({ clusters: next.clusters.length <= 20 ? next.clusters.map((c) => c.name) : `${next.clusters.length} clusters` }, 'configuration reloaded');
    warnIfTooManyClusters(next, log);
    return { ok: true };
  };
  // Coalesced (issue 39, item 4): one reload runs, at most one waits behind it, and every request that arrives
  // meanwhile (a SIGHUP, a POST /-/reload) joins the waiting one, which reads the files after all of them were
  // asked for and starts at least `minSpacingMs` after the previous one started. A flood of requests costs at
  // most one reload a second and its log lines, not one per request.
  let inFlight: Promise<ReloadResult> | undefined;
  let queued: Promise<ReloadResult> | undefined;
  let lastStart = -Infinity;
  const start = (): Promise<ReloadResult> => {
    lastStart = performance.now();
    const p: Promise<ReloadResult> = once().finally(() => {
      if (inFlight === p) inFlight = undefined;
    });
    inFlight = p;
    return p;
  };
  return () => {
    if (queued !== undefined) return queued;
    if (inFlight === undefined) return start();
    const after = async (): Promise<ReloadResult> => {
      const wait = lastStart + minSpacingMs - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      queued = undefined;
      return start();
    };
    queued = inFlight.then(after, after);
    return queued;
  };
}

/** POST /-/reload (only with --web.enable-lifecycle): 200 once applied, 500 with the reason otherwise. */
function lifecyclePlugin(reload: () => Promise<ReloadResult>): (app: FastifyInstance) => void {
  return (app) => {
    app.post('/-/reload', async (_req, reply) => {
      const r = await reload();
      if (r.ok) return reply.type('text/plain').send('configuration reloaded\n');
      return reply.code(500).type('text/plain').send(`failed to reload configuration: ${r.error}\n`);
    });
    app.route({
      method: ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'],
      url: '/-/reload',
      handler: async (_req, reply) => reply.code(405).header('allow', 'POST').type('text/plain').send('Method Not Allowed\n'),
    });
  };
}

export async function startWithWebConfig(config: Config, log: Logger, plugins: ReadonlyArray<(app: FastifyInstance) => void> = []): Promise<Daemon> {
  return (await startServing(config, log, plugins)).daemon;
}

/**
 * Start the daemon with the web config, and return how to apply a reloaded one: basic auth users, the TLS
 * certificate and key (and client CA, ciphers) and the per-request client-certificate rules follow at once;
 * turning TLS on or off, the handshake's client_auth_type, rate_limit, headers and http2 need a restart (named
 * in the returned list).
 */
async function startServing(
  config: Config,
  log: Logger,
  plugins: ReadonlyArray<(app: FastifyInstance) => void>,
): Promise<{ daemon: Daemon; applyWeb: (next: WebSettings | undefined) => string[] }> {
  if (!config.web.configFile) return { daemon: await startDaemon({ config, logger: log, plugins }), applyWeb: () => [] };
  // loadConfig validated the web config file already; its settings hold the TLS key: never log them.
  let settings = config.web.settings ?? loadWebConfig(config.web.configFile);
  let server = webConfigToServerOptions(settings);
  const daemon = await startDaemon({
    config,
    logger: log,
    plugins,
    // Indirections, so that a reload can change the users and the certificate rules of a running server.
    authorize: (header, client) => (server.authorize ? server.authorize(header, client) : Promise.resolve(true)),
    ...(server.https ? { https: server.https } : {}),
    ...(server.https ? { checkClientCertificate: (socket: TLSSocket) => server.checkClientCertificate?.(socket) } : {}),
    ...(server.rateLimit ? { rateLimit: server.rateLimit } : {}),
    ...(server.headers ? { headers: server.headers } : {}),
    ...(server.http2 !== undefined ? { http2: server.http2 } : {}),
  });
  const applyWeb = (next: WebSettings | undefined): string[] => {
    if (next === undefined) return ['web.config.file'];
    const restart: string[] = [];
    const was = settings;
    if ((was.tls === undefined) !== (next.tls === undefined)) restart.push('tls_server_config (TLS on or off)');
    else if (was.tls && next.tls) {
      if (was.tls.clientAuthType !== next.tls.clientAuthType) restart.push('tls_server_config.client_auth_type (in the handshake)');
      // The certificate, key, client CA and ciphers of new handshakes; connections open keep theirs.
      const { requestCert: _r, rejectUnauthorized: _u, ...context } = httpsOptions(next.tls);
      (daemon.app.server as unknown as { setSecureContext(o: object): void }).setSecureContext(context);
    }
    if (JSON.stringify(was.rateLimit) !== JSON.stringify(next.rateLimit)) restart.push('rate_limit');
    if (JSON.stringify(was.headers) !== JSON.stringify(next.headers)) restart.push('http_server_config.headers');
    if (was.http2 !== next.http2) restart.push('http_server_config.http2');
    settings = next;
    server = webConfigToServerOptions(next);
    return restart;
  };
  return { daemon, applyWeb };
}

async function serveUntilSignal(daemon: Daemon, log: Logger, term: Termination, extra: Array<() => Promise<void>> = [], reload?: () => unknown): Promise<number> {
  const sig = await untilSignal(term, log, reload);
  log.info({ signal: sig }, 'shutting down');
  await daemon.close();
  for (const stop of extra) await stop();
  return 0;
}

/** Whether a URL's host is this machine's loopback (what goes there never crosses a network). */
function loopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1' || host === '::ffff:127.0.0.1';
}

/**
 * One warning per cluster whose credentials would cross a network in clear: a username (and so a password)
 * sent as basic auth over an http:// URL to a host other than loopback. The URLs are shown (they hold no
 * credentials: loadConfig refuses userinfo); never the username or password.
 */
export function clearCredentialWarnings(clusters: Config['clusters']): Array<{ cluster: string; urls: string[]; message: string }> {
  const out: Array<{ cluster: string; urls: string[]; message: string }> = [];
  for (const c of clusters) {
    if (c.username === undefined && c.password === undefined) continue;
    const plain = [c.url, c.searchUrl, c.backupUrl].filter((u): u is string => u !== undefined).filter((u) => {
      try {
        const url = new URL(u);
        return url.protocol === 'http:' && !loopback(url);
      } catch {
        return false;
      }
    });
    if (plain.length === 0) continue;
    out.push({
      cluster: c.name,
      urls: plain,
      message: `the Couchbase credentials of cluster ${c.name} go in clear over http:// to ${plain.map((u) => new URL(u).host).join(', ')}: use https:// (port 18091) so that nobody on the network reads them`,
    });
  }
  return out;
}

async function commandRun(args: ParsedArgs, out: Out): Promise<number> {
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
  // No answer budget here: answers are buffered in the collection worker, which sets its own.
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
  // A SIGHUP while the server started came after the file was read: the file may have changed since, so it is
  // reloaded now rather than lost. (One before the file was read needs nothing: the file read is the newest.)
  const late = ignoredHangups() > hangupsBeforeLoad;
  const served = serveUntilSignal(daemon, log, term, [], reload);
  if (late && !term.received()) {
    log.info('SIGHUP received during start-up: reloading the configuration');
    void reload();
  }
  return served;
}

async function commandCheck(args: ParsedArgs, out: Out, err: Out): Promise<number> {
  const config = loadConfig(args.flags, process.env);
  for (const w of clearCredentialWarnings(config.clusters)) err(`cbwatch: warning: ${w.message}\n`);
  if (config.clusters.length === 0 && config.shard !== undefined) {
    out(`no cluster falls in shard ${config.shard.index}/${config.shard.total}: nothing to check\n`);
    return 0;
  }
  if (config.clusters.length === 0) throw new ConfigError('no cluster configured: give --couchbase.url or a --config file with clusters');
  const [{ setAnswerBudget }, { setAnswerValueLimit }, { runCheck }] = await Promise.all([import('./couchbase/answer-budget.js'), import('./couchbase/answer-values.js'), import('./check.js')]);
  setAnswerBudget(config.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES);
  setAnswerValueLimit(config.maxAnswerValues ?? DEFAULT_MAX_ANSWER_VALUES);
  const log = createLogger({ level: args.flags['log.level'] ? config.log.level : 'error', format: config.log.format });
  return runCheck(config, out, log);
}

/**
 * src/healthcheck.cts, compiled: a CommonJS file, so that Docker's HEALTHCHECK (dist/healthcheck.cjs) starts
 * without Node's ES module loader. Loaded from dist/ also when this module runs from src/ (the tests), as the
 * collection worker is.
 */
function healthcheckModule(): typeof import('./healthcheck.cjs') {
  return createRequire(import.meta.url)(join(PACKAGE_ROOT, 'dist', 'healthcheck.cjs')) as typeof import('./healthcheck.cjs');
}

async function commandHealthcheck(args: ParsedArgs, out: Out, err: Out): Promise<number> {
  // What bin/cbwatch.js's light path does (src/healthcheck.cts), once the command line has passed the strict
  // parser: only the web settings locate the daemon; the configuration file is not read.
  const { runHealthcheck } = healthcheckModule();
  return runHealthcheck({ 'web.listen-address': args.flags['web.listen-address'], 'web.config.file': args.flags['web.config.file'] }, process.env, out, err);
}

function simOptions(args: ParsedArgs, scenario: string) {
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

async function commandSimulate(args: ParsedArgs, out: Out): Promise<number> {
  const { createSimulator } = await import('./simulator/index.js');
  const sim = createSimulator(simOptions(args, 'default'));
  const term = listenForTermination();
  const port = args.flags.port === undefined ? 8091 : Number(args.flags.port);
  const url = await sim.listen(port, typeof args.flags.host === 'string' ? args.flags.host : '127.0.0.1');
  const u = sim.ctx.options.users;
  out(`cbwatch simulator (Couchbase Server ${sim.ctx.options.profile.version}, scenario ${sim.ctx.options.scenario}) listening on ${url}\n`);
  out(`  admin user:   ${u.admin.username} / ${u.admin.password}\n`);
  out(`  limited user: ${u.limited.username} / ${u.limited.password}\n`);
  const cmd = commandName({ env: process.env, cwd: process.cwd(), root: PACKAGE_ROOT });
  out(`  try: CBWATCH_COUCHBASE_PASSWORD=${u.admin.password} ${cmd} check --couchbase.url ${url} --couchbase.username ${u.admin.username}\n`);
  await untilSignal(term);
  await sim.close();
  return 0;
}

/** Where `cbwatch demo` serves when neither --web.listen-address nor CBWATCH_WEB_LISTEN_ADDRESS says: this machine only. */
export const DEMO_LISTEN_ADDRESS = '127.0.0.1:9420';

/**
 * The environment variables that cannot apply to a demo, which watches its own simulated cluster: those that
 * name a configuration file, a cluster or its credentials, or a shard (a shard could drop the demo's cluster).
 * Every other CBWATCH_* variable applies as it does to `run` (listen address, web config, limits, log).
 */
export const DEMO_IGNORED_ENV = [
  'CBWATCH_CONFIG',
  'CBWATCH_COUCHBASE_URL',
  'CBWATCH_COUCHBASE_USERNAME',
  'CBWATCH_COUCHBASE_PASSWORD',
  'CBWATCH_COUCHBASE_PASSWORD_FILE',
  'CBWATCH_COUCHBASE_CLUSTER_NAME',
  'CBWATCH_COUCHBASE_CA_FILE',
  'CBWATCH_COUCHBASE_INSECURE_SKIP_VERIFY',
  'CBWATCH_SHARD',
] as const;

export function demoEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const k of DEMO_IGNORED_ENV) delete out[k];
  return out;
}

/** The demo's flags for loading: its own cluster only, and 127.0.0.1:9420 unless an address was given. */
function demoFlags(flags: ParsedArgs['flags'], env: NodeJS.ProcessEnv): ParsedArgs['flags'] {
  const given = flags['web.listen-address'] !== undefined || (env.CBWATCH_WEB_LISTEN_ADDRESS ?? '') !== '';
  return { ...flags, 'couchbase.url': undefined, config: undefined, ...(given ? {} : { 'web.listen-address': DEMO_LISTEN_ADDRESS }) };
}

async function commandDemo(args: ParsedArgs, out: Out): Promise<number> {
  const { createSimulator } = await import('./simulator/index.js');
  const sim: Simulator = createSimulator(simOptions(args, 'demo'));
  const term = listenForTermination();
  const simPort = args.flags.port === undefined ? 0 : Number(args.flags.port);
  const simUrl = await sim.listen(simPort).catch((e: unknown) => {
    // Not the exporter's address: main()'s hint names --web.listen-address, this one --port.
    throw new Error(`cannot listen for the simulator on 127.0.0.1:${simPort}: ${(e as Error).message} (choose another --port)`);
  });
  let base: Config;
  try {
    base = loadConfig(demoFlags(args.flags, process.env), demoEnvironment(process.env), { allowNoClusters: true });
  } catch (err) {
    await sim.close();
    throw err;
  }
  // --[no-]collector.<name> and CBWATCH_COLLECTOR_<NAME> switch the demo's collectors as they do run's.
  const problems: string[] = [];
  const switches = collectorSwitches(args.flags, demoEnvironment(process.env), problems);
  if (problems.length > 0) {
    await sim.close();
    throw new ConfigError(problems.join('\n'));
  }
  const collectors = applySwitches(resolveCollectors(), switches);
  // The demo polls often so that dashboards fill quickly.
  for (const c of Object.values(collectors)) {
    c.interval = Math.min(c.interval, 10_000);
    c.timeout = Math.min(c.timeout, 9_000);
  }
  const users = sim.ctx.options.users;
  const config: Config = {
    ...base,
    clusters: [defaultClusterConfig({ name: 'demo', url: simUrl, username: users.admin.username, password: users.admin.password, collectors })],
  };
  const formatGiven = args.flags['log.format'] !== undefined || (process.env.CBWATCH_LOG_FORMAT ?? '') !== '';
  const log = createLogger({ level: config.log.level, format: formatGiven ? config.log.format : 'logfmt' });
  let daemon: Daemon;
  try {
    // --web.config.file (TLS, basic auth, rate limit, headers) applies to the demo as to `run`.
    daemon = await startWithWebConfig(config, log);
  } catch (err) {
    // The simulator already listens: without closing it the process would hang instead of exiting 1.
    await sim.close();
    throw err;
  }
  const stops: Array<() => Promise<void>> = [() => sim.close()];
  out(`\ncbwatch ${packageVersion()} demo\n`);
  out(`  exporter:   ${daemon.url}/        (landing page)\n`);
  const metricsUrl = `${daemon.url}${config.web.telemetryPath ?? DEFAULT_TELEMETRY_PATH}`;
  out(`  metrics:    ${metricsUrl}\n`);
  out(`  simulator:  ${simUrl}  (scenario ${sim.ctx.options.scenario}; user ${users.admin.username} / ${users.admin.password})\n`);
  if (args.flags['with-prometheus']) {
    const stack = await startStack(daemon.url, config.web.telemetryPath ?? DEFAULT_TELEMETRY_PATH, log, { prometheusPort: args.flags['prometheus.port'], alertmanagerPort: args.flags['alertmanager.port'] });
    if (stack) {
      stops.push(stack.stop);
      out(`  prometheus:   ${stack.prometheusUrl}\n`);
      out(`  alertmanager: ${stack.alertmanagerUrl}\n`);
    } else out('  prometheus:   not started (install Debian packages prometheus and prometheus-alertmanager)\n');
  }
  out(
    demoNextSteps({
      exporterUrl: daemon.url,
      metricsUrl,
      simUrl,
      username: users.admin.username,
      password: users.admin.password,
      withPrometheus: args.flags['with-prometheus'] === true,
      cmd: commandName({ env: process.env, cwd: process.cwd(), root: PACKAGE_ROOT }),
      ...packagePaths(),
    }),
  );
  out('Press Ctrl-C to stop.\n\n');
  return serveUntilSignal(daemon, log, term, stops);
}

/**
 * How a hint names cbwatch: the way this process was started. `cbwatch` when the first `cbwatch` on PATH is this
 * package's (a global npm install links bin/cbwatch.js there; the Debian package's /usr/bin/cbwatch runs
 * ../lib/cbwatch), else the launcher by path (`./bin/cbwatch.js` from the package root, an absolute path from
 * elsewhere). Never `npx cbwatch`: outside a clone npm would look the name up in its registry, where the name
 * `cbwatch` is not this project's (whoever publishes it would be run).
 */
export function commandName(o: { readonly env: NodeJS.ProcessEnv; readonly cwd: string; readonly root: string }): string {
  const real = (p: string): string | undefined => {
    try {
      return realpathSync(p);
    } catch {
      return undefined;
    }
  };
  const root = real(o.root) ?? o.root;
  const launcher = join(root, 'bin', 'cbwatch.js');
  for (const dir of (o.env.PATH ?? '').split(delimiter)) {
    // A relative PATH entry depends on the directory the hint is typed in: not one to rely on.
    if (!isAbsolute(dir)) continue;
    const found = real(join(dir, 'cbwatch'));
    if (found === undefined) continue;
    try {
      accessSync(found, constants.X_OK);
    } catch {
      continue;
    }
    if (found === launcher || real(join(dirname(found), '..', 'lib', 'cbwatch')) === root) return 'cbwatch';
    // The shell would run this other cbwatch: name ours by its path.
    break;
  }
  return relative(o.cwd, launcher) === join('bin', 'cbwatch.js') ? './bin/cbwatch.js' : launcher;
}

/** The installed package's directories a hint names, as absolute paths (symbolic links resolved: the .deb's docs/). */
export function packagePaths(root: string = PACKAGE_ROOT): { readonly dashboards: string; readonly docs: string } {
  const abs = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  return { dashboards: abs(join(root, 'dashboards')), docs: abs(join(root, 'docs')) };
}

/** What to try after `cbwatch demo` starts: the first five minutes of a newcomer. */
export function demoNextSteps(o: {
  exporterUrl: string;
  /** The metrics URL in effect (--web.telemetry-path). */
  metricsUrl: string;
  simUrl: string;
  username: string;
  password: string;
  withPrometheus: boolean;
  /** How to name cbwatch (commandName). */
  cmd: string;
  /** Absolute paths of the dashboards and docs directories (packagePaths). */
  dashboards: string;
  docs: string;
}): string {
  const lines = [
    '',
    'Try next:',
    `  - Open ${o.exporterUrl}/ : the scenario's problems (a flapping node, a failed-over node, a CA expiring in`,
    '    less than 20 days, a paused and a failing XDCR replication, a slow search query...) are listed under "Needs a look".',
    o.withPrometheus
      ? '  - In Prometheus (above), Alerts: the shipped rules fire as their `for:` durations pass.'
      : `  - ${o.cmd} demo --with-prometheus : also start Prometheus and Alertmanager with the shipped alert rules`,
    ...(o.withPrometheus ? [] : ['    (Debian packages prometheus and prometheus-alertmanager).']),
    `  - Grafana 10.4+: import ${join(o.dashboards, '*.json')} (pick a Prometheus scraping ${o.metricsUrl});`,
    `    see ${join(o.dashboards, 'README.md')}.`,
    '  - Poll the simulator once and print a table per collector:',
    `    CBWATCH_COUCHBASE_PASSWORD=${o.password} ${o.cmd} check --couchbase.url ${o.simUrl} --couchbase.username ${o.username}`,
    `  - A real cluster (a read-only user with the roles in ${join(o.docs, 'configuration.md')}; the password never on the command line):`,
    '    export CBWATCH_COUCHBASE_PASSWORD=...',
    `    ${o.cmd} check --couchbase.url https://cb1.example.com:18091 --couchbase.username cbwatch`,
    `    ${o.cmd} run   --couchbase.url https://cb1.example.com:18091 --couchbase.username cbwatch`,
    '',
  ];
  return `${lines.join('\n')}\n`;
}

async function startStack(
  exporterUrl: string,
  metricsPath: string,
  log: Logger,
  ports: { prometheusPort: number | undefined; alertmanagerPort: number | undefined },
): Promise<{ prometheusUrl: string; alertmanagerUrl: string; stop: () => Promise<void> } | undefined> {
  try {
    const mod = (await import('./tools/prometheus-stack.js')) as {
      startPrometheusStack?: (o: { exporterUrl: string; metricsPath?: string; prometheusPort?: number; alertmanagerPort?: number }) => Promise<{ prometheusUrl: string; alertmanagerUrl: string; stop: () => Promise<void> }>;
    };
    if (!mod.startPrometheusStack) return undefined;
    return await mod.startPrometheusStack({
      exporterUrl,
      metricsPath,
      ...(ports.prometheusPort === undefined ? {} : { prometheusPort: ports.prometheusPort }),
      ...(ports.alertmanagerPort === undefined ? {} : { alertmanagerPort: ports.alertmanagerPort }),
    });
  } catch (err) {
    log.warn({ err }, 'could not start Prometheus and Alertmanager');
    return undefined;
  }
}

export async function main(argv: readonly string[], out: Out = stdout, err: Out = stderr): Promise<number> {
  // bin/cbwatch.js installed it before loading this module; callers of main() that did not get it here.
  installHangupHandler();
  // `rules` has flags of its own (a repeatable --set), so it is parsed apart from the daemon's flags.
  if (argv[0] === 'rules') {
    // --version works with every command, as --help does (rules answers its own --help).
    const words = argv.slice(1, argv.includes('--') ? argv.indexOf('--') : undefined);
    if (words.includes('--version') && !words.includes('--help') && !words.includes('-h')) {
      out(versionText());
      return 0;
    }
    try {
      const { commandRules } = await import('./rules-command.js');
      return commandRules(argv.slice(1), out);
    } catch (e) {
      if (e instanceof ConfigError) {
        err(`cbwatch: configuration error: ${e.message}\n`);
        err("run 'cbwatch rules --help' for usage\n");
        return 2;
      }
      err(`cbwatch: ${(e as Error).message}\n`);
      return 1;
    }
  }
  let args: ParsedArgs;
  try {
    args = parseArgs([...argv]);
  } catch (e) {
    err(`cbwatch: ${(e as Error).message}\n`);
    err("run 'cbwatch --help' for usage\n");
    return 2;
  }
  try {
    switch (args.command) {
      case 'help':
        // The reference stays relative: packaging/release.sh makes the .deb's manual page from this text, where an
        // absolute path would be the build's staging directory.
        out(usage());
        return 0;
      case 'version':
        out(versionText());
        return 0;
      case 'check':
        return await commandCheck(args, out, err);
      case 'demo':
        return await commandDemo(args, out);
      case 'simulate':
        return await commandSimulate(args, out);
      case 'healthcheck':
        // Docker reserves exit code 2 in a HEALTHCHECK: a bad configuration is "unhealthy" (1) here.
        return await commandHealthcheck(args, out, err).catch((e: unknown) => {
          err(`cbwatch healthcheck: ${e instanceof ConfigError ? `configuration error: ${e.message}` : (e as Error).message}\n`);
          return 1;
        });
      default:
        return await commandRun(args, out);
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      err(`cbwatch: configuration error: ${e.message}\n`);
      return 2;
    }
    const code = (e as { code?: unknown }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      err(`cbwatch: cannot listen: ${(e as Error).message} (choose another --web.listen-address)\n`);
      return 1;
    }
    err(`cbwatch: ${(e as Error).message}\n`);
    return 1;
  }
}
