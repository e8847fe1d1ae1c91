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
 * Every key the toolkit documents is accepted with its meaning: inline `cert`/`key`/`client_ca`,
 * `client_allowed_sans`, `cipher_suites` and `curve_preferences` (Go names, mapped to OpenSSL's),
 * `prefer_server_cipher_suites`, `http_server_config` (`http2`, `headers`), `rate_limit`. Any other key is an
 * error naming it rather than silently ignored.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import { z } from 'zod';
import { tryParseGoDuration } from '../couchbase/goduration.js';
import { ConfigError } from '../errors.js';
import { processRedactor } from '../redact.js';
import { GO_CIPHER_SUITES, GO_CURVES } from './go-tls-names.js';
import { parseYamlFile, zodIssuesToConfigError } from './yamlfile.js';

export { GO_CIPHER_SUITES, GO_CURVES } from './go-tls-names.js';

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

/** The response headers the toolkit lets a web config set, and the values it allows (empty: any). */
export const WEB_HEADERS: Readonly<Record<string, readonly string[]>> = {
  'Strict-Transport-Security': [],
  'X-Content-Type-Options': ['nosniff'],
  'X-Frame-Options': ['deny', 'sameorigin'],
  'X-XSS-Protection': [],
  'Content-Security-Policy': [],
};

const pemText = z.string().min(1, 'must not be empty');

export const webConfigSchema = z.strictObject({
  tls_server_config: z
    .strictObject({
      cert: pemText.optional(),
      key: pemText.optional(),
      client_ca: pemText.optional(),
      cert_file: z.string().min(1, 'must not be empty').optional(),
      key_file: z.string().min(1, 'must not be empty').optional(),
      client_auth_type: z.enum(CLIENT_AUTH_TYPES, { error: `expected one of ${CLIENT_AUTH_TYPES.join(', ')}` }).default('NoClientCert'),
      client_ca_file: z.string().min(1, 'must not be empty').optional(),
      client_allowed_sans: z.array(z.string().min(1, 'must not be empty')).optional(),
      min_version: tlsVersion.default('TLS12'),
      max_version: tlsVersion.optional(),
      cipher_suites: z
        .array(z.string().refine((n) => Object.hasOwn(GO_CIPHER_SUITES, n), { message: 'not a cipher suite name Go knows (e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)' }))
        .optional(),
      prefer_server_cipher_suites: z.boolean().default(true),
      curve_preferences: z
        .array(z.string().refine((n) => Object.hasOwn(GO_CURVES, n), { message: `not a curve name (one of ${Object.keys(GO_CURVES).join(', ')})` }))
        .optional(),
    })
    .refine((t) => t.cert !== undefined || t.cert_file !== undefined, { message: 'cert_file (or an inline cert) is required', path: ['cert_file'] })
    .refine((t) => !(t.cert !== undefined && t.cert_file !== undefined), { message: 'set cert or cert_file, not both', path: ['cert'] })
    .refine((t) => t.key !== undefined || t.key_file !== undefined, { message: 'key_file (or an inline key) is required', path: ['key_file'] })
    .refine((t) => !(t.key !== undefined && t.key_file !== undefined), { message: 'set key or key_file, not both', path: ['key'] })
    .refine((t) => !(t.client_ca !== undefined && t.client_ca_file !== undefined), { message: 'set client_ca or client_ca_file, not both', path: ['client_ca'] })
    .refine(
      (t) =>
        !(t.client_auth_type.startsWith('Verify') || t.client_auth_type === 'RequireAndVerifyClientCert') || t.client_ca_file !== undefined || t.client_ca !== undefined,
      {
        message: 'client_auth_type that verifies client certificates needs client_ca_file',
        path: ['client_ca_file'],
      },
    )
    .refine((t) => !((t.client_ca_file !== undefined || t.client_ca !== undefined) && t.client_auth_type === 'NoClientCert'), {
      message: 'client_ca_file is set but client_auth_type is NoClientCert (set client_auth_type, e.g. RequireAndVerifyClientCert)',
      path: ['client_auth_type'],
    })
    .refine((t) => t.client_allowed_sans === undefined || t.client_auth_type === 'RequireAnyClientCert' || t.client_auth_type === 'RequireAndVerifyClientCert', {
      message: 'client_allowed_sans needs client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert (the others let a client in without a certificate)',
      path: ['client_allowed_sans'],
    })
    .refine((t) => t.max_version === undefined || t.max_version >= t.min_version, {
      message: 'max_version is below min_version',
      path: ['max_version'],
    })
    .optional(),
  http_server_config: z
    .strictObject({
      /** HTTP/2 (with TLS only), as the toolkit: on by default. */
      http2: z.boolean().default(true),
      headers: z
        .record(z.string(), z.string())
        .superRefine((h, ctx) => {
          for (const [k, v] of Object.entries(h)) {
            const allowed = WEB_HEADERS[k];
            if (allowed === undefined) ctx.addIssue({ code: 'custom', path: [k], message: `header ${k} can not be configured (only ${Object.keys(WEB_HEADERS).join(', ')})` });
            else if (allowed.length > 0 && !allowed.includes(v)) ctx.addIssue({ code: 'custom', path: [k], message: `expected one of ${allowed.join(', ')}` });
          }
        })
        .optional(),
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
  /** The file read, or `(inline)` for a PEM given in the web config itself. */
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
  /** OpenSSL cipher list for TLS 1.2 and below; undefined: Node's defaults. */
  readonly ciphers?: string | undefined;
  /** `prefer_server_cipher_suites` (default true). */
  readonly honorCipherOrder?: boolean;
  /** OpenSSL group list from `curve_preferences`. */
  readonly ecdhCurve?: string | undefined;
  /** `client_allowed_sans`: a client certificate must carry one of these as a SAN (exact match). */
  readonly clientAllowedSans?: readonly string[] | undefined;
}

export interface WebSettings {
  readonly file: string;
  readonly tls: WebTlsSettings | undefined;
  /** user → bcrypt hash; undefined or empty: no basic auth. */
  readonly basicAuthUsers: Readonly<Record<string, string>> | undefined;
  /** `rate_limit`: a token bucket over every request; undefined (or interval 0): off. */
  readonly rateLimit?: { readonly intervalMs: number; readonly burst: number } | undefined;
  /** `http_server_config.http2` (default true; only with TLS). */
  readonly http2?: boolean;
  /** `http_server_config.headers`, set on every response. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
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
    const inline = (text: string, key: string, what: string): Buffer => {
      if (!text.includes('-----BEGIN ')) throw new ConfigError(`${where(key)}: the inline ${what} is not PEM (no "-----BEGIN" line)`);
      return Buffer.from(text, 'utf8');
    };
    const clientCaFile = t.client_ca_file === undefined ? undefined : rel(t.client_ca_file);
    const cipherNames = (t.cipher_suites ?? []).map((n) => GO_CIPHER_SUITES[n] as string).filter((n) => n !== '');
    if (t.key !== undefined) processRedactor.add(t.key);
    tls = {
      certFile: t.cert_file === undefined ? '(inline)' : rel(t.cert_file),
      keyFile: t.key_file === undefined ? '(inline)' : rel(t.key_file),
      cert: t.cert !== undefined ? inline(t.cert, 'cert', 'certificate') : readPem(rel(t.cert_file as string), where('cert_file'), 'certificate'),
      key: t.key !== undefined ? inline(t.key, 'key', 'key') : readPem(rel(t.key_file as string), where('key_file'), 'private key'),
      clientAuthType: t.client_auth_type,
      clientCaFile: clientCaFile ?? (t.client_ca === undefined ? undefined : '(inline)'),
      clientCa:
        t.client_ca !== undefined
          ? inline(t.client_ca, 'client_ca', 'client CA')
          : clientCaFile === undefined
            ? undefined
            : readPem(clientCaFile, where('client_ca_file'), 'client CA'),
      minVersion: TLS_VERSIONS[t.min_version],
      maxVersion: t.max_version === undefined ? undefined : TLS_VERSIONS[t.max_version],
      ciphers: cipherNames.length === 0 ? undefined : cipherNames.join(':'),
      honorCipherOrder: t.prefer_server_cipher_suites,
      ecdhCurve: t.curve_preferences === undefined || t.curve_preferences.length === 0 ? undefined : t.curve_preferences.map((c) => GO_CURVES[c] as string).join(':'),
      clientAllowedSans: t.client_allowed_sans,
    };
    checkTlsOptions(tls, file);
  }
  const users = cfg.basic_auth_users;
  if (users !== undefined && Object.keys(users).length > 0 && !bcryptAvailable()) {
    throw new ConfigError(`${file}: basic_auth_users needs the "bcryptjs" package, which is not installed`);
  }
  const rl = cfg.rate_limit;
  const h = cfg.http_server_config;
  return {
    file,
    tls,
    basicAuthUsers: users,
    rateLimit: rl === undefined || rl.interval === 0 ? undefined : { intervalMs: rl.interval, burst: rl.burst },
    ...(h === undefined ? {} : { http2: h.http2, headers: h.headers }),
  };
}

/** Lets OpenSSL judge the cipher and curve lists now, so a name this Node cannot use fails start-up (exit 2). */
function checkTlsOptions(tls: WebTlsSettings, file: string): void {
  if (tls.ciphers === undefined && tls.ecdhCurve === undefined) return;
  try {
    createSecureContext({
      ...(tls.ciphers === undefined ? {} : { ciphers: tls.ciphers }),
      ...(tls.ecdhCurve === undefined ? {} : { ecdhCurve: tls.ecdhCurve }),
    });
  } catch (err) {
    const which = tls.ecdhCurve !== undefined && /curve|group/i.test((err as Error).message) ? 'curve_preferences' : 'cipher_suites';
    throw new ConfigError(`${file}: tls_server_config.${which}: not usable with this Node's OpenSSL (${(err as Error).message})`);
  }
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
  ciphers?: string;
  honorCipherOrder?: boolean;
  ecdhCurve?: string;
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
    ...(tls.ciphers === undefined ? {} : { ciphers: tls.ciphers }),
    ...(tls.ciphers === undefined || tls.honorCipherOrder === undefined ? {} : { honorCipherOrder: tls.honorCipherOrder }),
    ...(tls.ecdhCurve === undefined ? {} : { ecdhCurve: tls.ecdhCurve }),
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
  if (policy !== 'RequireAnyClientCert' && !socket.authorized) return `client certificate not trusted (${String(socket.authorizationError ?? 'unverified')})`;
  const allowed = tls.clientAllowedSans;
  if (allowed !== undefined && allowed.length > 0) {
    const sans = subjectAltNames((peer as { subjectaltname?: string }).subjectaltname);
    if (!sans.some((v) => allowed.includes(v))) return 'client certificate has no subject alternative name in client_allowed_sans';
  }
  return undefined;
}

/**
 * The SAN values client_allowed_sans is matched against, as the exporter-toolkit collects them from a client
 * certificate: DNS names, IP addresses (in Go's notation), email addresses and URIs; other kinds (DirName,
 * othername…) never match. Parses Node's `subjectaltname` text (`DNS:a, IP Address:1.2.3.4, URI:"x\u002cy"`):
 * a value holding a comma or quote is JSON-quoted there.
 */
export function subjectAltNames(text: string | undefined): string[] {
  if (text === undefined || text === '') return [];
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    if (colon < 0) break;
    const kind = text.slice(i, colon);
    let value: string;
    let next: number;
    if (text[colon + 1] === '"') {
      // A JSON string: its end is the first quote not escaped by a backslash.
      let j = colon + 2;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      try {
        value = JSON.parse(text.slice(colon + 1, j + 1)) as string;
      } catch {
        value = '';
      }
      next = text.indexOf(', ', j);
    } else {
      next = text.indexOf(', ', colon);
      value = text.slice(colon + 1, next < 0 ? undefined : next);
    }
    if (kind === 'DNS' || kind === 'email' || kind === 'URI') out.push(value);
    else if (kind === 'IP Address') out.push(goIpString(value));
    if (next < 0) break;
    i = next + 2;
  }
  return out.filter((v) => v !== '');
}

/**
 * Node prints an IPv6 SAN as eight uppercase groups (`2001:DB8:0:0:0:0:0:1`); Go's net.IP.String(), which the
 * toolkit matches against, writes `2001:db8::1` (RFC 5952: lowercase, the longest run of two or more zero
 * groups as `::`, the first on a tie) and an IPv4-mapped address as dotted IPv4.
 */
export function goIpString(text: string): string {
  if (!text.includes(':')) return text;
  const groups = text.split(':').map((g) => parseInt(g, 16));
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return text.toLowerCase();
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi, lo] = [groups[6] as number, groups[7] as number];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  let bestAt = -1;
  let bestLen = 1;
  for (let at = 0; at < 8; ) {
    let len = 0;
    while (at + len < 8 && groups[at + len] === 0) len++;
    if (len > bestLen) [bestAt, bestLen] = [at, len];
    at += len === 0 ? 1 : len;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestAt < 0) return hex.join(':');
  return `${hex.slice(0, bestAt).join(':')}::${hex.slice(bestAt + bestLen).join(':')}`;
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

/**
 * The salt and digest of a hash no password is known to match: an unknown user is compared against it, so
 * that refusing them costs what refusing a known user does.
 */
const DUMMY_SALT_AND_DIGEST = 'CwTycUXWue0Thq9StjUM0uJ8Ue7XJ9nGxfoz5v7hW4tBqj4V4hZwK';

/**
 * The hash an unknown user is compared against: bcrypt's time is set by the cost in the hash, so the dummy
 * takes the highest cost among the configured users' hashes (a cost-12 user is not told apart from an unknown
 * one by a cost-10 dummy answering four times faster).
 */
export function dummyHashFor(users: Readonly<Record<string, string>>): string {
  let cost = 0;
  for (const h of Object.values(users)) cost = Math.max(cost, Number(/^\$2[aby]\$(\d{2})\$/.exec(h)?.[1] ?? 0));
  return `$2b$${String(cost === 0 ? 10 : cost).padStart(2, '0')}$${DUMMY_SALT_AND_DIGEST}`;
}

/**
 * bcrypt is deliberately slow (each cost step doubles it). As the exporter-toolkit does: remember
 * every outcome — successes, so scrapes do not pay it each time, and failures, so a flood of one wrong password
 * costs one compare — and run compares one at a time, so a flood of distinct wrong passwords queues instead
 * of starving everything else. The queue is bounded (MAX_WAITING_CHECKS; beyond it, 'busy', answered 503),
 * and successes are kept apart from failures, so no number of wrong passwords can push a scraper's verified
 * header out: it is answered from memory and never waits behind them. Entries are keyed by a SHA-256 digest
 * of the Authorization header and the user's hash: no plaintext is kept, and a changed hash misses.
 */
const granted = new Map<string, true>();
const refused = new Map<string, false>();
const GRANTED_MAX = 256;
const REFUSED_MAX = 1024;
/** Password checks waiting or running at once; a request beyond it is refused at once rather than queued. */
export const MAX_WAITING_CHECKS = 32;
/**
 * Of those, at most this many from one client address: a flood from one host cannot fill the queue, so a
 * scraper elsewhere whose header is not yet verified (after a start) waits behind a few compares, not 32.
 */
export const MAX_WAITING_CHECKS_PER_CLIENT = 4;
let waitingChecks = 0;
const waitingByClient = new Map<string, number>();
let compareChain: Promise<unknown> = Promise.resolve();

function cacheKey(header: string, hash: string): string {
  return createHash('sha256').update(header).update('\0').update(hash).digest('base64');
}

function remember(key: string, ok: boolean): void {
  const map: Map<string, boolean> = ok ? granted : refused;
  if (map.size >= (ok ? GRANTED_MAX : REFUSED_MAX)) map.delete(map.keys().next().value as string);
  map.set(key, ok);
}

function recall(key: string): boolean | undefined {
  if (granted.has(key)) {
    // Refresh its place: a busy scraper's entry is never the one evicted.
    granted.delete(key);
    granted.set(key, true);
    return true;
  }
  return refused.has(key) ? false : undefined;
}

/** One compare at a time across the process. */
function serialized(fn: () => Promise<boolean>): Promise<boolean> {
  const run = compareChain.then(fn, fn);
  compareChain = run.catch(() => undefined);
  return run;
}

/**
 * Checks an `Authorization` header against basic_auth_users: true, false, or 'busy' when MAX_WAITING_CHECKS
 * checks (or MAX_WAITING_CHECKS_PER_CLIENT from `client`, the remote address) are already waiting for bcrypt;
 * a remembered header is answered even then. An empty or missing user list allows everything (auth is off).
 * `compare` is injectable for tests; by default it is bcryptjs's.
 */
export async function verifyBasicAuth(
  users: Readonly<Record<string, string>> | undefined,
  header: string | undefined,
  compare: BcryptCompare = defaultCompare,
  client?: string,
): Promise<boolean | 'busy'> {
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
  const hash = known ? (users[user] as string) : dummyHashFor(users);
  const key = cacheKey(header, hash);
  const hit = recall(key);
  if (hit !== undefined) return hit;
  const fromClient = client === undefined ? 0 : (waitingByClient.get(client) ?? 0);
  if (waitingChecks >= MAX_WAITING_CHECKS || fromClient >= MAX_WAITING_CHECKS_PER_CLIENT) return 'busy';
  waitingChecks++;
  if (client !== undefined) waitingByClient.set(client, fromClient + 1);
  // An unknown user runs a full compare too, so timing does not tell which user names exist. The cache is
  // looked at again once this request's turn comes: the same header may have been checked while it waited.
  try {
    return await serialized(async () => {
      const settled = recall(key);
      if (settled !== undefined) return settled;
      const ok = (await compare(password, hash)) && known;
      remember(key, ok);
      return ok;
    });
  } finally {
    waitingChecks--;
    if (client !== undefined) {
      const left = (waitingByClient.get(client) ?? 1) - 1;
      if (left > 0) waitingByClient.set(client, left);
      else waitingByClient.delete(client);
    }
  }
}

export interface WebServerOptions {
  /** fastify's `https` option; undefined: plain HTTP. */
  readonly https?: ReturnType<typeof httpsOptions>;
  /** Checks the Authorization header (basic_auth_users) of a request from `client` (its address); undefined: no auth. */
  readonly authorize?: (header: string | undefined, client?: string) => Promise<boolean | 'busy'>;
  /**
   * For client_auth_type RequireAnyClientCert and VerifyClientCertIfGiven, which Node cannot enforce in the
   * handshake: call with the request's socket and refuse the request (403) when it returns a reason.
   */
  readonly checkClientCertificate?: (socket: TLSSocket) => string | undefined;
  /** `rate_limit` */
  readonly rateLimit?: { readonly intervalMs: number; readonly burst: number };
  /** `http_server_config.http2` with TLS (default true). */
  readonly http2?: boolean;
  /** `http_server_config.headers` */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the HTTP server needs from a loaded web config file. */
export function webConfigToServerOptions(web: WebSettings | undefined): WebServerOptions {
  if (web === undefined) return {};
  const users = web.basicAuthUsers;
  const tls = web.tls;
  const perRequest =
    tls !== undefined &&
    (tls.clientAuthType === 'RequireAnyClientCert' || tls.clientAuthType === 'VerifyClientCertIfGiven' || (tls.clientAllowedSans?.length ?? 0) > 0);
  return {
    ...(tls === undefined ? {} : { https: httpsOptions(tls) }),
    ...(users === undefined || Object.keys(users).length === 0 ? {} : { authorize: (header: string | undefined, client?: string) => verifyBasicAuth(users, header, defaultCompare, client) }),
    ...(perRequest ? { checkClientCertificate: (socket: TLSSocket) => checkClientCertificate(tls, socket) } : {}),
    ...(web.rateLimit === undefined ? {} : { rateLimit: web.rateLimit }),
    ...(tls === undefined ? {} : { http2: web.http2 ?? true }),
    ...(web.headers === undefined ? {} : { headers: web.headers }),
  };
}

/** For tests: forget remembered checks. */
export function clearBasicAuthCache(): void {
  granted.clear();
  refused.clear();
}
