/**
 * The light healthcheck probe (src/healthcheck.cts) as it runs: real processes — the image's
 * HEALTHCHECK (`node dist/healthcheck.cjs`) and the command (`node bin/cbwatch.js healthcheck`) — against a
 * daemon started as `run` starts it, on ephemeral ports: plain HTTP, TLS with a self-signed certificate and
 * basic auth, required client certificates, a wrong port, flag over environment. Then what it loads: the static
 * import graph of the compiled entry, and the modules a real probe process has loaded when it exits (none of
 * fastify, prom-client, zod, pino, undici). And the light parser held to the full one (src/config/flags.ts)
 * and to parseListenAddress (src/config/load.ts), which are the oracles here.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startWithWebConfig } from '../src/commands/serve.js';
import { FLAG_NAMES, parseArgs } from '../src/config/flags.js';
import { COLLECTOR_NAMES } from '../src/config/schema.js';
import { loadConfig, parseListenAddress } from '../src/config/load.js';
import type { Daemon } from '../src/daemon.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { CBWATCH_BIN } from './helpers/bin.js';
import { findBinary } from './helpers/tools.js';

const ENTRY = join(PACKAGE_ROOT, 'dist', 'healthcheck.cjs');
// src/healthcheck.cts, as compiled (a CommonJS file; test/setup/dist.ts keeps dist/ current).
const hc = createRequire(import.meta.url)(ENTRY) as typeof import('../src/healthcheck.cjs');

const dir = mkdtempSync(join(tmpdir(), 'cbwatch-probe-'));
const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the daemon exactly as `cbwatch run ARGS` would (no cluster: it serves its own metrics). */
async function startRun(argv: string[]): Promise<{ port: number; url: string; daemon: Daemon }> {
  const config = loadConfig(parseArgs(['run', ...argv]).flags, {}, { allowNoClusters: true });
  const daemon = await startWithWebConfig(config, pino({ level: 'silent' }));
  daemons.push(daemon);
  return { port: Number(new URL(daemon.url).port), url: daemon.url, daemon };
}

/** The environment a probe gets: this one without any CBWATCH_* variable, plus `env`. */
function probeEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CBWATCH_')));
  return { ...clean, ...env };
}

type Result = { code: number; out: string; err: string };

/** Runs a real process (asynchronously: the daemon under test answers from this process's event loop). */
function runNode(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env: probeEnv(env), timeout: 20_000 }, (error, out, err) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, out, err });
    });
  });
}

/** The two ways to run the probe: the image's HEALTHCHECK entry, and the `cbwatch healthcheck` command. */
const ENTRIES = [
  { name: 'node dist/healthcheck.cjs', run: (argv: string[], env: Record<string, string> = {}) => runNode([ENTRY, ...argv], env) },
  { name: 'node bin/cbwatch.js healthcheck', run: (argv: string[], env: Record<string, string> = {}) => runNode([CBWATCH_BIN, 'healthcheck', ...argv], env) },
] as const;

describe.each(ENTRIES)('$name', ({ run }) => {
  it('plain HTTP, the listen address from the environment (as the image gives it): 0, one line on stdout', async () => {
    const { port } = await startRun(['--web.listen-address', '127.0.0.1:0']);
    const r = await run([], { CBWATCH_WEB_LISTEN_ADDRESS: `127.0.0.1:${port}` });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`http://127.0.0.1:${port}/-/healthy: 200 healthy\n`);
    expect(r.err).toBe('');
  });

  it('a wildcard listen address by flag is checked on the loopback: 0', async () => {
    const { port } = await startRun(['--web.listen-address', '0.0.0.0:0']);
    const r = await run([`--web.listen-address=0.0.0.0:${port}`]);
    expect(r.out).toBe(`http://127.0.0.1:${port}/-/healthy: 200 healthy\n`);
    expect(r.code).toBe(0);
  });

  it('a wrong port: 1, naming the URL and the reason on stderr', async () => {
    const { port, daemon } = await startRun(['--web.listen-address', '127.0.0.1:0']);
    await daemon.close();
    const r = await run(['--web.listen-address', `127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(`http://127.0.0.1:${port}/-/healthy: ECONNREFUSED\n`);
  });

  it('the flag wins over the environment, each way', async () => {
    const live = (await startRun(['--web.listen-address', '127.0.0.1:0'])).port;
    const gone = await startRun(['--web.listen-address', '127.0.0.1:0']);
    await gone.daemon.close();
    const flagLive = await run(['--web.listen-address', `127.0.0.1:${live}`], { CBWATCH_WEB_LISTEN_ADDRESS: `127.0.0.1:${gone.port}` });
    expect(flagLive.code, flagLive.err).toBe(0);
    const flagGone = await run(['--web.listen-address', `127.0.0.1:${gone.port}`], { CBWATCH_WEB_LISTEN_ADDRESS: `127.0.0.1:${live}` });
    expect(flagGone.code).toBe(1);
    expect(flagGone.err).toContain(`127.0.0.1:${gone.port}`);
    // An empty variable counts as unset (as for run): an empty CBWATCH_WEB_CONFIG_FILE is no web config.
    const emptyVar = await run([], { CBWATCH_WEB_LISTEN_ADDRESS: `127.0.0.1:${live}`, CBWATCH_WEB_CONFIG_FILE: '' });
    expect(emptyVar.code, emptyVar.err).toBe(0);
  });

  it('takes run\'s whole command line, and reads no configuration file (a broken one is the daemon\'s business): 0', async () => {
    const { port } = await startRun(['--web.listen-address', '127.0.0.1:0']);
    const broken = join(dir, 'broken.yml');
    writeFileSync(broken, 'clusters: [\n');
    const r = await run([
      '--config', broken, '--shard', '0/2', '--log.format', 'logfmt', '--log.level=debug', '--no-collector.search', '--collector.xdcr',
      '--couchbase.insecure-skip-verify', '--web.telemetry-path', '/m', '--web.listen-address', `127.0.0.1:${port}`,
    ]);
    expect(r.code, r.err).toBe(0);
  });

  it('a malformed listen address or an unreadable web config: 1 (Docker reserves 2), naming the flag or variable', async () => {
    const bad = await run(['--web.listen-address', 'nonsense']);
    expect(bad.code).toBe(1);
    expect(bad.err).toBe('cbwatch healthcheck: configuration error: --web.listen-address: "nonsense" is not HOST:PORT, e.g. :9420, 0.0.0.0:9420 or [::1]:9420\n');
    const badEnv = await run([], { CBWATCH_WEB_LISTEN_ADDRESS: '::1:9420' });
    expect(badEnv.code).toBe(1);
    expect(badEnv.err).toContain('CBWATCH_WEB_LISTEN_ADDRESS: "::1:9420" is not HOST:PORT');
    const missing = await run(['--web.listen-address', '127.0.0.1:1', '--web.config.file', join(dir, 'absent.yml')]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain(`--web.config.file: cannot read ${JSON.stringify(join(dir, 'absent.yml'))} (no such file)`);
    const yamlError = join(dir, 'bad-web.yml');
    writeFileSync(yamlError, 'tls_server_config:\n  cert_file: [a\n');
    const syntax = await run(['--web.listen-address', '127.0.0.1:1'], { CBWATCH_WEB_CONFIG_FILE: yamlError });
    expect(syntax.code).toBe(1);
    expect(syntax.err).toMatch(new RegExp(`^cbwatch healthcheck: configuration error: ${yamlError.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: YAML syntax error: `));
  });

  it('a flag it does not know goes to the full CLI, which names it (and exits as any command line error does)', async () => {
    const r = await run(['--bogus']);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('unknown flag --bogus');
    const other = await run(['--scenario', 'demo']);
    expect(other.err).toContain('--scenario is not a flag of "healthcheck"');
  });

  const openssl = findBinary('openssl');
  describe.skipIf(openssl === undefined)('TLS (openssl certificates)', () => {
    const ossl = (...args: string[]) => execFileSync(openssl as string, args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    const tag = Math.random().toString(36).slice(2);
    if (openssl !== undefined) {
      // A CA and a server certificate for a public name (the loopback is not in it), and a self-signed one.
      writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:cbwatch.example.com\n');
      ossl('req', '-x509', ...ec, '-keyout', `ca-${tag}.key`, '-out', `ca-${tag}.crt`, '-days', '2', '-subj', '/CN=probe-test-ca');
      ossl('req', ...ec, '-keyout', `server-${tag}.key`, '-out', `server-${tag}.csr`, '-subj', '/CN=cbwatch.example.com');
      ossl('x509', '-req', '-in', `server-${tag}.csr`, '-CA', `ca-${tag}.crt`, '-CAkey', `ca-${tag}.key`, '-CAcreateserial', '-out', `server-${tag}.crt`, '-days', '2', '-extfile', 'san.ext');
      ossl('req', '-x509', ...ec, '-keyout', `self-${tag}.key`, '-out', `self-${tag}.crt`, '-days', '2', '-subj', '/CN=cbwatch.example.com');
      ossl('req', '-x509', ...ec, '-keyout', `other-ca-${tag}.key`, '-out', `other-ca-${tag}.crt`, '-days', '2', '-subj', '/CN=other-ca');
    }
    // bcrypt of "secret" (cost 4); /-/healthy must not need it.
    const HASH = '$2b$04$1O/kF6HXQrY0oXAi3nL5huvOcMXyRk4QOYbH1JdJ2VG1f3JtO3M1K';
    const webConfig = (cert: string, tls = ''): string => {
      const p = join(dir, `web-${Math.random().toString(36).slice(2)}.yml`);
      // Relative paths: relative to the web config file, as the daemon reads them.
      writeFileSync(p, `tls_server_config:\n  cert_file: ${cert}-${tag}.crt\n  key_file: ${cert}-${tag}.key\n${tls}basic_auth_users:\n  prometheus: ${HASH}\n`);
      return p;
    };

    it('self-signed TLS and basic auth: 0 with the web config (flag or variable); 1 without it', async () => {
      const web = webConfig('self');
      const { port, url } = await startRun(['--web.listen-address', '127.0.0.1:0', '--web.config.file', web]);
      expect(url).toMatch(/^https:/);
      // /metrics really is protected, so the 200 below comes from the exemption of /-/healthy.
      expect((await hc.probe({ url: `https://127.0.0.1:${port}/metrics`, tls: { rejectUnauthorized: false } })).message).toContain(': 401 not healthy');
      const byFlag = await run(['--web.listen-address', `127.0.0.1:${port}`, '--web.config.file', web]);
      expect(byFlag.out).toBe(`https://127.0.0.1:${port}/-/healthy: 200 healthy\n`);
      expect(byFlag.code).toBe(0);
      const byEnv = await run([], { CBWATCH_WEB_LISTEN_ADDRESS: `127.0.0.1:${port}`, CBWATCH_WEB_CONFIG_FILE: web });
      expect(byEnv.code, byEnv.err).toBe(0);
      const plain = await run(['--web.listen-address', `127.0.0.1:${port}`]);
      expect(plain.code).toBe(1);
      expect(plain.err).toContain(`http://127.0.0.1:${port}/-/healthy: `);
    });

    it('a client certificate required (RequireAnyClientCert): the server\'s own is presented: 0; never any key material', async () => {
      const web = webConfig('self', '  client_auth_type: RequireAnyClientCert\n');
      const { port } = await startRun(['--web.listen-address', '127.0.0.1:0', '--web.config.file', web]);
      const r = await run(['--web.listen-address', `127.0.0.1:${port}`, '--web.config.file', web]);
      expect(r.code, r.err).toBe(0);
      expect(r.out + r.err).not.toMatch(/BEGIN|PRIVATE/);
    });

    it('RequireAndVerifyClientCert: 0 when the client CA signed the server certificate, 1 (saying why) when not', async () => {
      const signed = webConfig('server', `  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca-${tag}.crt\n`);
      const a = await startRun(['--web.listen-address', '127.0.0.1:0', '--web.config.file', signed]);
      const ok = await run(['--web.listen-address', `127.0.0.1:${a.port}`, '--web.config.file', signed]);
      expect(ok.code, ok.err).toBe(0);
      const unsigned = webConfig('server', `  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: other-ca-${tag}.crt\n`);
      const b = await startRun(['--web.listen-address', '127.0.0.1:0', '--web.config.file', unsigned]);
      const refused = await run(['--web.listen-address', `127.0.0.1:${b.port}`, '--web.config.file', unsigned]);
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${b.port}/-/healthy: \\S+`));
      expect(refused.out + refused.err).not.toMatch(/BEGIN|PRIVATE/);
    });

    it('a required client certificate whose key file cannot be read: 1, naming the key and the path', async () => {
      const web = join(dir, `web-nokey-${tag}.yml`);
      writeFileSync(web, `tls_server_config:\n  cert_file: self-${tag}.crt\n  key_file: gone.key\n  client_auth_type: RequireAnyClientCert\n`);
      const r = await run(['--web.listen-address', '127.0.0.1:1', '--web.config.file', web]);
      expect(r.code).toBe(1);
      expect(r.err).toContain(`${web}: tls_server_config.key_file: cannot read private key ${JSON.stringify(join(dir, 'gone.key'))} (no such file)`);
    });
  });
});

describe('what the probe loads', () => {
  const HEAVY = ['fastify', 'prom-client', 'zod', 'pino', 'undici', 'node-cron'];

  it('dist/healthcheck.cjs requires only Node\'s modules (node:tls and the yaml package lazily; not even node:http); its one computed import is the full CLI', () => {
    const text = readFileSync(ENTRY, 'utf8');
    const specifiers = [...text.matchAll(/\b(?:require|import)\(\s*(['"])([^'"]+)\1\s*\)/g)].map((m) => m[2]);
    expect(new Set(specifiers)).toEqual(new Set(['node:fs', 'node:net', 'node:path', 'node:util', 'node:tls', 'yaml', 'node:url']));
    // No relative module: nothing of the application comes with it.
    for (const s of specifiers) expect(s).not.toMatch(/^\./);
    const computed = text.split('\n').filter((line) => /\bimport\(\s*(?!['"])/.test(line));
    expect(computed).toHaveLength(1);
    expect(computed[0]).toContain("'cli.js'");
    for (const h of HEAVY) expect(text).not.toMatch(new RegExp(`['"]${h}['"]`));
  });

  it('bin/cbwatch.js statically imports only node:fs and dist/hangup.js (which imports nothing), and sends healthcheck to the probe before the CLI', () => {
    const bin = readFileSync(CBWATCH_BIN, 'utf8');
    const statics = [...bin.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
    expect(statics).toEqual(['node:fs', '../dist/hangup.js']);
    expect(readFileSync(join(PACKAGE_ROOT, 'dist', 'hangup.js'), 'utf8')).not.toMatch(/^import /m);
    const probeAt = bin.indexOf("import('../dist/healthcheck.cjs')");
    expect(probeAt).toBeGreaterThan(bin.indexOf("argv[0] === 'healthcheck'"));
    expect(probeAt).toBeLessThan(bin.indexOf("import('../dist/bundle/cli.js')"));
  });

  it('a real probe process, HTTP and TLS with a client certificate, has loaded none of the daemon\'s packages when it exits', async () => {
    // A preload that writes the CommonJS module cache at exit: the daemon's packages (fastify, prom-client,
    // pino, undici, yaml) are CommonJS, so whatever loaded them leaves them there.
    const preload = join(dir, 'record-modules.cjs');
    writeFileSync(preload, "process.on('exit', () => require('node:fs').writeFileSync(process.env.RECORD_MODULES, JSON.stringify(Object.keys(require.cache))));\n");
    const { port } = await startRun(['--web.listen-address', '127.0.0.1:0']);
    const loaded = async (args: string[]): Promise<string[]> => {
      const record = join(dir, `modules-${Math.random().toString(36).slice(2)}.json`);
      const r = await runNode(['--require', preload, ...args], { RECORD_MODULES: record });
      expect(r.code, r.err).toBe(0);
      return JSON.parse(readFileSync(record, 'utf8')) as string[];
    };
    for (const args of [[ENTRY, '--web.listen-address', `127.0.0.1:${port}`], [CBWATCH_BIN, 'healthcheck', '--web.listen-address', `127.0.0.1:${port}`]]) {
      const mods = await loaded(args);
      expect(mods.some((m) => m.endsWith('healthcheck.cjs'))).toBe(true);
      for (const m of mods) expect(m, `${args[0]} loaded ${m}`).not.toContain('node_modules');
    }
  });
});

describe('the light parser, held to the full one', () => {
  it('knows exactly the flags healthcheck takes (run\'s), each with its kind', () => {
    const values: string[] = [];
    const switches: string[] = [];
    for (const name of FLAG_NAMES) {
      if (name === 'help' || name === 'version') continue; // these go to the full CLI
      let needsValue = false;
      try {
        parseArgs(['healthcheck', `--${name}`]);
      } catch (e) {
        if (/is not a flag of "healthcheck"/.test((e as Error).message)) continue;
        needsValue = /needs a value/.test((e as Error).message);
      }
      if (needsValue) {
        try {
          parseArgs(['healthcheck', `--${name}`, 'x']);
        } catch (e) {
          if (/is not a flag of "healthcheck"/.test((e as Error).message)) continue;
        }
        values.push(name);
      } else switches.push(name);
    }
    expect([...hc.RUN_VALUE_FLAGS].sort()).toEqual(values.sort());
    expect([...hc.RUN_SWITCH_FLAGS].sort()).toEqual(switches.sort());
    expect([...hc.COLLECTORS]).toEqual(COLLECTOR_NAMES);
  });

  it('takes a copied run command line; declines what the full CLI must judge', () => {
    expect(hc.parseHealthcheckArgs([])).toEqual({ 'web.listen-address': undefined, 'web.config.file': undefined });
    expect(hc.parseHealthcheckArgs(['--config', 'x.yml', '--web.listen-address=:1', '--no-collector.xdcr', '--web.config.file', 'w.yml', '--shard', '0/2'])).toEqual({
      'web.listen-address': ':1',
      'web.config.file': 'w.yml',
    });
    for (const argv of [['--help'], ['-h'], ['--version'], ['--bogus'], ['--config.check'], ['extra'], ['--web.listen-address'], ['--couchbase.password', 'p'], ['--collector.nope'], ['--scenario', 'demo']]) {
      expect(hc.parseHealthcheckArgs(argv), argv.join(' ')).toBeUndefined();
    }
  });

  it('reads a listen address as run does (same result, same message)', () => {
    for (const text of [':9420', '0.0.0.0:9420', 'localhost:1', '[::1]:9420', '[::]:0', ' 127.0.0.1:80 ', '127.0.0.1', '::1:9420', 'host:99999', 'a b:1', '[fe80::1%eth0]:9', '']) {
      let expected: unknown;
      try {
        expected = parseListenAddress(text, 'SRC');
      } catch (e) {
        expected = (e as Error).message;
      }
      let actual: unknown;
      try {
        actual = hc.parseProbeListenAddress(text, 'SRC');
      } catch (e) {
        actual = (e as Error).message;
      }
      expect(actual, JSON.stringify(text)).toEqual(expected);
    }
  });
});

describe('the probe\'s HTTP/1.1 request, against peers that are not cbwatch', () => {
  /** A TCP server on an ephemeral loopback port that does `onConnection` with each connection. */
  async function peer(onConnection: (socket: Socket, request: () => string) => void): Promise<{ port: number; close: () => void }> {
    const sockets: Socket[] = [];
    const server = createServer((socket) => {
      sockets.push(socket);
      let got = '';
      socket.on('data', (d: Buffer) => void (got += d.toString('latin1')));
      socket.on('error', () => undefined);
      onConnection(socket, () => got);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return {
      port: (server.address() as { port: number }).port,
      close: () => {
        for (const s of sockets) s.destroy();
        server.close();
      },
    };
  }
  const url = (port: number): string => `http://127.0.0.1:${port}/-/healthy`;

  it('sends one GET of the path with Host and Connection: close, and reads the status line (200 in any reason phrase, HTTP/1.0 too)', async () => {
    let request = '';
    const p = await peer((socket, got) =>
      socket.on('data', () => {
        if (!got().includes('\r\n\r\n')) return;
        request = got();
        socket.end('HTTP/1.0 200 Fine\r\nContent-Length: 0\r\n\r\n');
      }),
    );
    try {
      expect(await hc.probe({ url: url(p.port) })).toEqual({ ok: true, message: `${url(p.port)}: 200 healthy` });
      expect(request).toBe(`GET /-/healthy HTTP/1.1\r\nHost: 127.0.0.1:${p.port}\r\nUser-Agent: cbwatch-healthcheck\r\nAccept: */*\r\nConnection: close\r\n\r\n`);
    } finally {
      p.close();
    }
  });

  it('a status line split over several packets, and a 503: not healthy', async () => {
    const p = await peer((socket) => {
      socket.write('HTTP/1.1 50');
      setImmediate(() => socket.end('3 Service Unavailable\r\n\r\n'));
    });
    try {
      expect(await hc.probe({ url: url(p.port) })).toEqual({ ok: false, message: `${url(p.port)}: 503 not healthy` });
    } finally {
      p.close();
    }
  });

  it('something that is not HTTP, a peer that hangs up, a peer that never answers: not healthy, saying which', async () => {
    const garbage = await peer((socket) => socket.end('SSH-2.0-OpenSSH_9.2\r\n'));
    const hangup = await peer((socket) => socket.end());
    const silent = await peer(() => undefined);
    try {
      expect(await hc.probe({ url: url(garbage.port) })).toEqual({ ok: false, message: `${url(garbage.port)}: not an HTTP answer` });
      expect(await hc.probe({ url: url(hangup.port) })).toEqual({ ok: false, message: `${url(hangup.port)}: closed without an HTTP answer` });
      expect(await hc.probe({ url: url(silent.port) }, 300)).toEqual({ ok: false, message: `${url(silent.port)}: no answer within 300 ms` });
    } finally {
      garbage.close();
      hangup.close();
      silent.close();
    }
  });
});
