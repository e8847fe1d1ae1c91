import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest, createServer as createHttpsServer } from 'node:https';
import type { Server } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { WebTlsSettings } from '../../src/config/webconfig.js';
import { checkClientCertificate, clearBasicAuthCache, dummyHashFor, goIpString, MAX_WAITING_CHECKS, MAX_WAITING_CHECKS_PER_CLIENT, httpsOptions, loadWebConfig, subjectAltNames, verifyBasicAuth, webConfigToServerOptions } from '../../src/config/webconfig.js';
import { ConfigError } from '../../src/errors.js';
import { findBinary } from '../helpers/tools.js';

const dir = mkdtempSync(join(tmpdir(), 'cbwatch-webconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

// Shape-valid PEM files for the loader tests (the TLS handshake tests below use real ones from openssl).
write('fake.crt', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
write('fake.key', '-----BEGIN PRIVATE KEY-----\nMIIE-not-a-real-key\n-----END PRIVATE KEY-----\n');
write('not-pem.txt', 'hello\n');

const HASH = '$2y$10$ZbDcXLd/5yXq6Y2a6Vl0Ve0l9vsJXkqY4Vw6q6fLQ7l9hJ2pG8cHy';
const hasBcrypt = (() => {
  try {
    createRequire(import.meta.url).resolve('bcryptjs');
    return true;
  } catch {
    return false;
  }
})();

function webFails(text: string): string {
  const p = write(`bad-${Math.random().toString(36).slice(2)}.yml`, text);
  try {
    loadWebConfig(p);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('loadWebConfig did not fail');
}

describe('loadWebConfig', () => {
  it('loads tls_server_config with defaults, paths relative to the file', () => {
    const p = write('web.yml', 'tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n');
    const w = loadWebConfig(p);
    expect(w.basicAuthUsers).toBeUndefined();
    expect(w.tls).toMatchObject({
      certFile: join(dir, 'fake.crt'),
      keyFile: join(dir, 'fake.key'),
      clientAuthType: 'NoClientCert',
      clientCaFile: undefined,
      minVersion: 'TLSv1.2',
      maxVersion: undefined,
    });
    expect(w.tls!.cert.toString()).toContain('BEGIN CERTIFICATE');
    expect(httpsOptions(w.tls!)).toEqual({ cert: w.tls!.cert, key: w.tls!.key, requestCert: false, rejectUnauthorized: false, minVersion: 'TLSv1.2' });
  });

  it('maps client auth and versions to Node TLS options', () => {
    const p = write(
      'web-mtls.yml',
      'tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: fake.crt\n  min_version: TLS13\n  max_version: TLS13\n',
    );
    const o = httpsOptions(loadWebConfig(p).tls!);
    expect(o).toMatchObject({ requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' });
    expect(o.ca?.toString()).toContain('BEGIN CERTIFICATE');
  });

  it('an empty file means no TLS and no auth', () => {
    expect(loadWebConfig(write('empty.yml', ''))).toEqual({ file: join(dir, 'empty.yml'), tls: undefined, basicAuthUsers: undefined });
  });

  it('basic_auth_users needs bcryptjs at load time, so --config.check catches it', () => {
    const p = write('web-auth.yml', `basic_auth_users:\n  prometheus: '${HASH}'\n`);
    if (hasBcrypt) expect(loadWebConfig(p).basicAuthUsers).toEqual({ prometheus: HASH });
    else expect(() => loadWebConfig(p)).toThrow('basic_auth_users needs the "bcryptjs" package');
  });

  it.each([
    ['http_server_config:\n  http3: false\n', 'http_server_config.http3: unknown key'],
    ['http_server_config:\n  headers:\n    X-Powered-By: me\n', 'X-Powered-By can not be configured'],
    ['http_server_config:\n  headers:\n    X-Frame-Options: allow\n', 'expected one of deny, sameorigin'],
    ['tls_server_config:\n  cert_file: fake.crt\n', 'tls_server_config.key_file: key_file (or an inline key) is required'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  cipher_suites: [TLS_FOO]\n', 'not a cipher suite name Go knows'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  curve_preferences: [CurveP999]\n', 'not a curve name'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  client_allowed_sans: [a]\n', 'client_allowed_sans needs client_auth_type'],
    ['rate_limit:\n  interval: 1x\n  burst: 2\n', 'rate_limit.interval: invalid duration'],
    ['rate_limit:\n  interval: 1s\n  burst: 0\n', 'rate_limit.burst: burst 0'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  certfile: x\n', 'tls_server_config.certfile: unknown key (did you mean "cert_file"?)'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  client_auth_type: Always\n', 'tls_server_config.client_auth_type: expected one of NoClientCert'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  client_auth_type: RequireAndVerifyClientCert\n', 'tls_server_config.client_ca_file: client_auth_type that verifies client certificates needs client_ca_file'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  client_ca_file: fake.crt\n', 'tls_server_config.client_auth_type: client_ca_file is set but client_auth_type is NoClientCert'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  min_version: TLS14\n', 'tls_server_config.min_version: expected one of TLS10, TLS11, TLS12, TLS13'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  min_version: TLS13\n  max_version: TLS12\n', 'tls_server_config.max_version: max_version is below min_version'],
    ['tls_server_config:\n  cert_file: fake.crt\n  key_file: missing.key\n', 'tls_server_config.key_file: cannot read private key'],
    ['tls_server_config:\n  cert_file: not-pem.txt\n  key_file: fake.key\n', 'tls_server_config.cert_file: "' + join(dir, 'not-pem.txt') + '" is not a PEM file'],
    ['basic_auth_users:\n  alice: plaintext-Pa55word\n', 'basic_auth_users.alice: not a bcrypt hash'],
    ['basic_auth_users:\n  alice: 12\n', 'basic_auth_users.alice: expected a bcrypt hash string'],
    ['basic_auth_users: [alice]\n', 'basic_auth_users: Invalid input: expected record, received array'],
    ['tls_server_config: [\n', 'YAML syntax error'],
  ])('%j fails with %j', (text, fragment) => {
    const msg = webFails(text);
    expect(msg).toContain(fragment);
    expect(msg).not.toContain('plaintext-Pa55word');
    expect(msg).not.toContain('not-a-real-key');
  });

  it('loadConfig validates the web config file and reports its problems', () => {
    const bad = write('web-bad.yml', 'tls_server_config:\n  cert_file: fake.crt\n');
    expect(() => loadConfig({ 'couchbase.url': 'http://cb1:8091', 'web.config.file': bad }, {})).toThrow(/web-bad\.yml:1:1: tls_server_config\.key_file/);
    const good = write('web-good.yml', 'tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n');
    const c = loadConfig({ 'couchbase.url': 'http://cb1:8091' }, { CBWATCH_WEB_CONFIG_FILE: good });
    expect(c.web.configFile).toBe(good);
    expect(c.web.settings?.tls?.clientAuthType).toBe('NoClientCert');
  });
});

describe('verifyBasicAuth', () => {
  const users = { prometheus: HASH };
  const header = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
  let calls: [string, string][] = [];
  const compare = async (password: string, hash: string) => {
    calls.push([password, hash]);
    return password === 'right' && hash === HASH;
  };
  beforeEach(() => {
    calls = [];
    clearBasicAuthCache();
  });

  it('allows everything when no users are configured', async () => {
    expect(await verifyBasicAuth(undefined, undefined, compare)).toBe(true);
    expect(await verifyBasicAuth({}, undefined, compare)).toBe(true);
  });

  it('refuses missing and malformed headers without comparing', async () => {
    for (const h of [undefined, '', 'Bearer abc', 'Basic', 'Basic !!!', `Basic ${Buffer.from('nocolon').toString('base64')}`]) {
      expect(await verifyBasicAuth(users, h, compare)).toBe(false);
    }
    expect(calls).toEqual([]);
  });

  it('checks the password with bcrypt compare; a password may contain colons', async () => {
    expect(await verifyBasicAuth(users, header('prometheus', 'wrong'), compare)).toBe(false);
    expect(await verifyBasicAuth(users, header('prometheus', 'right'), compare)).toBe(true);
    expect(calls).toEqual([
      ['wrong', HASH],
      ['right', HASH],
    ]);
    const colon = { u: '$2b$10$' + 'a'.repeat(53) };
    await verifyBasicAuth(colon, header('u', 'a:b:c'), compare);
    expect(calls.at(-1)).toEqual(['a:b:c', colon.u]);
  });

  it('runs a compare for unknown users too (no timing oracle) and still refuses them', async () => {
    const alwaysTrue = async (p: string, h: string) => {
      calls.push([p, h]);
      return true;
    };
    expect(await verifyBasicAuth(users, header('mallory', 'right'), alwaysTrue)).toBe(false);
    expect(calls).toHaveLength(1);
    expect(calls[0]![1]).not.toBe(HASH);
  });

  it('remembers successful and failed checks alike', async () => {
    await verifyBasicAuth(users, header('prometheus', 'right'), compare);
    await verifyBasicAuth(users, header('prometheus', 'right'), compare);
    expect(calls).toHaveLength(1);
    expect(await verifyBasicAuth(users, header('prometheus', 'wrong'), compare)).toBe(false);
    expect(await verifyBasicAuth(users, header('prometheus', 'wrong'), compare)).toBe(false);
    expect(calls).toHaveLength(2);
    expect(await verifyBasicAuth(users, header('prometheus', 'right'), compare)).toBe(true);
    expect(calls).toHaveLength(2);
    // A changed hash for the same user is checked again.
    await verifyBasicAuth({ prometheus: '$2b$10$' + 'b'.repeat(53) }, header('prometheus', 'right'), compare);
    expect(calls).toHaveLength(3);
  });

  it('runs compares one at a time', async () => {
    let running = 0;
    let most = 0;
    const slow = async (p: string, h: string) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return compare(p, h);
    };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => verifyBasicAuth(users, header('prometheus', `wrong-${i}`), slow)));
    expect(results.every((r) => r === false)).toBe(true);
    expect(most).toBe(1);
  });

  it('compares an unknown user against a dummy hash of the configured cost (cost 12: no timing tells users apart)', async () => {
    const cost12 = { prometheus: '$2b$12$' + 'c'.repeat(53) };
    expect(await verifyBasicAuth(cost12, header('mallory', 'x'), compare)).toBe(false);
    expect(calls.at(-1)![1]).toMatch(/^\$2b\$12\$[./A-Za-z0-9]{53}$/);
    // Mixed costs: the highest one.
    expect(dummyHashFor({ a: '$2y$04$' + 'a'.repeat(53), b: '$2a$11$' + 'b'.repeat(53) })).toMatch(/^\$2b\$11\$/);
    expect(dummyHashFor({ a: HASH })).toMatch(/^\$2b\$10\$/);
  });

  it('a verified header is never pushed out by wrong passwords, however many', async () => {
    expect(await verifyBasicAuth(users, header('prometheus', 'right'), compare)).toBe(true);
    for (let i = 0; i < 1100; i++) await verifyBasicAuth(users, header('prometheus', `wrong-${i}`), compare);
    const before = calls.length;
    expect(await verifyBasicAuth(users, header('prometheus', 'right'), compare)).toBe(true);
    expect(calls.length).toBe(before);
  });

  it(`at most ${MAX_WAITING_CHECKS} checks wait for bcrypt; beyond them 'busy', while a verified header is still answered`, async () => {
    expect(await verifyBasicAuth(users, header('prometheus', 'right'), compare)).toBe(true);
    const release: Array<() => void> = [];
    const blocked = (p: string, h: string) => new Promise<boolean>((r) => release.push(() => r(p === 'right' && h === HASH)));
    const pending = Array.from({ length: MAX_WAITING_CHECKS }, (_, i) => verifyBasicAuth(users, header('prometheus', `w-${i}`), blocked));
    expect(await verifyBasicAuth(users, header('prometheus', 'one-too-many'), blocked)).toBe('busy');
    expect(await verifyBasicAuth(users, header('prometheus', 'right'), blocked)).toBe(true);
    // Compares run one at a time: release each as it starts.
    let settled = 0;
    void Promise.all(pending).then(() => (settled = MAX_WAITING_CHECKS));
    while (settled < MAX_WAITING_CHECKS) {
      release.shift()?.();
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(await Promise.all(pending)).toEqual(Array(MAX_WAITING_CHECKS).fill(false));
    // The queue drained: the next one is checked again.
    expect(await verifyBasicAuth(users, header('prometheus', 'later'), compare)).toBe(false);
  });

  it(`one client address has at most ${MAX_WAITING_CHECKS_PER_CLIENT} checks waiting: a flood from one host leaves room for a scraper elsewhere`, async () => {
    const release: Array<() => void> = [];
    const blocked = (p: string, h: string) => new Promise<boolean>((r) => release.push(() => r(p === 'right' && h === HASH)));
    const flood = Array.from({ length: MAX_WAITING_CHECKS_PER_CLIENT }, (_, i) => verifyBasicAuth(users, header('prometheus', `w-${i}`), blocked, '10.9.9.9'));
    expect(await verifyBasicAuth(users, header('prometheus', 'w-more'), blocked, '10.9.9.9')).toBe('busy');
    // The scraper's first check (not yet remembered) queues behind the flood's few, and succeeds.
    const scraper = verifyBasicAuth(users, header('prometheus', 'right'), blocked, '10.0.0.5');
    let done = false;
    void Promise.all([...flood, scraper]).then(() => (done = true));
    while (!done) {
      release.shift()?.();
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(await scraper).toBe(true);
    // Released: the flooding address may queue again.
    expect(await verifyBasicAuth(users, header('prometheus', 'w-again'), compare, '10.9.9.9')).toBe(false);
  });

  it.runIf(hasBcrypt)('uses bcryptjs when installed', async () => {
    const bcrypt = (await import('bcryptjs' as string)) as { hashSync(p: string, c: number): string };
    const h = bcrypt.hashSync('secret', 4);
    expect(await verifyBasicAuth({ u: h }, header('u', 'secret'))).toBe(true);
    expect(await verifyBasicAuth({ u: h }, header('u', 'nope'))).toBe(false);
    // The unknown-user path compares against a built-in hash, which must be one bcryptjs accepts.
    expect(await verifyBasicAuth({ u: h }, header('someone', 'secret'))).toBe(false);
  });

  it.runIf(hasBcrypt)('webConfigToServerOptions wires TLS, basic auth and per-request client checks', async () => {
    const bcrypt = (await import('bcryptjs' as string)) as { hashSync(p: string, c: number): string };
    const p = write(
      'web-all.yml',
      `tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: fake.crt\nbasic_auth_users:\n  prometheus: '${bcrypt.hashSync('pw', 4)}'\n`,
    );
    const o = webConfigToServerOptions(loadWebConfig(p));
    expect(o.https).toMatchObject({ requestCert: true, rejectUnauthorized: false });
    expect(await o.authorize!(header('prometheus', 'pw'))).toBe(true);
    expect(await o.authorize!(header('prometheus', 'no'))).toBe(false);
    expect(o.checkClientCertificate).toBeTypeOf('function');
    expect(webConfigToServerOptions(undefined)).toEqual({});
    expect(webConfigToServerOptions(loadWebConfig(write('only-tls.yml', 'tls_server_config:\n  cert_file: fake.crt\n  key_file: fake.key\n')))).toEqual({
      https: expect.objectContaining({ requestCert: false }),
      http2: true,
    });
  });
});

const openssl = findBinary('openssl');

describe.skipIf(openssl === undefined)('TLS client authentication against a real handshake (openssl certificates)', () => {
  const tdir = mkdtempSync(join(tmpdir(), 'cbwatch-tls-'));
  const run = (...args: string[]) => execFileSync(openssl as string, args, { cwd: tdir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  if (openssl !== undefined) {
    writeFileSync(join(tdir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
    run('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=cbwatch-test-ca');
    run('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
    run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext');
    run('req', ...ec, '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=prometheus');
    run('x509', '-req', '-in', 'client.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.crt', '-days', '2');
    // A client certificate nobody trusts.
    run('req', '-x509', ...ec, '-keyout', 'rogue.key', '-out', 'rogue.crt', '-days', '2', '-subj', '/CN=rogue');
  }
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    rmSync(tdir, { recursive: true, force: true });
  });

  async function serve(clientAuthType: string): Promise<{ port: number; tls: WebTlsSettings }> {
    const p = join(tdir, `web-${clientAuthType}.yml`);
    writeFileSync(
      p,
      `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: ${clientAuthType}\n${clientAuthType === 'NoClientCert' ? '' : '  client_ca_file: ca.crt\n'}`,
    );
    const tls = loadWebConfig(p).tls!;
    const server = createHttpsServer(httpsOptions(tls), (req, res) => {
      const refused = checkClientCertificate(tls, req.socket as TLSSocket);
      res.statusCode = refused === undefined ? 200 : 403;
      res.end(refused ?? 'ok');
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { port: (server.address() as AddressInfo).port, tls };
  }

  function get(port: number, client?: 'client' | 'rogue'): Promise<number | 'handshake-failed'> {
    return new Promise((resolve) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port,
          servername: 'localhost',
          path: '/metrics',
          ca: readFileSync(join(tdir, 'ca.crt')),
          ...(client === undefined ? {} : { cert: readFileSync(join(tdir, `${client}.crt`)), key: readFileSync(join(tdir, `${client}.key`)) }),
          agent: false,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', () => resolve('handshake-failed'));
      req.end();
    });
  }

  it('NoClientCert serves anyone', async () => {
    const { port } = await serve('NoClientCert');
    expect(await get(port)).toBe(200);
  });

  it('RequireAndVerifyClientCert refuses the handshake without a trusted certificate', async () => {
    const { port } = await serve('RequireAndVerifyClientCert');
    expect(await get(port, 'client')).toBe(200);
    expect(await get(port)).toBe('handshake-failed');
    expect(await get(port, 'rogue')).toBe('handshake-failed');
  });

  it('VerifyClientCertIfGiven: none is fine, an untrusted one is refused', async () => {
    const { port } = await serve('VerifyClientCertIfGiven');
    expect(await get(port)).toBe(200);
    expect(await get(port, 'client')).toBe(200);
    expect(await get(port, 'rogue')).toBe(403);
  });

  it('RequireAnyClientCert: any certificate, but one is needed', async () => {
    const { port } = await serve('RequireAnyClientCert');
    expect(await get(port)).toBe(403);
    expect(await get(port, 'rogue')).toBe(200);
  });
});

describe('subjectAltNames: the SAN values client_allowed_sans matches, as the exporter-toolkit collects them', () => {
  it('DNS, IP (Go notation), email and URI; quoted values decoded; other kinds ignored', () => {
    // Node's subjectaltname text, as printed for real certificates (checked with openssl-made ones).
    const text = 'DNS:a.example, IP Address:2001:DB8:0:0:0:0:0:1, IP Address:10.0.0.1, email:me@x.org, URI:"spiffe://ex/a\\u002cb", DirName:CN=dir, othername:<unsupported>, IP Address:0:0:0:0:0:FFFF:102:304';
    expect(subjectAltNames(text)).toEqual(['a.example', '2001:db8::1', '10.0.0.1', 'me@x.org', 'spiffe://ex/a,b', '1.2.3.4']);
    expect(subjectAltNames(undefined)).toEqual([]);
  });
  it('IPv6 is written as Go writes it (RFC 5952)', () => {
    expect(goIpString('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(goIpString('2001:DB8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1');
    expect(goIpString('2001:DB8:0:1:0:0:0:1')).toBe('2001:db8:0:1::1');
    expect(goIpString('2001:DB8:1:2:3:4:5:6')).toBe('2001:db8:1:2:3:4:5:6');
    expect(goIpString('2001:DB8:0:1:2:3:4:5')).toBe('2001:db8:0:1:2:3:4:5');
    expect(goIpString('FE80:0:0:0:0:0:0:0')).toBe('fe80::');
  });
});
