/**
 * `cbwatch healthcheck`: ask a running cbwatch whether it is alive (GET /-/healthy), reading the same flags,
 * environment and web config as `run` so it finds the daemon wherever it listens: another address or port,
 * TLS, basic auth. Exit 0 when it answers 200, 1 otherwise. Meant for Docker's HEALTHCHECK (the slim image
 * has no curl) and other supervisors; it needs no Couchbase and never polls one.
 *
 * A light entry point: Docker runs the check again and again, and loading the CLI (the daemon, fastify,
 * prom-client, zod, pino, undici) each time costs far more CPU and memory than asking one URL does
 * (bench/RESULTS.md, "Docker HEALTHCHECK probe"). bin/cbwatch.js sends
 * `cbwatch healthcheck …` here before it imports dist/bundle/cli.js, and this module imports only Node's own
 * modules (node:net; node:tls when the web config turns TLS on) and the `yaml` package, only when a web config
 * file is given (test/healthcheck-probe.test.ts checks the import graph). Only what locates the daemon is read:
 * `--web.listen-address` / CBWATCH_WEB_LISTEN_ADDRESS and `--web.config.file` / CBWATCH_WEB_CONFIG_FILE (a flag
 * wins over its variable; an empty variable counts as unset). The rest of run's command line is accepted, so
 * it can be copied, and not read: the configuration file is the daemon's business (`run --config.check` checks
 * it). A command line this module does not know (an unknown flag, --help, another command's flag) goes to the
 * full CLI, which parses it strictly and says what is wrong.
 *
 * - The address: the listen address, with a wildcard host (0.0.0.0, ::, or none) replaced by the loopback.
 * - TLS: the server's certificate names the host clients use, not the loopback, so it is not verified here
 *   (the check is of our own process on this machine, not of the network path).
 * - Basic auth: /-/healthy is exempt (as in the exporter-toolkit), so no password is needed.
 * - Client certificates: when the web config requires one, the server's own certificate and key are
 *   presented. That passes RequireAnyClientCert, and RequireAndVerifyClientCert when the client CA also
 *   signed the server certificate; otherwise the check fails and says why.
 */
import fs = require('node:fs');
import net = require('node:net');
import path = require('node:path');
import util = require('node:util');

const { readFileSync } = fs;
const { dirname, isAbsolute, resolve } = path;

interface HealthcheckTarget {
  readonly url: string;
  /** For https: what the client presents and accepts. Key material inside: never print this object. */
  readonly tls?: { readonly rejectUnauthorized: false; readonly cert?: Buffer | undefined; readonly key?: Buffer | undefined };
}

/** What the probe needs of the web settings (a subset of Config['web'], so a loaded Config fits too). */
interface ProbeWebSettings {
  readonly listenHost: string;
  readonly listenPort: number;
  readonly settings?:
    | { readonly tls: { readonly clientAuthType: string; readonly cert?: Buffer | undefined; readonly key?: Buffer | undefined } | undefined }
    | undefined;
}

/** Where the daemon configured by `config` answers, as seen from this machine. */
function healthcheckTarget(config: { readonly web: ProbeWebSettings }): HealthcheckTarget {
  const { listenHost, listenPort, settings } = config.web;
  let host = listenHost;
  if (host === '' || host === '0.0.0.0') host = '127.0.0.1';
  else if (host === '::' || host === '[::]') host = '::1';
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const tls = settings?.tls;
  if (tls === undefined) return { url: `http://${hostPart}:${listenPort}/-/healthy` };
  const needsCert = tls.clientAuthType === 'RequireAnyClientCert' || tls.clientAuthType === 'RequireAndVerifyClientCert';
  return {
    url: `https://${hostPart}:${listenPort}/-/healthy`,
    tls: { rejectUnauthorized: false, ...(needsCert ? { cert: tls.cert, key: tls.key } : {}) },
  };
}

interface HealthcheckResult {
  readonly ok: boolean;
  /** One line for the user: the URL and the status, or why it failed (never key material). */
  readonly message: string;
}

/**
 * GET the target over a socket of its own: one HTTP/1.1 request (`Connection: close`), and the answer's status
 * line (RFC 9112, section 4: `HTTP/1.1 200 OK`) is all that is read. Neither node:http nor node:https is loaded:
 * node:http alone is a large part of the probe's peak memory (bench/RESULTS.md, "Docker HEALTHCHECK probe").
 * With TLS, node:tls, loaded only then.
 */
function probe(target: HealthcheckTarget, timeoutMs = 5000): Promise<HealthcheckResult> {
  const url = new URL(target.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const request = `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUser-Agent: cbwatch-healthcheck\r\nAccept: */*\r\nConnection: close\r\n\r\n`;
  return new Promise((resolvePromise) => {
    let answer = '';
    let settled = false;
    const finish = (ok: boolean, what: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolvePromise({ ok, message: `${target.url}: ${what}` });
    };
    const socket =
      url.protocol === 'https:'
        ? (require('node:tls') as typeof import('node:tls')).connect(
            // SNI only for a name (RFC 6066 forbids an address); the server's certificate is not verified (see above).
            { host, port, ...(net.isIP(host) === 0 ? { servername: host } : {}), ...(target.tls ?? {}) },
            () => socket.write(request),
          )
        : net.connect({ host, port }, () => socket.write(request));
    const timer = setTimeout(() => finish(false, `no answer within ${timeoutMs} ms`), timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      const eol = answer.indexOf('\r\n');
      if (eol < 0) {
        if (answer.length > 8192) finish(false, 'not an HTTP answer');
        return;
      }
      const status = /^HTTP\/\d(?:\.\d)? (\d{3})(?: |$)/.exec(answer.slice(0, eol))?.[1];
      if (status === undefined) finish(false, 'not an HTTP answer');
      else finish(status === '200', `${status}${status === '200' ? ' healthy' : ' not healthy'}`);
    });
    socket.on('end', () => finish(false, 'closed without an HTTP answer'));
    socket.on('close', () => finish(false, 'closed without an HTTP answer'));
    socket.on('error', (err: NodeJS.ErrnoException) => finish(false, err.code ?? err.message));
  });
}

// --- the command line ----------------------------------------------------------------------------------------

/**
 * Run's flags, which healthcheck accepts (src/config/flags.ts, OPTIONS; test/healthcheck-probe.test.ts checks
 * this list against it). Only the two web flags are read.
 */
const RUN_VALUE_FLAGS: readonly string[] = [
  'config',
  'web.listen-address',
  'web.config.file',
  'web.telemetry-path',
  'web.max-requests',
  'couchbase.max-buffered-bytes',
  'couchbase.max-answer-values',
  'collection.gc-every',
  'log.level',
  'log.format',
  'couchbase.url',
  'couchbase.username',
  'couchbase.cluster-name',
  'couchbase.password-file',
  'couchbase.ca-file',
  'shard',
  'debug.heap-snapshot-dir',
];
/** The collectors, for `--collector.<name>` and `--no-collector.<name>` (src/config/schema.ts, COLLECTOR_NAMES). */
const COLLECTORS: readonly string[] = ['buckets', 'bucket_stats', 'xdcr', 'nodes', 'tasks', 'autofailover', 'certificates', 'security', 'collections', 'search', 'backup', 'index', 'search_index', 'eventing', 'query', 'analytics', 'processes'];
const RUN_SWITCH_FLAGS: readonly string[] = [
  'web.enable-lifecycle',
  'couchbase.insecure-skip-verify',
  'collection.inline',
  ...COLLECTORS.flatMap((c) => [`collector.${c}`, `no-collector.${c}`]),
];

/** The flags that locate the daemon, as typed (undefined: not given). */
interface HealthcheckFlags {
  readonly 'web.listen-address'?: string | undefined;
  readonly 'web.config.file'?: string | undefined;
}

/**
 * healthcheck's own arguments (after the word `healthcheck`) → its web flags; undefined when this light
 * parser does not take the command line (an unknown flag, a positional, --help, a malformed one), which the
 * full CLI then parses and judges.
 */
function parseHealthcheckArgs(argv: readonly string[]): HealthcheckFlags | undefined {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const f of RUN_VALUE_FLAGS) options[f] = { type: 'string' };
  for (const f of RUN_SWITCH_FLAGS) options[f] = { type: 'boolean' };
  let values: Record<string, string | boolean | undefined>;
  try {
    const parsed = util.parseArgs({ args: [...argv], options, allowPositionals: false, strict: true });
    values = parsed.values as Record<string, string | boolean | undefined>;
  } catch {
    return undefined;
  }
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  return { 'web.listen-address': str('web.listen-address'), 'web.config.file': str('web.config.file') };
}

// --- the web settings ----------------------------------------------------------------------------------------

/** A setting the probe cannot use; the message names the flag, variable or key (and never a secret). */
class HealthcheckConfigError extends Error {
  override readonly name = 'HealthcheckConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

function pick(flags: HealthcheckFlags, flag: keyof HealthcheckFlags, env: Env, variable: string): { value: string; source: string } | undefined {
  const v = flags[flag];
  if (v !== undefined) {
    if (v.trim() === '') throw new HealthcheckConfigError(`--${flag}: must not be empty`);
    return { value: v, source: `--${flag}` };
  }
  const e = env[variable];
  // An empty variable counts as unset (as for run: compose files and Helm charts pass `VAR=` for "not set").
  return e === undefined || e === '' ? undefined : { value: e, source: variable };
}

/** As parseListenAddress (src/config/load.ts), whose messages it repeats; a test holds the two together. */
function parseProbeListenAddress(text: string, source: string): { host: string; port: number } {
  const t = text.trim();
  const m = /^\[([0-9A-Fa-f:.%\w]+)\]:(\d{1,5})$/.exec(t) ?? /^([^:[\]\s]*):(\d{1,5})$/.exec(t);
  if (!m) {
    const hint = (t.match(/:/g) ?? []).length > 1 ? ' (put an IPv6 address in brackets: [::1]:9420)' : '';
    throw new HealthcheckConfigError(`${source}: ${JSON.stringify(text)} is not HOST:PORT, e.g. :9420, 0.0.0.0:9420 or [::1]:9420${hint}`);
  }
  const port = Number(m[2]);
  if (port > 65535) throw new HealthcheckConfigError(`${source}: port ${port} is out of range (0..65535)`);
  return { host: m[1] as string, port };
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function errCode(err: unknown): string {
  const code = (err as { code?: string }).code ?? 'unreadable';
  return code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : code;
}

/**
 * The TLS part of the web config file that the probe needs: whether TLS is on and, when the server requires a
 * client certificate, its own certificate and key. Read with the real YAML parser (the `yaml` package, loaded
 * here only); the file's other keys are the daemon's to check.
 */
async function readProbeWebConfig(file: string, source: string): Promise<ProbeWebSettings['settings']> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new HealthcheckConfigError(`${source}: cannot read ${JSON.stringify(file)} (${errCode(err)})`);
  }
  const { parse, YAMLError } = require('yaml') as typeof import('yaml');
  let doc: unknown;
  try {
    doc = parse(text, { uniqueKeys: true, maxAliasCount: 1000, prettyErrors: true });
  } catch (err) {
    if (!(err instanceof YAMLError)) throw err;
    const pos = err.linePos?.[0];
    const msg = (err.message.split('\n', 1)[0] ?? '').replace(/\s+at line \d+, column \d+:?$/, '');
    throw new HealthcheckConfigError(`${file}${pos === undefined ? '' : `:${pos.line}:${pos.col}`}: YAML syntax error: ${msg}`);
  }
  if (doc !== null && doc !== undefined && !isMap(doc)) throw new HealthcheckConfigError(`${file}: expected a mapping of settings`);
  const t = isMap(doc) ? doc['tls_server_config'] : undefined;
  if (t === undefined || t === null) return { tls: undefined };
  if (!isMap(t)) throw new HealthcheckConfigError(`${file}: tls_server_config: expected a mapping`);
  const clientAuthType = t['client_auth_type'] ?? 'NoClientCert';
  if (typeof clientAuthType !== 'string') throw new HealthcheckConfigError(`${file}: tls_server_config.client_auth_type: expected a string`);
  if (clientAuthType !== 'RequireAnyClientCert' && clientAuthType !== 'RequireAndVerifyClientCert') return { tls: { clientAuthType } };
  // As in the exporter-toolkit, relative paths are relative to the web config file.
  const rel = (p: string): string => (isAbsolute(p) ? p : resolve(dirname(resolve(file)), p));
  const pem = (inlineKey: string, fileKey: string, what: string): Buffer => {
    const inline = t[inlineKey];
    if (typeof inline === 'string' && inline !== '') return Buffer.from(inline, 'utf8');
    const path = t[fileKey];
    if (typeof path !== 'string' || path === '') throw new HealthcheckConfigError(`${file}: tls_server_config.${fileKey}: the ${what} is needed to present as a client certificate`);
    try {
      return readFileSync(rel(path));
    } catch (err) {
      // The path and the reason, never the content: the key file holds a secret.
      throw new HealthcheckConfigError(`${file}: tls_server_config.${fileKey}: cannot read ${what} ${JSON.stringify(rel(path))} (${errCode(err)})`);
    }
  };
  return { tls: { clientAuthType, cert: pem('cert', 'cert_file', 'certificate'), key: pem('key', 'key_file', 'private key') } };
}

/** The daemon's web settings from the healthcheck flags and the environment, as `run` reads them. */
async function probeWebSettings(flags: HealthcheckFlags, env: Env): Promise<ProbeWebSettings> {
  const listen = pick(flags, 'web.listen-address', env, 'CBWATCH_WEB_LISTEN_ADDRESS');
  const { host, port } = listen === undefined ? { host: '', port: 9420 } : parseProbeListenAddress(listen.value, listen.source);
  const webConfig = pick(flags, 'web.config.file', env, 'CBWATCH_WEB_CONFIG_FILE');
  const settings = webConfig === undefined ? undefined : await readProbeWebConfig(webConfig.value, webConfig.source);
  return { listenHost: host, listenPort: port, settings };
}

type Out = (s: string) => void;

/** Locate the daemon, ask it, print one line; 0 healthy, 1 not (never 2: Docker reserves it in a HEALTHCHECK). */
async function runHealthcheck(flags: HealthcheckFlags, env: Env, out: Out, err: Out): Promise<number> {
  let target: HealthcheckTarget;
  try {
    target = healthcheckTarget({ web: await probeWebSettings(flags, env) });
  } catch (e) {
    err(`cbwatch healthcheck: ${e instanceof HealthcheckConfigError ? `configuration error: ${e.message}` : (e as Error).message}\n`);
    return 1;
  }
  const result = await probe(target);
  (result.ok ? out : err)(`${result.message}\n`);
  return result.ok ? 0 : 1;
}

/**
 * bin/cbwatch.js's light path: `argv` is what follows `healthcheck`. Undefined when the command line is not
 * one this module takes (the caller then runs the full CLI).
 */
async function lightHealthcheck(argv: readonly string[], env: Env, out: Out, err: Out): Promise<number | undefined> {
  const flags = parseHealthcheckArgs(argv);
  return flags === undefined ? undefined : runHealthcheck(flags, env, out, err);
}

export = {
  healthcheckTarget,
  probe,
  RUN_VALUE_FLAGS,
  COLLECTORS,
  RUN_SWITCH_FLAGS,
  parseHealthcheckArgs,
  HealthcheckConfigError,
  parseProbeListenAddress,
  readProbeWebConfig,
  probeWebSettings,
  runHealthcheck,
  lightHealthcheck,
};

// `node dist/healthcheck.cjs [healthcheck's flags]`: the Docker HEALTHCHECK's entry point, the cheapest start
// Node has (a CommonJS file: no ES module loader). A command line the light parser does not take goes to the
// full CLI, as from bin/cbwatch.js.
if (require.main === module) {
  const argv = process.argv.slice(2);
  const out = (s: string): void => void process.stdout.write(s);
  const err = (s: string): void => void process.stderr.write(s);
  lightHealthcheck(argv, process.env, out, err)
    .then(async (code) => {
      if (code !== undefined) return code;
      const cli = (await import(require('node:url').pathToFileURL(path.join(__dirname, 'bundle', 'cli.js')).href)) as { main(argv: readonly string[]): Promise<number> };
      return cli.main(['healthcheck', ...argv]);
    })
    .then(
      (code) => {
        process.exitCode = code;
      },
      (e: unknown) => {
        err(`cbwatch healthcheck: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exitCode = 1;
      },
    );
}
