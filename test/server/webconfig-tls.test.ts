/**
 * Issue 13, item 7: every key of the exporter-toolkit's web config, against real TLS clients (curl and
 * openssl s_client from the system) talking to the real daemon.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/types.js';
import { loadWebConfig, webConfigToServerOptions } from '../../src/config/webconfig.js';
import { startDaemon } from '../../src/daemon.js';
import type { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log.js';
import { findBinary } from '../helpers/tools.js';

const openssl = findBinary('openssl');
const curl = findBinary('curl');
const dir = mkdtempSync(join(tmpdir(), 'cbwatch-webtls-'));
const sh = (...args: string[]) => execFileSync(openssl as string, args, { cwd: dir, stdio: 'pipe' });
const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

if (openssl !== undefined) {
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  writeFileSync(join(dir, 'good.ext'), 'subjectAltName=DNS:prometheus.example,URI:spiffe://example/prometheus\n');
  writeFileSync(join(dir, 'bad.ext'), 'subjectAltName=DNS:intruder.example\n');
  writeFileSync(join(dir, 'ip6.ext'), 'subjectAltName=IP:2001:db8::7,email:scraper@example.org,dirName:dn\n[dn]\nCN=prometheus.example\n');
  sh('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=cbwatch-test-ca');
  for (const [name, ext] of [
    ['server', 'server.ext'],
    ['good', 'good.ext'],
    ['bad', 'bad.ext'],
    ['ip6', 'ip6.ext'],
  ] as const) {
    sh('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    sh('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', ext);
  }
}

let daemon: Daemon | undefined;
/** What the daemon of the latest serve() logged (JSON lines). */
let logged = '';
afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function serve(yaml: string): Promise<number> {
  const file = join(dir, `web-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(file, yaml);
  const server = webConfigToServerOptions(loadWebConfig(file));
  const config: Config = {
    clusters: [],
    webhooks: { syncGateway: undefined },
    web: { listenHost: '127.0.0.1', listenPort: 0, configFile: file },
    log: { level: 'silent', format: 'json' },
  };
  logged = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logged += chunk.toString();
      cb();
    },
  });
  daemon = await startDaemon({
    config,
    logger: createLogger({ level: 'info', destination: sink }),
    processMetrics: false,
    ...(server.https ? { https: server.https } : {}),
    ...(server.checkClientCertificate ? { checkClientCertificate: server.checkClientCertificate } : {}),
    ...(server.rateLimit ? { rateLimit: server.rateLimit } : {}),
    ...(server.headers ? { headers: server.headers } : {}),
    ...(server.http2 !== undefined ? { http2: server.http2 } : {}),
  });
  return Number(new URL(daemon.url).port);
}

function run(bin: string, args: string[], input = ''): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(bin, args, { cwd: dir, timeout: 15_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
    child.stdin?.end(input);
  });
}

const tlsBase = 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n';
const curlArgs = (port: number, ...extra: string[]) => ['-sS', '--cacert', 'ca.crt', ...extra, `https://localhost:${port}/-/healthy`];

/** openssl s_client: the negotiated protocol and cipher, or undefined when the handshake failed. */
async function handshake(port: number, ...args: string[]): Promise<{ cipher: string; protocol: string } | undefined> {
  const r = await run(openssl as string, ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', '-CAfile', 'ca.crt', ...args], 'Q\n');
  const cipher = /Cipher is (\S+)/.exec(r.out)?.[1];
  const protocol = /Protocol\s*:\s*(\S+)/.exec(r.out)?.[1] ?? /New, (TLSv[\d.]+)/.exec(r.out)?.[1];
  if (cipher === undefined || cipher === '(NONE)' || cipher === '0000') return undefined;
  return { cipher, protocol: protocol ?? '' };
}

describe.skipIf(openssl === undefined || curl === undefined)('web config against real TLS clients', () => {
  it('http_server_config.http2: HTTP/2 by default with TLS, HTTP/1.1 when off', async () => {
    let port = await serve(tlsBase);
    let r = await run(curl as string, curlArgs(port, '--http2', '-o', '/dev/null', '-w', '%{http_version}'));
    expect(r.out).toBe('2');
    // HTTP/1.1 clients are still served.
    r = await run(curl as string, curlArgs(port, '--http1.1', '-o', '/dev/null', '-w', '%{http_version}'));
    expect(r.out).toBe('1.1');
    await daemon?.close();
    port = await serve(`${tlsBase}http_server_config:\n  http2: false\n`);
    r = await run(curl as string, curlArgs(port, '--http2', '-o', '/dev/null', '-w', '%{http_version}'));
    expect(r.out).toBe('1.1');
  }, 30_000);

  it('over HTTP/2 too, a body on a route that reads none is refused (405 on /metrics, 413 elsewhere) and GET is served', async () => {
    const port = await serve(tlsBase);
    const code = async (path: string, ...a: string[]) =>
      (await run(curl as string, ['-sS', '--cacert', 'ca.crt', '--http2', '-o', '/dev/null', '-w', '%{http_version} %{http_code}', ...a, `https://localhost:${port}${path}`])).out;
    expect(await code('/metrics')).toBe('2 200');
    expect(await code('/metrics', '-X', 'POST', '--data-binary', 'x')).toBe('2 405');
    // No Content-Length: the body is announced only by the stream staying open after the headers.
    expect(await code('/-/ready', '-X', 'GET', '-H', 'content-length:', '--data-binary', 'x'.repeat(100))).toBe('2 413');
  }, 30_000);

  it('http_server_config.headers are set on every response, including 401s and 405s', async () => {
    const port = await serve(`${tlsBase}http_server_config:\n  headers:\n    X-Frame-Options: deny\n    X-Content-Type-Options: nosniff\n    Strict-Transport-Security: max-age=31536000\n`);
    const r = await run(curl as string, ['-sS', '-D', '-', '-o', '/dev/null', '--cacert', 'ca.crt', '-X', 'POST', `https://localhost:${port}/metrics`]);
    expect(r.out).toMatch(/^HTTP\/\S+ 405/m);
    expect(r.out).toMatch(/^x-frame-options: deny/im);
    expect(r.out).toMatch(/^x-content-type-options: nosniff/im);
    expect(r.out).toMatch(/^strict-transport-security: max-age=31536000/im);
  }, 30_000);

  it('min_version and max_version bound the protocol', async () => {
    let port = await serve(`${tlsBase}  min_version: TLS13\n`);
    expect(await handshake(port, '-tls1_2')).toBeUndefined();
    expect((await handshake(port, '-tls1_3'))?.protocol).toBe('TLSv1.3');
    await daemon?.close();
    port = await serve(`${tlsBase}  max_version: TLS12\n`);
    expect(await handshake(port, '-tls1_3')).toBeUndefined();
    expect((await handshake(port, '-tls1_2'))?.protocol).toBe('TLSv1.2');
  }, 30_000);

  it('cipher_suites limits TLS 1.2 ciphers (Go names), prefer_server_cipher_suites picks the server order', async () => {
    let port = await serve(`${tlsBase}  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]\n`);
    expect(await handshake(port, '-cipher', 'ECDHE-ECDSA-CHACHA20-POLY1305')).toBeUndefined();
    expect((await handshake(port, '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384'))?.cipher).toBe('ECDHE-ECDSA-AES256-GCM-SHA384');
    await daemon?.close();
    port = await serve(`${tlsBase}  max_version: TLS12\n  prefer_server_cipher_suites: false\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]\n`);
    expect((await handshake(port, '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384'))?.cipher).toBe('ECDHE-ECDSA-AES128-GCM-SHA256');
  }, 30_000);

  it('curve_preferences limits the key-exchange groups', async () => {
    const port = await serve(`${tlsBase}  curve_preferences: [CurveP384]\n`);
    expect(await handshake(port, '-groups', 'P-256')).toBeUndefined();
    expect(await handshake(port, '-groups', 'P-384')).toBeDefined();
  }, 30_000);

  it('client_allowed_sans is enforced at the connection: a disallowed client gets no HTTP exchange at all', async () => {
    const port = await serve(
      `${tlsBase}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  client_allowed_sans: [prometheus.example, spiffe://example/vmagent, 2001:db8::7]\n`,
    );
    const attempt = async (who: string, ...http: string[]) => run(curl as string, curlArgs(port, ...http, '--cert', `${who}.crt`, '--key', `${who}.key`, '-o', '/dev/null', '-w', '%{http_code}'));
    for (const http of [['--http1.1'], ['--http2']]) {
      expect(await attempt('good', ...http)).toEqual({ code: 0, out: '200' });
      // Matched as the toolkit does: an IPv6 SAN in Go's notation (the certificate's DirName CN is not a SAN).
      expect(await attempt('ip6', ...http)).toEqual({ code: 0, out: '200' });
      // No status line at all (curl: 000 and a receive error), not a 403.
      const bad = await attempt('bad', ...http);
      expect(bad.out.startsWith('000')).toBe(true);
      expect(bad.code).not.toBe(0);
    }
    // Two refused connections, one warning: the second falls in the same minute.
    const refusals = logged.split('\n').filter((l) => l.includes('TLS client refused'));
    expect(refusals.length).toBe(1);
    expect(JSON.parse(refusals[0] as string)).toMatchObject({ level: 'warn', reason: 'client certificate has no subject alternative name in client_allowed_sans' });
    // Nothing about the server's key or the client's certificate body reaches the log.
    expect(logged).not.toMatch(/BEGIN|PRIVATE/);
  }, 30_000);

  it('a client refused again and again is logged once a minute, not once per connection', async () => {
    const port = await serve(`${tlsBase}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  client_allowed_sans: [prometheus.example]\n`);
    const ca = readFileSync(join(dir, 'ca.crt'));
    const [cert, key] = [readFileSync(join(dir, 'bad.crt')), readFileSync(join(dir, 'bad.key'))];
    for (let i = 0; i < 40; i++) {
      await new Promise<void>((resolve) => {
        const s = tlsConnect({ host: '127.0.0.1', port, ca, cert, key, servername: 'localhost' });
        s.on('error', () => undefined);
        s.once('close', () => resolve());
      });
    }
    const lines = () => logged.split('\n').filter((l) => l.includes('TLS client refused'));
    expect(lines()).toHaveLength(1);
    expect(JSON.parse(lines()[0] as string)).toMatchObject({ level: 'warn', suppressed: 0 });
  }, 30_000);

  it('inline cert and key (and client_ca) work like the files', async () => {
    const indent = (f: string) => readFileSync(join(dir, f), 'utf8').trim().split('\n').map((l) => `    ${l}`).join('\n');
    const port = await serve(`tls_server_config:\n  cert: |\n${indent('server.crt')}\n  key: |\n${indent('server.key')}\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca: |\n${indent('ca.crt')}\n`);
    const ok = await run(curl as string, curlArgs(port, '--cert', 'good.crt', '--key', 'good.key', '-o', '/dev/null', '-w', '%{http_code}'));
    expect(ok.out).toBe('200');
    const none = await run(curl as string, curlArgs(port, '-o', '/dev/null', '-w', '%{http_code}'));
    expect(none.out).not.toBe('200');
  }, 30_000);

  it('rate_limit answers 429 beyond the burst', async () => {
    const port = await serve(`${tlsBase}rate_limit:\n  interval: 1h\n  burst: 2\n`);
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) codes.push((await run(curl as string, curlArgs(port, '-o', '/dev/null', '-w', '%{http_code}'))).out);
    expect(codes).toEqual(['200', '200', '429']);
  }, 30_000);
});
