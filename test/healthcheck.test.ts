/**
 * `cbwatch healthcheck` against a real daemon (started as `run` starts it, on an ephemeral port): plain
 * HTTP, a non-default listen address given by flag or environment, a wildcard address, TLS with basic auth
 * from a web config file, a client certificate requirement, and the failures (nothing listening, plain HTTP
 * against TLS, a bad configuration → 1, never Docker's reserved 2).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { startWithWebConfig } from '../src/commands/serve.js';
import { parseArgs } from '../src/config/flags.js';
import { loadConfig } from '../src/config/load.js';
import type { Daemon } from '../src/daemon.js';
import { createRequire } from 'node:module';
import { findBinary } from './helpers/tools.js';

// src/healthcheck.cts, as compiled (a CommonJS file; test/setup/dist.ts keeps dist/ current).
const { probe } = createRequire(import.meta.url)('../dist/healthcheck.cjs') as typeof import('../src/healthcheck.cjs');

const dir = mkdtempSync(join(tmpdir(), 'cbwatch-healthcheck-'));
const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the daemon exactly as `cbwatch run ARGS` would (no cluster: it serves its own metrics). */
async function startRun(argv: string[], env: Record<string, string> = {}): Promise<{ port: number; url: string }> {
  const config = loadConfig(parseArgs(['run', ...argv]).flags, env, { allowNoClusters: true });
  const daemon = await startWithWebConfig(config, pino({ level: 'silent' }));
  daemons.push(daemon);
  const port = Number(new URL(daemon.url).port);
  return { port, url: daemon.url };
}

async function healthcheck(argv: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    const code = await main(['healthcheck', ...argv], (s) => void (out += s), (s) => void (err += s));
    return { code, out, err };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('cbwatch healthcheck', () => {
  it('plain HTTP on a non-default listen address (flag): 0', async () => {
    const { port } = await startRun(['--web.listen-address', '127.0.0.1:0']);
    const r = await healthcheck(['--web.listen-address', `127.0.0.1:${port}`]);
    expect(r.out).toContain(`http://127.0.0.1:${port}/-/healthy: 200 healthy`);
    expect(r.code).toBe(0);
  });

  it('the listen address from the environment, as the Docker HEALTHCHECK sees it: 0', async () => {
    const { port } = await startRun([], { CBWATCH_WEB_LISTEN_ADDRESS: '127.0.0.1:0' });
    const r = await healthcheck([], { CBWATCH_WEB_LISTEN_ADDRESS: `127.0.0.1:${port}` });
    expect(r.code, r.err).toBe(0);
  });

  it('a wildcard listen address is checked on the loopback: 0', async () => {
    const { port } = await startRun(['--web.listen-address', '0.0.0.0:0']);
    const r = await healthcheck(['--web.listen-address', `:${port}`]);
    expect(r.out).toContain(`http://127.0.0.1:${port}/`);
    expect(r.code).toBe(0);
  });

  it('accepts the whole `run` command line (config file, shard...) so it can be copied', async () => {
    const { port } = await startRun(['--web.listen-address', '127.0.0.1:0']);
    const cfg = join(dir, 'empty.yml');
    writeFileSync(cfg, 'clusters: []\nwebhooks: {}\n');
    const r = await healthcheck(['--config', cfg, '--shard', '0/2', '--log.format', 'logfmt', '--web.listen-address', `127.0.0.1:${port}`]);
    expect(r.code, r.err).toBe(0);
  });

  it('takes run\'s flags, but not --config.check or another command\'s flags', () => {
    expect(parseArgs(['healthcheck', '--web.listen-address', ':1', '--shard', '0/2']).command).toBe('healthcheck');
    expect(() => parseArgs(['healthcheck', '--config.check'])).toThrow(/not a flag of "healthcheck"/);
    expect(() => parseArgs(['healthcheck', '--scenario', 'demo'])).toThrow(/not a flag of "healthcheck"/);
  });

  it('nothing listening: 1, naming the URL', async () => {
    const { port } = await startRun(['--web.listen-address', '127.0.0.1:0']);
    await daemons.pop()?.close();
    const r = await healthcheck(['--web.listen-address', `127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    // ECONNREFUSED on a quiet machine; a busy shared one has answered EHOSTUNREACH for a closed loopback port.
    expect(r.err).toMatch(new RegExp(`http://127\\.0\\.0\\.1:${port}/-/healthy: (ECONNREFUSED|EHOSTUNREACH|ECONNRESET)`));
  });

  it('a bad configuration: 1 (Docker reserves 2), with the key named', async () => {
    const r = await healthcheck(['--web.listen-address', 'nonsense']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/--web.listen-address/);
  });

  const openssl = findBinary('openssl');
  describe.skipIf(openssl === undefined)('TLS (openssl certificates)', () => {
    const run = (...args: string[]) => execFileSync(openssl as string, args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    if (openssl !== undefined) {
      // A server certificate for a public name, as in production: the loopback is not in it.
      writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:cbwatch.example.com\n');
      run('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=hc-test-ca');
      run('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=cbwatch.example.com');
      run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext');
    }
    // bcrypt of "secret" (cost 4, to keep the test fast); /-/healthy must not need it.
    const HASH = '$2b$04$1O/kF6HXQrY0oXAi3nL5huvOcMXyRk4QOYbH1JdJ2VG1f3JtO3M1K';
    const webConfig = (extra = ''): string => {
      const p = join(dir, `web-${Math.random().toString(36).slice(2)}.yml`);
      writeFileSync(p, `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n${extra}basic_auth_users:\n  prometheus: ${HASH}\n`);
      return p;
    };

    it('TLS and basic auth from the web config file: 0; the same address without the web config: 1', async () => {
      const web = webConfig();
      const { port, url } = await startRun(['--web.listen-address', '127.0.0.1:0', '--web.config.file', web]);
      expect(url).toMatch(/^https:/);
      // /metrics really is protected, so the 200 below comes from the exemption of /-/healthy.
      const metrics = await probe({ url: `https://127.0.0.1:${port}/metrics`, tls: { rejectUnauthorized: false } });
      expect(metrics.message).toContain(': 401 not healthy');
      // Plain HTTP against the TLS port (the web config forgotten): 1.
      const plain = await healthcheck(['--web.listen-address', `127.0.0.1:${port}`]);
      expect(plain.code).toBe(1);
      const r = await healthcheck(['--web.listen-address', `127.0.0.1:${port}`, '--web.config.file', web]);
      expect(r.out).toContain(`https://127.0.0.1:${port}/-/healthy: 200 healthy`);
      expect(r.code).toBe(0);
      const viaEnv = await healthcheck([], { CBWATCH_WEB_LISTEN_ADDRESS: `127.0.0.1:${port}`, CBWATCH_WEB_CONFIG_FILE: web });
      expect(viaEnv.code, viaEnv.err).toBe(0);
    });

    it('a required client certificate: the server\'s own is presented (RequireAnyClientCert): 0', async () => {
      const web = webConfig('  client_auth_type: RequireAnyClientCert\n');
      const { port } = await startRun(['--web.listen-address', '127.0.0.1:0', '--web.config.file', web]);
      const r = await healthcheck(['--web.listen-address', `127.0.0.1:${port}`, '--web.config.file', web]);
      expect(r.code, r.err).toBe(0);
    });

    it('never prints key material', async () => {
      const web = webConfig();
      const { port } = await startRun(['--web.listen-address', '127.0.0.1:0', '--web.config.file', web]);
      const r = await healthcheck(['--web.listen-address', `127.0.0.1:${port}`, '--web.config.file', web]);
      expect(r.out + r.err).not.toMatch(/BEGIN|PRIVATE/);
    });
  });
});
