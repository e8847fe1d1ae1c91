/**
 * The daemon's lifecycle: the signals that stop it (SIGINT, SIGTERM) and reload it (SIGHUP), the configuration
 * reloader behind SIGHUP and POST /-/reload, and that route; SIGUSR2, which writes the threads' heap snapshots when
 * `--debug.heap-snapshot-dir` is set. Used by `run`, `demo` and `simulate`.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { getHeapSnapshot } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ParsedArgs } from './config/flags.js';
import { CLUSTERS_PER_PROCESS } from './config/defaults.js';
import { registerConfigSecrets } from './config/secrets.js';
import type { Config } from './config/types.js';
import type { WebSettings } from './config/webconfig.js';
import type { Daemon } from './daemon.js';
import { onHangup } from './hangup.js';
import { recordConfigLoad } from './metrics/self.js';
import { PACKAGE_ROOT } from './paths.js';
import { registerSecret } from './redact.js';
import type { ReadReply, ReadRequest } from './reload-worker.js';

// Through this module, not from '../hangup.js' in src/commands/: the bundle keeps exactly './hangup.js' outside
// (scripts/bundle.mjs), so that the launcher and the CLI share one hangup module.
export { ignoredHangups } from './hangup.js';

/** The first SIGINT or SIGTERM, listened for from the moment a long-running command begins. */
export interface Termination {
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
 * has started, instead of meeting the default action in the gap before a later listener (the process would die
 * with SIGTERM, its worker and server not closed). From the first of them on, a SIGHUP is logged and ignored: a
 * reload during shutdown would race the shutdown. The SIGHUP listener itself was installed before anything else
 * (src/hangup.ts) and stays until exit.
 */
export function listenForTermination(): Termination {
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
export function untilSignal(term: Termination, log?: Logger, onHangupDo?: () => unknown): Promise<NodeJS.Signals> {
  if (log) term.setLog(log);
  if (!term.received()) {
    onHangup(() => {
      if (onHangupDo) void onHangupDo();
      else log?.warn('SIGHUP ignored: nothing to reload');
    });
  }
  return term.signal;
}

/** Serve until SIGINT or SIGTERM (SIGHUP reloads meanwhile), then close the daemon and the `extra` services. */
export async function serveUntilSignal(daemon: Daemon, log: Logger, term: Termination, extra: Array<() => Promise<void>> = [], reload?: () => unknown): Promise<number> {
  const sig = await untilSignal(term, log, reload);
  log.info({ signal: sig }, 'shutting down');
  await daemon.close();
  for (const stop of extra) await stop();
  return 0;
}

export type ReloadResult = { readonly ok: true } | { readonly ok: false; readonly error: string };

/** Past CLUSTERS_PER_PROCESS clusters, a warning with the advice to shard (at start and after a reload). */
export function warnIfTooManyClusters(config: Config, log: Logger): void {
  if (config.clusters.length <= CLUSTERS_PER_PROCESS) return;
  log.warn(
    { clusters: config.clusters.length, per_process: CLUSTERS_PER_PROCESS },
    `more clusters than one process should carry (${CLUSTERS_PER_PROCESS}): each costs about 1 MB of memory and its share of a core; run several processes with --shard i/n (docs/configuration.md, "Many clusters")`,
  );
}

/** Queued reloads start at least this long after the previous one started (see makeReloader). */
export const RELOAD_MIN_SPACING_MS = 1000;

/**
 * The reload's worker runs the built bundle (scripts/bundle.mjs), from src/ (tests) and dist/ alike, as the
 * collection worker does.
 */
export const RELOAD_WORKER_FILE = join(PACKAGE_ROOT, 'dist', 'bundle', 'reload-worker.js');

/** Reads the configuration as `run` loaded it; rejects with the loader's message. */
export type ConfigReader = (flags: ParsedArgs['flags'], env: NodeJS.ProcessEnv) => Promise<Config>;

/**
 * Read, parse and validate the configuration in a worker thread of its own (src/reload-worker.ts), which ends
 * with the reload. Resolves with the worker's answer; rejects only when the worker died without one.
 */
export function readInWorker(flags: ParsedArgs['flags'], env: NodeJS.ProcessEnv): Promise<ReadReply> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const request: ReadRequest = { flags, env: { ...env } };
    const w = new Worker(RELOAD_WORKER_FILE, { workerData: request });
    // A shutdown does not wait for a reload being read.
    w.unref();
    w.once('message', (reply: ReadReply) => {
      answered = true;
      resolve(reply);
    });
    w.once('error', (e) => {
      if (!answered) reject(new Error(`the configuration reader failed: ${e.message}`));
    });
    w.once('exit', (code) => {
      if (!answered) reject(new Error(`the configuration reader stopped (exit code ${code}) before answering`));
    });
  });
}

/** A Uint8Array that crossed a structured clone, as the Buffer it was. */
function asBuffer(b: Uint8Array): Buffer;
function asBuffer(b: Uint8Array | undefined): Buffer | undefined;
function asBuffer(b: Uint8Array | undefined): Buffer | undefined {
  return b === undefined ? undefined : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * The default reader: the configuration read off this thread (readInWorker), made whole again here. The web
 * config's PEM Buffers come back as Buffers, and the secrets the loader registered with the worker's redactor
 * are registered with this thread's, as loadConfig does when it runs here.
 */
export const readConfigOffThread: ConfigReader = async (flags, env) => {
  const reply = await readInWorker(flags, env);
  if (!reply.ok) throw new Error(reply.error);
  const config = reply.config;
  const tls = config.web.settings?.tls;
  const revived: Config =
    config.web.settings === undefined || tls === undefined
      ? config
      : { ...config, web: { ...config.web, settings: { ...config.web.settings, tls: { ...tls, cert: asBuffer(tls.cert), key: asBuffer(tls.key), clientCa: asBuffer(tls.clientCa) } } } };
  registerConfigSecrets(revived);
  // An inline key (`key:` in the web config) is registered by the loader as the text it was given.
  if (tls !== undefined && tls.keyFile === '(inline)') registerSecret(asBuffer(tls.key).toString('utf8'));
  return revived;
};

/**
 * Reload the configuration as `run` loaded it (file, environment, flags): a good one is applied, a bad one
 * leaves the running configuration in place and is logged at error with the loader's file:line:col lines.
 * The file is read, parsed and validated off this thread (`read`, by default readConfigOffThread), so the
 * thread that serves /metrics goes on answering while a large or hostile file is judged. Reloads run one at a
 * time, coalesced (see below); `cbwatch_config_last_reload_successful` says how the latest one went and
 * `cbwatch_config_reload_failures_total` counts the failed ones.
 */
export function makeReloader(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  daemon: Daemon,
  log: Logger,
  initial: Config,
  applyWeb: (next: WebSettings | undefined) => string[] = () => [],
  minSpacingMs = RELOAD_MIN_SPACING_MS,
  read: ConfigReader = readConfigOffThread,
): () => Promise<ReloadResult> {
  let current = initial;
  const failed = (e: unknown): ReloadResult => {
    const error = e instanceof Error ? e.message : String(e);
    recordConfigLoad(false);
    log.error({ err: { message: error } }, 'configuration reload failed; the previous configuration stays in force');
    return { ok: false, error };
  };
  const once = async (): Promise<ReloadResult> => {
    log.info({ file: current.file }, 'reloading configuration');
    let next: Config;
    try {
      next = await read(args.flags, env);
    } catch (e) {
      return failed(e);
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
      return failed(e);
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
  // Coalesced: one reload runs, at most one waits behind it, and every request that arrives meanwhile (a SIGHUP,
  // a POST /-/reload) joins the waiting one, which reads the files after all of them were asked for and starts
  // at least `minSpacingMs` after the previous one started. A flood of requests costs at most one reload a
  // second and its log lines, not one per request.
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
export function lifecyclePlugin(reload: () => Promise<ReloadResult>): (app: FastifyInstance) => void {
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

/** The snapshot files of one SIGUSR2, as `writeHeapSnapshots` names them. */
export interface HeapSnapshotFiles {
  /** The collection worker's; absent when collection runs on the HTTP thread. */
  readonly collection?: string;
  /** This thread's (the whole daemon's when the collection runs here). */
  readonly http: string;
}

/** Streams a snapshot into a new file only the daemon's user may read: a heap holds the credentials. */
async function writeSnapshot(snapshot: Readable, file: string): Promise<void> {
  await pipeline(snapshot, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
}

/**
 * Write heap snapshots into `dir`: the collection worker's first (while the HTTP thread goes on serving), then this
 * thread's, named `cbwatch-<UTC time>-<pid>-{collection,http}.heapsnapshot`. With the collection on this thread
 * (`--collection.inline`), one snapshot holds everything: `cbwatch-<UTC time>-<pid>-daemon.heapsnapshot`.
 */
export async function writeHeapSnapshots(dir: string, daemon: Pick<Daemon, 'collectionHeapSnapshot'>): Promise<HeapSnapshotFiles> {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const name = (thread: string): string => join(dir, `cbwatch-${stamp}-${process.pid}-${thread}.heapsnapshot`);
  let collection: string | undefined;
  if (daemon.collectionHeapSnapshot) {
    collection = name('collection');
    await writeSnapshot(await daemon.collectionHeapSnapshot(), collection);
  }
  const http = name(collection === undefined ? 'daemon' : 'http');
  await writeSnapshot(getHeapSnapshot(), http);
  return { ...(collection === undefined ? {} : { collection }), http };
}

/**
 * From now until the returned function is called, SIGUSR2 writes the heap snapshots into `dir`
 * (`--debug.heap-snapshot-dir`), one set at a time: a signal while one is being written is logged and ignored.
 * Without `dir` a SIGUSR2 is logged and ignored rather than ending the process (its default action).
 */
export function listenForHeapSnapshots(dir: string | undefined, daemon: Pick<Daemon, 'collectionHeapSnapshot'>, log: Logger): () => void {
  let writing = false;
  const on = (): void => {
    if (dir === undefined) {
      log.warn('SIGUSR2 ignored: heap snapshots are off (set --debug.heap-snapshot-dir to a directory to turn them on)');
      return;
    }
    if (writing) {
      log.warn('SIGUSR2 ignored: heap snapshots are being written');
      return;
    }
    writing = true;
    log.info({ dir }, 'writing heap snapshots');
    writeHeapSnapshots(dir, daemon)
      .then((files) => log.info({ files }, 'heap snapshots written'))
      .catch((e: unknown) => log.error({ err: { message: e instanceof Error ? e.message : String(e) } }, 'heap snapshots failed'))
      .finally(() => {
        writing = false;
      });
  };
  process.on('SIGUSR2', on);
  return () => void process.off('SIGUSR2', on);
}
