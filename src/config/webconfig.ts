/**
 * `--web.config.file`: TLS and basic auth for cbwatch's own HTTP server, in the file format of the Prometheus
 * exporter-toolkit (the one node_exporter, mysqld_exporter and blackbox_exporter read), so one file can serve
 * every exporter on a machine:
 *
 * ```yaml
 * tls_server_config:
 *   cert_file: /etc/cbwatch/tls.crt
 *   key_file: /etc/cbwatch/tls.key
 *   client_auth_type: RequireAndVerifyClientCert   # optional
 *   client_ca_file: /etc/cbwatch/clients-ca.crt     # with a Verify* client_auth_type
 *   min_version: TLS12                              # default TLS12
 * basic_auth_users:
 *   prometheus: $2y$10$...                          # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
 * ```
 *
 * Only the keys above are supported; any other key (including the toolkit's `http_server_config`,
 * `cipher_suites`…) is an error naming it rather than silently ignored.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { z } from 'zod';
import { tryParseGoDuration } from '../couchbase/goduration.js';
import { ConfigError } from '../errors.js';
import { parseYamlFile, zodIssuesToConfigError } from './yamlfile.js';

const TLS_VERSIONS = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' } as const;
type TlsVersionName = keyof typeof TLS_VERSIONS;
const tlsVersion = z.enum(Object.keys(TLS_VERSIONS) as [TlsVersionName, ...TlsVersionName[]], {
  error: `expected one of ${Object.keys(TLS_VERSIONS).join(', ')}`,
});

export const CLIENT_AUTH_TYPES = [
  'NoClientCert',
  'RequestClientCert',
  'RequireAnyClientCert',
  'VerifyClientCertIfGiven',
  'RequireAndVerifyClientCert',
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

/** A bcrypt hash as htpasswd -B and the toolkit write it: `$2a$`, `$2b$` or `$2y$`, cost, 53 characters. */
const BCRYPT = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

export const webConfigSchema = z.strictObject({
  tls_server_config: z
    .strictObject({
      cert_file: z.string().min(1, 'must not be empty'),
      key_file: z.string().min(1, 'must not be empty'),
      client_auth_type: z.enum(CLIENT_AUTH_TYPES, { error: `expected one of ${CLIENT_AUTH_TYPES.join(', ')}` }).default('NoClientCert'),
      client_ca_file: z.string().min(1, 'must not be empty').optional(),
      min_version: tlsVersion.default('TLS12'),
      max_version: tlsVersion.optional(),
    })
    .refine((t) => !(t.client_auth_type.startsWith('Verify') || t.client_auth_type === 'RequireAndVerifyClientCert') || t.client_ca_file !== undefined, {
      message: 'client_auth_type that verifies client certificates needs client_ca_file',
      path: ['client_ca_file'],
    })
    .refine((t) => !(t.client_ca_file !== undefined && t.client_auth_type === 'NoClientCert'), {
      message: 'client_ca_file is set but client_auth_type is NoClientCert (set client_auth_type, e.g. RequireAndVerifyClientCert)',
      path: ['client_auth_type'],
    })
    .refine((t) => t.max_version === undefined || t.max_version >= t.min_version, {
      message: 'max_version is below min_version',
      path: ['max_version'],
    })
    .optional(),
  rate_limit: z
    .strictObject({
      /** Time between two requests (a Go duration: 1s, 100ms); 0 turns the limiter off. */
      interval: z.union([z.string(), z.number()], { error: 'expected a duration such as 1s' }).transform((v, ctx) => {
        const sec = typeof v === 'number' ? v : tryParseGoDuration(v);
        if (sec === undefined || sec < 0) {
          ctx.addIssue({ code: 'custom', message: `invalid duration ${JSON.stringify(v)} (use e.g. 1s, 100ms; 0 turns the limiter off)` });
          return z.NEVER;
        }
        return sec * 1000;
      }),
      burst: z.number({ error: 'expected a whole number' }).int('expected a whole number').min(0, 'must not be negative'),
    })
    .refine((r) => r.interval === 0 || r.burst > 0, { message: 'burst 0 with a non-zero interval would refuse every request', path: ['burst'] })
    .optional(),
  basic_auth_users: z
    .record(
      z.string().min(1, 'user name must not be empty').refine((u) => !u.includes(':'), 'user name must not contain ":"'),
      // The value is never echoed: a plaintext password pasted here by mistake must not reach a log.
      z.string({ error: 'expected a bcrypt hash string' }).regex(BCRYPT, 'not a bcrypt hash (generate one with htpasswd -nBC 10 USER)'),
    )
    .optional(),
});

export interface WebTlsSettings {
  readonly certFile: string;
  readonly keyFile: string;
  /** PEM. The key is a secret: never log this object. */
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientAuthType: ClientAuthType;
  readonly clientCaFile: string | undefined;
  readonly clientCa: Buffer | undefined;
  readonly minVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  readonly maxVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3' | undefined;
}

export interface WebSettings {
  readonly file: string;
  readonly tls: WebTlsSettings | undefined;
  /** user → bcrypt hash; undefined or empty: no basic auth. */
  readonly basicAuthUsers: Readonly<Record<string, string>> | undefined;
  /** `rate_limit`: a token bucket over every request; undefined (or interval 0): off. */
  readonly rateLimit?: { readonly intervalMs: number; readonly burst: number } | undefined;
}

function readPem(file: string, key: string, what: string): Buffer {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'unreadable';
    throw new ConfigError(`${key}: cannot read ${what} ${JSON.stringify(file)} (${code})`);
  }
  // Only the shape is checked, never printed: the key file holds a secret.
  if (!buf.toString('latin1').includes('-----BEGIN ')) {
    throw new ConfigError(`${key}: ${JSON.stringify(file)} is not a PEM file (no "-----BEGIN" line)`);
  }
  return buf;
}

/** Reads and validates the web config file; every error names the key (and the file). */
export function loadWebConfig(file: string): WebSettings {
  const data = parseYamlFile(file, '--web.config.file');
  const raw = data.value ?? {};
  const parsed = webConfigSchema.safeParse(raw);
  if (!parsed.success) throw zodIssuesToConfigError(file, parsed.error.issues, data.locate, webConfigSchema);
  const cfg = parsed.data;
  let tls: WebTlsSettings | undefined;
  const t = cfg.tls_server_config;
  if (t !== undefined) {
    const where = (k: string) => `${file}: tls_server_config.${k}`;
    // As in the exporter-toolkit, relative paths are relative to the web config file.
    const rel = (p: string) => (isAbsolute(p) ? p : resolve(dirname(resolve(file)), p));
    const clientCaFile = t.client_ca_file === undefined ? undefined : rel(t.client_ca_file);
    tls = {
      certFile: rel(t.cert_file),
      keyFile: rel(t.key_file),
      cert: readPem(rel(t.cert_file), where('cert_file'), 'certificate'),
      key: readPem(rel(t.key_file), where('key_file'), 'private key'),
      clientAuthType: t.client_auth_type,
      clientCaFile,
      clientCa: clientCaFile === undefined ? undefined : readPem(clientCaFile, where('client_ca_file'), 'client CA'),
      minVersion: TLS_VERSIONS[t.min_version],
      maxVersion: t.max_version === undefined ? undefined : TLS_VERSIONS[t.max_version],
    };
  }
  const users = cfg.basic_auth_users;
  if (users !== undefined && Object.keys(users).length > 0 && !bcryptAvailable()) {
    throw new ConfigError(`${file}: basic_auth_users needs the "bcryptjs" package, which is not installed`);
  }
  const rl = cfg.rate_limit;
  return { file, tls, basicAuthUsers: users, rateLimit: rl === undefined || rl.interval === 0 ? undefined : { intervalMs: rl.interval, burst: rl.burst } };
}

/** Options for `fastify({ https })` / `https.createServer`. */
export function httpsOptions(tls: WebTlsSettings): {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
  requestCert: boolean;
  rejectUnauthorized: boolean;
  minVersion: WebTlsSettings['minVersion'];
  maxVersion?: NonNullable<WebTlsSettings['maxVersion']>;
} {
  const requestCert = tls.clientAuthType !== 'NoClientCert';
  return {
    cert: tls.cert,
    key: tls.key,
    ...(tls.clientCa === undefined ? {} : { ca: tls.clientCa }),
    requestCert,
    // Node can only require a *verified* certificate in the handshake; the other policies are enforced per
    // request by checkClientCertificate().
    rejectUnauthorized: tls.clientAuthType === 'RequireAndVerifyClientCert',
    minVersion: tls.minVersion,
    ...(tls.maxVersion === undefined ? {} : { maxVersion: tls.maxVersion }),
  };
}

/**
 * Enforces client_auth_type on a TLS connection: undefined when the request may proceed, else the reason to
 * refuse it (answer 401/403 and close). Mirrors Go's tls.ClientAuthType semantics used by the toolkit.
 */
export function checkClientCertificate(
  tls: WebTlsSettings,
  socket: Pick<TLSSocket, 'authorized' | 'authorizationError' | 'getPeerCertificate'>,
): string | undefined {
  const policy = tls.clientAuthType;
  if (policy === 'NoClientCert' || policy === 'RequestClientCert') return undefined;
  const peer = socket.getPeerCertificate();
  const given = peer !== null && typeof peer === 'object' && Object.keys(peer).length > 0;
  if (!given) {
    return policy === 'VerifyClientCertIfGiven' ? undefined : 'a client certificate is required';
  }
  if (policy === 'RequireAnyClientCert') return undefined;
  if (!socket.authorized) return `client certificate not trusted (${String(socket.authorizationError ?? 'unverified')})`;
  return undefined;
}

type BcryptCompare = (password: string, hash: string) => Promise<boolean>;

function bcryptAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('bcryptjs');
    return true;
  } catch {
    return false;
  }
}

let bcryptCompare: BcryptCompare | undefined;
async function defaultCompare(password: string, hash: string): Promise<boolean> {
  if (bcryptCompare === undefined) {
    // Imported by name at run time: the dependency is only needed when basic_auth_users is configured.
    const specifier = 'bcryptjs';
    const mod = (await import(specifier)) as { compare?: BcryptCompare; default?: { compare?: BcryptCompare } };
    const compare = mod.compare ?? mod.default?.compare;
    if (typeof compare !== 'function') throw new ConfigError('bcryptjs does not export compare()');
    bcryptCompare = compare;
  }
  return bcryptCompare(password, hash);
}

/** A valid hash of a random password, compared against when the user is unknown so timing reveals nothing. */
const DUMMY_HASH = '$2b$10$CwTycUXWue0Thq9StjUM0uJ8Ue7XJ9nGxfoz5v7hW4tBqj4V4hZwK';

/**
 * bcrypt costs ~50–100 ms of CPU per check, on the thread that answers HTTP. As the exporter-toolkit does:
 * remember every outcome — successes, so scrapes do not pay it each time, and failures, so a flood of one
 * wrong password costs one compare — and run compares one at a time, so a flood of distinct wrong passwords
 * queues (bounded by --web.max-requests) instead of starving everything else. Entries are keyed by a SHA-256
 * digest of the Authorization header and the user's hash: no plaintext is kept, and a changed hash misses.
 */
const remembered = new Map<string, boolean>();
const REMEMBERED_MAX = 1024;
let compareChain: Promise<unknown> = Promise.resolve();

function cacheKey(header: string, hash: string): string {
  return createHash('sha256').update(header).update('\0').update(hash).digest('base64');
}

function remember(key: string, ok: boolean): void {
  if (remembered.size >= REMEMBERED_MAX) remembered.delete(remembered.keys().next().value as string);
  remembered.set(key, ok);
}

/** One compare at a time across the process. */
function serialized(fn: () => Promise<boolean>): Promise<boolean> {
  const run = compareChain.then(fn, fn);
  compareChain = run.catch(() => undefined);
  return run;
}

/**
 * Checks an `Authorization` header against basic_auth_users. An empty or missing user list allows everything
 * (auth is off). `compare` is injectable for tests; by default it is bcryptjs's.
 */
export async function verifyBasicAuth(
  users: Readonly<Record<string, string>> | undefined,
  header: string | undefined,
  compare: BcryptCompare = defaultCompare,
): Promise<boolean> {
  if (users === undefined || Object.keys(users).length === 0) return true;
  if (header === undefined) return false;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return false;
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  const known = Object.hasOwn(users, user);
  const hash = known ? (users[user] as string) : DUMMY_HASH;
  const key = cacheKey(header, hash);
  const hit = remembered.get(key);
  if (hit !== undefined) {
    // Refresh its place: a busy scraper's entry is never the one evicted.
    remembered.delete(key);
    remembered.set(key, hit);
    return hit;
  }
  // An unknown user runs a full compare too, so timing does not tell which user names exist. The cache is
  // looked at again once this request's turn comes: the same header may have been checked while it waited.
  return serialized(async () => {
    const settled = remembered.get(key);
    if (settled !== undefined) return settled;
    const ok = (await compare(password, hash)) && known;
    remember(key, ok);
    return ok;
  });
}

export interface WebServerOptions {
  /** fastify's `https` option; undefined: plain HTTP. */
  readonly https?: ReturnType<typeof httpsOptions>;
  /** Checks the Authorization header (basic_auth_users); undefined: no auth. */
  readonly authorize?: (header: string | undefined) => Promise<boolean>;
  /**
   * For client_auth_type RequireAnyClientCert and VerifyClientCertIfGiven, which Node cannot enforce in the
   * handshake: call with the request's socket and refuse the request (403) when it returns a reason.
   */
  readonly checkClientCertificate?: (socket: TLSSocket) => string | undefined;
  /** `rate_limit` */
  readonly rateLimit?: { readonly intervalMs: number; readonly burst: number };
}

/** What the HTTP server needs from a loaded web config file. */
export function webConfigToServerOptions(web: WebSettings | undefined): WebServerOptions {
  if (web === undefined) return {};
  const users = web.basicAuthUsers;
  const tls = web.tls;
  const perRequest = tls !== undefined && (tls.clientAuthType === 'RequireAnyClientCert' || tls.clientAuthType === 'VerifyClientCertIfGiven');
  return {
    ...(tls === undefined ? {} : { https: httpsOptions(tls) }),
    ...(users === undefined || Object.keys(users).length === 0 ? {} : { authorize: (header: string | undefined) => verifyBasicAuth(users, header) }),
    ...(perRequest ? { checkClientCertificate: (socket: TLSSocket) => checkClientCertificate(tls, socket) } : {}),
    ...(web.rateLimit === undefined ? {} : { rateLimit: web.rateLimit }),
  };
}

/** For tests: forget remembered checks. */
export function clearBasicAuthCache(): void {
  remembered.clear();
}
