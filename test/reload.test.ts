/**
 * Configuration reloads on the real process (`bin/cbwatch.js run`): SIGHUP and POST /-/reload re-read the
 * file; a good one is applied keeping the unchanged collectors' jobs and series, a bad one keeps the running
 * configuration and shows as cbwatch_config_last_reload_successful 0; SIGTERM still ends it cleanly.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import bcrypt from 'bcryptjs';
import { tmpdir } from 'node:os';
import { threadId } from 'node:worker_threads';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CBWATCH_BIN, simulatorForFile, until } from './helpers/bin.js';
import { findBinary } from './helpers/tools.js';

const simulator = simulatorForFile();

interface Bin {
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<{ code: number | null; ms: number }>;
}

async function startBin(args: string[], env: Record<string, string>): Promise<Bin> {
  const child = spawn(process.execPath, [CBWATCH_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const stop = (): Promise<{ code: number | null; ms: number }> =>
    new Promise((resolve) => {
      const t0 = Date.now();
      if (child.exitCode !== null) return resolve({ code: child.exitCode, ms: 0 });
      child.once('exit', (c) => resolve({ code: c, ms: Date.now() - t0 }));
      child.kill('SIGTERM');
    });
  for (let i = 0; i < 600; i++) {
    const m = /"url":"(https?:\/\/[^"]+)"[^\n]*cbwatch started/.exec(out);
    if (m) return { url: m[1] as string, child, stop, output: () => out };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`cbwatch did not start: ${out}`);
}

async function metrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** The value of one exposition line (exact name and labels), or undefined. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function clusterYaml(name: string, collectors: string): string {
  return `  - name: ${name}\n    url: ${simulator.url}\n    username: Administrator\n    password_env: RELOAD_CB_PW\n    collectors:\n${collectors}`;
}

const LAST_SUCCESS = (cluster: string, collector: string): string => `cbwatch_collector_last_success_timestamp_seconds{couchbase_cluster="${cluster}",collector="${collector}"}`;

describe('configuration reload (a real process)', () => {
  it('SIGHUP applies a good file keeping unchanged collectors, keeps serving on a bad one, and SIGTERM still exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-reload-'));
    const cfg = join(dir, 'cbwatch.yml');
    // Few collectors, so that the process is light; `tasks` is the one whose options change.
    const base = '      certificates: { enabled: false }\n      security: { enabled: false }\n      collections: { enabled: false }\n      search: { enabled: false }\n      backup: { enabled: false }\n      index: { enabled: false }\n      search_index: { enabled: false }\n      eventing: { enabled: false }\n      query: { enabled: false }\n      analytics: { enabled: false }\n      processes: { enabled: false }\n      xdcr: { enabled: false }\n      bucket_stats: { enabled: false }\n';
    writeFileSync(cfg, `clusters:\n${clusterYaml('alpha', `${base}      tasks: { interval: 15s }\n`)}\n`);
    const bin = await startBin(['run', '--config', cfg, '--web.listen-address', '127.0.0.1:0'], { RELOAD_CB_PW: 'password' });
    try {
      await until('ready', async () => ((await fetch(`${bin.url}/-/ready`)).status === 200 ? true : undefined));
      const before = await metrics(bin.url);
      expect(value(before, 'cbwatch_config_last_reload_successful')).toBe(1);
      const bucketsAt = value(before, LAST_SUCCESS('alpha', 'buckets'));
      const nodesAt = value(before, LAST_SUCCESS('alpha', 'nodes'));
      const tasksAt = value(before, LAST_SUCCESS('alpha', 'tasks'));
      expect(bucketsAt).toBeGreaterThan(0);
      expect(tasksAt).toBeGreaterThan(0);
      const bucketSeries = before.split('\n').filter((l) => l.startsWith('couchbase_bucket_') && l.includes('couchbase_cluster="alpha"'));
      expect(bucketSeries.length).toBeGreaterThan(0);
      // Timestamps are whole seconds: let one pass, so that a repoll would show.
      await until('a new second', async () => (Date.now() / 1000 >= Math.max(bucketsAt ?? 0, tasksAt ?? 0, nodesAt ?? 0) + 1.2 ? true : undefined));

      // A good file: tasks' interval changes, a second cluster appears.
      writeFileSync(cfg, `clusters:\n${clusterYaml('alpha', `${base}      tasks: { interval: 20s }\n`)}\n${clusterYaml('beta', base)}\n`);
      bin.child.kill('SIGHUP');
      const after = await until('cluster beta on /metrics', async () => {
        const t = await metrics(bin.url);
        return value(t, 'cbwatch_collector_success{couchbase_cluster="beta",collector="buckets"}') === 1 && (value(t, LAST_SUCCESS('alpha', 'tasks')) ?? 0) > (tasksAt ?? 0) ? t : undefined;
      });
      expect(bin.child.exitCode).toBeNull();
      expect(value(after, 'cbwatch_config_last_reload_successful')).toBe(1);
      expect(value(after, 'cbwatch_config_last_reload_success_timestamp_seconds')).toBeGreaterThan(0);
      // Unchanged collectors kept their job: not repolled by the reload, same series.
      expect(value(after, LAST_SUCCESS('alpha', 'buckets'))).toBe(bucketsAt);
      expect(value(after, LAST_SUCCESS('alpha', 'nodes'))).toBe(nodesAt);
      for (const l of bucketSeries) expect(after).toContain(l.slice(0, l.lastIndexOf(' ')));
      expect(bin.output()).toMatch(/"kept":3[,}]/);
      // The password comes from RELOAD_CB_PW: the reload says that value is the one from the start.
      await until('the environment note', async () => (/cluster alpha: password from environment variable RELOAD_CB_PW.*restart to change them/.test(bin.output()) ? true : undefined));

      // A broken file: logged at error with file:line:col, old configuration keeps running.
      writeFileSync(cfg, `clusters:\n${clusterYaml('alpha', base)}\n    bogus_key: 1\n`);
      bin.child.kill('SIGHUP');
      const failed = await until('reload_successful 0', async () => {
        const t = await metrics(bin.url);
        return value(t, 'cbwatch_config_last_reload_successful') === 0 ? t : undefined;
      });
      expect(value(failed, 'cbwatch_collector_success{couchbase_cluster="beta",collector="buckets"}')).toBe(1);
      expect(value(failed, LAST_SUCCESS('alpha', 'buckets'))).toBe(bucketsAt);
      const errLine = bin.output().split('\n').find((l) => l.includes('configuration reload failed')) ?? '';
      expect(errLine).toContain('"level":"error"');
      expect(errLine).toMatch(/cbwatch\.yml:\d+:\d+: clusters\[0\]\.bogus_key/);
      expect((await fetch(`${bin.url}/-/healthy`)).status).toBe(200);
      // Without --web.enable-lifecycle there is no reload endpoint.
      expect((await fetch(`${bin.url}/-/reload`, { method: 'POST' })).status).toBe(404);
    } finally {
      const { code, ms } = await bin.stop();
      expect(code).toBe(0);
      expect(ms).toBeLessThan(10_000);
      expect(bin.output()).toContain('cbwatch stopped');
    }
  }, 120_000);

  it('POST /-/reload with --web.enable-lifecycle answers 200 or 500 with the reason; other methods 405', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-reload-'));
    const cfg = join(dir, 'cbwatch.yml');
    const base = '      certificates: { enabled: false }\n      security: { enabled: false }\n      collections: { enabled: false }\n      search: { enabled: false }\n      backup: { enabled: false }\n      index: { enabled: false }\n      search_index: { enabled: false }\n      eventing: { enabled: false }\n      query: { enabled: false }\n      analytics: { enabled: false }\n      processes: { enabled: false }\n      xdcr: { enabled: false }\n      bucket_stats: { enabled: false }\n      nodes: { enabled: false }\n      tasks: { enabled: false }\n';
    writeFileSync(cfg, `clusters:\n${clusterYaml('alpha', base)}\n`);
    const bin = await startBin(['run', '--config', cfg, '--web.listen-address', '127.0.0.1:0', '--web.enable-lifecycle'], { RELOAD_CB_PW: 'password' });
    try {
      expect((await fetch(`${bin.url}/-/reload`)).status).toBe(405);
      writeFileSync(cfg, `clusters:\n${clusterYaml('alpha', base)}\n${clusterYaml('gamma', base)}\n`);
      const ok = await fetch(`${bin.url}/-/reload`, { method: 'POST' });
      expect(ok.status).toBe(200);
      await until('cluster gamma', async () => (value(await metrics(bin.url), 'cbwatch_collector_success{couchbase_cluster="gamma",collector="buckets"}') === 1 ? true : undefined));
      writeFileSync(cfg, 'clusters: [\n');
      const bad = await fetch(`${bin.url}/-/reload`, { method: 'POST' });
      expect(bad.status).toBe(500);
      expect(await bad.text()).toMatch(/cbwatch\.yml:\d+:\d+: YAML syntax error/);
      const t = await metrics(bin.url);
      expect(value(t, 'cbwatch_config_last_reload_successful')).toBe(0);
      expect(value(t, 'cbwatch_collector_success{couchbase_cluster="gamma",collector="buckets"}')).toBe(1);
    } finally {
      expect((await bin.stop()).code).toBe(0);
    }
  }, 120_000);

  it('a rotated password_file is used after the next 401, without a restart; a reload keeps the jobs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-reload-'));
    const cfg = join(dir, 'cbwatch.yml');
    const pw = join(dir, 'cb-password');
    writeFileSync(pw, 'password\n');
    const only = '      certificates: { enabled: false }\n      security: { enabled: false }\n      collections: { enabled: false }\n      search: { enabled: false }\n      backup: { enabled: false }\n      index: { enabled: false }\n      search_index: { enabled: false }\n      eventing: { enabled: false }\n      query: { enabled: false }\n      analytics: { enabled: false }\n      processes: { enabled: false }\n      xdcr: { enabled: false }\n      bucket_stats: { enabled: false }\n      nodes: { enabled: false }\n      tasks: { enabled: false }\n      autofailover: { enabled: false }\n      buckets: { interval: 1s }\n';
    writeFileSync(cfg, `clusters:\n  - name: alpha\n    url: ${simulator.url}\n    username: Administrator\n    password_file: ${pw}\n    collectors:\n${only}`);
    const bin = await startBin(['run', '--config', cfg, '--web.listen-address', '127.0.0.1:0'], {});
    const users = simulator.sim.ctx.options.users;
    try {
      await until('ready', async () => ((await fetch(`${bin.url}/-/ready`)).status === 200 ? true : undefined));
      users.admin.password = 'rotated-password-42';
      writeFileSync(pw, 'rotated-password-42\n');
      const rotatedAt = Date.now() / 1000;
      await until('a successful poll with the rotated password', async () => {
        const t = await metrics(bin.url);
        return (value(t, LAST_SUCCESS('alpha', 'buckets')) ?? 0) > rotatedAt + 1 && value(t, 'cbwatch_collector_success{couchbase_cluster="alpha",collector="buckets"}') === 1 ? true : undefined;
      });
      expect(bin.output()).not.toContain('rotated-password-42');
      // A reload reads the same rotated file: the password alone changed, so the client and job stay.
      bin.child.kill('SIGHUP');
      await until('reload logged', async () => (/"kept":1,"added":0,"removed":0/.test(bin.output()) ? true : undefined));
    } finally {
      users.admin.password = 'password';
      expect((await bin.stop()).code).toBe(0);
    }
  }, 120_000);

  it.skipIf(findBinary('openssl') === undefined)('a reload re-reads the web config: new basic auth users and a new TLS certificate apply at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-reload-'));
    const openssl = findBinary('openssl') as string;
    for (const name of ['first', 'second']) {
      execFileSync(openssl, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}-cert`, '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: dir, stdio: 'pipe' });
    }
    const web = join(dir, 'web.yml');
    const webYaml = (name: string, user: string, password: string): string =>
      `tls_server_config:\n  cert_file: ${join(dir, 'live.crt')}\n  key_file: ${join(dir, 'live.key')}\nbasic_auth_users:\n  ${user}: ${bcrypt.hashSync(password, 4)}\n`;
    const install = (name: string): void => {
      writeFileSync(join(dir, 'live.crt'), readFileSync(join(dir, `${name}.crt`)));
      writeFileSync(join(dir, 'live.key'), readFileSync(join(dir, `${name}.key`)));
    };
    install('first');
    writeFileSync(web, webYaml('first', 'prom', 'first-secret'));
    const cfg = join(dir, 'cbwatch.yml');
    const only = '      certificates: { enabled: false }\n      security: { enabled: false }\n      collections: { enabled: false }\n      search: { enabled: false }\n      backup: { enabled: false }\n      index: { enabled: false }\n      search_index: { enabled: false }\n      eventing: { enabled: false }\n      query: { enabled: false }\n      analytics: { enabled: false }\n      processes: { enabled: false }\n      xdcr: { enabled: false }\n      bucket_stats: { enabled: false }\n      nodes: { enabled: false }\n      tasks: { enabled: false }\n      autofailover: { enabled: false }\n';
    writeFileSync(cfg, `clusters:\n${clusterYaml('alpha', only)}\n`);
    const bin = await startBin(['run', '--config', cfg, '--web.listen-address', '127.0.0.1:0', '--web.config.file', web], { RELOAD_CB_PW: 'password' });
    /** Status and the server certificate's CN of one request. */
    const get = (user: string, password: string): Promise<{ status: number; cn: string }> =>
      new Promise((resolve, reject) => {
        const req = request(`${bin.url}/metrics`, { rejectUnauthorized: false, agent: false, auth: `${user}:${password}` }, (res) => {
          const cn = String((res.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, cn }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      expect(await get('prom', 'first-secret')).toEqual({ status: 200, cn: 'first-cert' });
      install('second');
      writeFileSync(web, webYaml('second', 'prom', 'second-secret'));
      bin.child.kill('SIGHUP');
      await until('the new password accepted', async () => ((await get('prom', 'second-secret')).status === 200 ? true : undefined));
      expect(await get('prom', 'second-secret')).toEqual({ status: 200, cn: 'second-cert' });
      expect((await get('prom', 'first-secret')).status).toBe(401);
    } finally {
      expect((await bin.stop()).code).toBe(0);
    }
  }, 120_000);
  it.skipIf(findBinary('openssl') === undefined)('a reload changes client_allowed_sans for new connections: a client no longer listed is closed before any HTTP', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-reload-sans-'));
    const openssl = findBinary('openssl') as string;
    const sh = (...args: string[]) => execFileSync(openssl, args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    sh('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=reload-ca');
    writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
    writeFileSync(join(dir, 'client.ext'), 'subjectAltName=DNS:prometheus.example\n');
    for (const name of ['server', 'client']) {
      sh('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
      sh('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`);
    }
    const web = join(dir, 'web.yml');
    const webYaml = (san: string): string =>
      `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  client_allowed_sans: [${san}]\n`;
    writeFileSync(web, webYaml('prometheus.example'));
    const cfg = join(dir, 'cbwatch.yml');
    const only = '      certificates: { enabled: false }\n      security: { enabled: false }\n      collections: { enabled: false }\n      search: { enabled: false }\n      backup: { enabled: false }\n      index: { enabled: false }\n      search_index: { enabled: false }\n      eventing: { enabled: false }\n      query: { enabled: false }\n      analytics: { enabled: false }\n      processes: { enabled: false }\n      xdcr: { enabled: false }\n      bucket_stats: { enabled: false }\n      nodes: { enabled: false }\n      tasks: { enabled: false }\n      autofailover: { enabled: false }\n';
    writeFileSync(cfg, `clusters:\n${clusterYaml('alpha', only)}\n`);
    const bin = await startBin(['run', '--config', cfg, '--web.listen-address', '127.0.0.1:0', '--web.config.file', web], { RELOAD_CB_PW: 'password' });
    /** The status of one request on a new connection, or 'closed' when the connection ended without one. */
    const get = (): Promise<number | 'closed'> =>
      new Promise((resolve) => {
        const req = request(
          `${bin.url}/-/healthy`,
          { ca: readFileSync(join(dir, 'ca.crt')), cert: readFileSync(join(dir, 'client.crt')), key: readFileSync(join(dir, 'client.key')), agent: false },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', () => resolve('closed'));
        req.end();
      });
    try {
      expect(await get()).toBe(200);
      writeFileSync(web, webYaml('vmagent.example'));
      bin.child.kill('SIGHUP');
      await until('the client refused', async () => ((await get()) === 'closed' ? true : undefined));
      // The log line reaches the pipe a little after the connection was closed.
      await until('the refusal logged', async () => (/client certificate has no subject alternative name in client_allowed_sans/.test(bin.output()) ? true : undefined));
      writeFileSync(web, webYaml('prometheus.example'));
      bin.child.kill('SIGHUP');
      await until('the client admitted again', async () => ((await get()) === 200 ? true : undefined));
    } finally {
      expect((await bin.stop()).code).toBe(0);
    }
  }, 120_000);
});

describe('reload requests are coalesced', () => {
  it('a burst of requests while one reload runs costs one more reload, which every one of them shares', async () => {
    const { makeReloader } = await import('../src/lifecycle.js');
    const { parseArgs } = await import('../src/config/flags.js');
    const { loadConfig } = await import('../src/config/load.js');
    const pino = (await import('pino')).default;
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-coalesce-'));
    const file = join(dir, 'cbwatch.yml');
    writeFileSync(file, `clusters:\n  - name: one\n    url: http://127.0.0.1:1\n`);
    const args = parseArgs(['run', '--config', file]);
    const initial = loadConfig(args.flags, {});
    // The daemon's reconfigure is held until released, so the test controls when a reload ends.
    const releases: Array<() => void> = [];
    let applied = 0;
    const daemon = {
      reconfigure: () =>
        new Promise<void>((r) => {
          applied++;
          releases.push(r);
        }),
    } as unknown as Parameters<typeof makeReloader>[2];
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
    const reload = makeReloader(args, {}, daemon, log, initial);
    const first = reload();
    const burst = Array.from({ length: 100 }, () => reload());
    // One reload runs (its file read in a worker thread first); the hundred requests wait as one.
    await until('the first reload', () => (applied === 1 ? true : undefined));
    expect(applied).toBe(1);
    expect(new Set(burst).size).toBe(1);
    releases.shift()?.();
    await first;
    await until('the queued reload', () => (applied === 2 ? true : undefined));
    // A request now (the queued reload has started) queues one more, not a hundred.
    const late = [reload(), reload(), reload()];
    expect(new Set(late).size).toBe(1);
    releases.shift()?.();
    expect(await burst[0]).toEqual({ ok: true });
    await until('the third reload', () => (applied === 3 ? true : undefined));
    releases.shift()?.();
    expect(await late[0]).toEqual({ ok: true });
    expect(applied).toBe(3);
    expect(lines.filter((l) => l.includes('"reloading configuration"'))).toHaveLength(3);
  });
});

describe('a reload into a bad or huge file', () => {
  it('keeps the running configuration, answers the error and counts it', async () => {
    const { makeReloader } = await import('../src/lifecycle.js');
    const { parseArgs } = await import('../src/config/flags.js');
    const { loadConfig } = await import('../src/config/load.js');
    const { selfRegistry } = await import('../src/metrics/self.js');
    const pino = (await import('pino')).default;
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-huge-'));
    const file = join(dir, 'cbwatch.yml');
    writeFileSync(file, `clusters:\n  - name: one\n    url: http://127.0.0.1:1\n`);
    const args = parseArgs(['run', '--config', file]);
    const initial = loadConfig(args.flags, {});
    let applied = 0;
    const daemon = { reconfigure: async () => void applied++ } as unknown as Parameters<typeof makeReloader>[2];
    const lines: string[] = [];
    const reload = makeReloader(args, {}, daemon, pino({ level: 'info' }, { write: (s: string) => void lines.push(s) }), initial);
    const failures = async (): Promise<number> => (await selfRegistry.getSingleMetric('cbwatch_config_reload_failures_total')?.get())?.values[0]?.value ?? NaN;
    const before = await failures();
    // An anchor of 2,001 nodes expanded 1,001 times: 2,003,002 nodes (limit 2,000,000), in a 12 KB file.
    writeFileSync(file, `clusters: []\nx: &big [${Array(2000).fill('1').join(', ')}]\ny: [${Array(1001).fill('*big').join(', ')}]\n`);
    const huge = await reload();
    expect(huge).toEqual({ ok: false, error: `${file}: YAML error: more than 2000000 nodes once its aliases are expanded (a configuration of 1,000 clusters has about 30,000)` });
    // A cluster name past 255 characters.
    writeFileSync(file, `clusters:\n  - name: ${'n'.repeat(1_000_000)}\n    url: http://127.0.0.1:1\n`);
    const long = await reload();
    expect(long.ok).toBe(false);
    expect(long.ok ? '' : long.error).toContain('clusters[0].name: may be at most 255 characters long');
    expect(applied).toBe(0);
    expect(await failures()).toBe(before + 2);
    expect(lines.filter((l) => l.includes('configuration reload failed; the previous configuration stays in force'))).toHaveLength(2);
  });
});

describe('a reload reads its file off the thread that serves HTTP', () => {
  it('the file is read, parsed and validated in another thread; what comes back equals what loadConfig gives here, PEMs as Buffers, secrets redacted here', async () => {
    const { readConfigOffThread, readInWorker } = await import('../src/lifecycle.js');
    const { loadConfig } = await import('../src/config/load.js');
    const { redact } = await import('../src/redact.js');
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-reader-'));
    const file = join(dir, 'cbwatch.yml');
    const web = join(dir, 'web.yml');
    const password = 'reader-password-5cd1e8';
    const keyText = 'reader-inline-key-7f3a90';
    writeFileSync(file, `clusters:\n  - name: one\n    url: http://127.0.0.1:1\n    username: u\n    password_env: READER_PW\n    collectors:\n      search: { interval: 20s }\n`);
    writeFileSync(join(dir, 'cert.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    writeFileSync(web, `tls_server_config:\n  cert: |\n    -----BEGIN CERTIFICATE-----\n    AAAA\n    -----END CERTIFICATE-----\n  key: |\n    -----BEGIN PRIVATE KEY-----\n    ${keyText}\n    -----END PRIVATE KEY-----\n`);
    const flags = { config: file, 'web.config.file': web };
    const env = { READER_PW: password };
    const reply = await readInWorker(flags, env);
    expect(reply.ok).toBe(true);
    expect(reply.threadId).not.toBe(threadId);
    const read = await readConfigOffThread(flags, env);
    // Registered with this thread's redactor by the reader, before this thread ever loads the file itself.
    expect(redact(`a ${password} b`)).not.toContain(password);
    expect(redact(`-----BEGIN PRIVATE KEY-----\n${keyText}\n-----END PRIVATE KEY-----\n`)).not.toContain(keyText);
    expect(Buffer.isBuffer(read.web.settings?.tls?.key)).toBe(true);
    expect(Buffer.isBuffer(read.web.settings?.tls?.cert)).toBe(true);
    expect(read).toEqual(loadConfig(flags, env));
    const refused = await readInWorker({ config: join(dir, 'missing.yml') }, {});
    expect(refused).toEqual({ ok: false, error: `--config: cannot read ${JSON.stringify(join(dir, 'missing.yml'))} (no such file)`, threadId: refused.threadId });
    expect(refused.threadId).not.toBe(threadId);
  });

  it('the reader thread runs its own bundle, which holds the configuration loader and neither the web server nor the collection', () => {
    const meta = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'dist', 'bundle-meta.json'), 'utf8')) as {
      outputs: Record<string, { entryPoint?: string; inputs: Record<string, unknown>; imports: Array<{ path: string; kind: string; external?: boolean }> }>;
    };
    const seen = new Set<string>();
    const visit = (out: string): void => {
      if (seen.has(out) || meta.outputs[out] === undefined) return;
      seen.add(out);
      for (const i of meta.outputs[out]?.imports ?? []) if (i.kind === 'import-statement' && i.external !== true) visit(i.path);
    };
    visit('dist/bundle/reload-worker.js');
    const inputs = [...seen].flatMap((o) => Object.keys(meta.outputs[o]?.inputs ?? {}));
    expect(inputs).toContain('dist/reload-worker.js');
    expect(inputs).toContain('dist/config/load.js');
    expect(inputs.filter((f) => /node_modules\/(fastify|prom-client|pino)\//.test(f) || /^dist\/(collectors\/|collection\/(engine|host|worker)|scheduler\/|server\/|couchbase\/client)/.test(f))).toEqual([]);
  });

  it('/-/healthy and /metrics answer while a refused file is being read: both complete before the reload settles', async () => {
    const { makeReloader } = await import('../src/lifecycle.js');
    const { parseArgs } = await import('../src/config/flags.js');
    const { loadConfig } = await import('../src/config/load.js');
    const { startDaemon } = await import('../src/daemon.js');
    const pino = (await import('pino')).default;
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-offthread-'));
    const file = join(dir, 'cbwatch.yml');
    writeFileSync(file, `clusters:\n  - name: one\n    url: http://127.0.0.1:1\n`);
    const args = parseArgs(['run', '--config', file, '--web.listen-address', '127.0.0.1:0']);
    const initial = loadConfig(args.flags, {});
    const log = pino({ level: 'silent' });
    const daemon = await startDaemon({ config: initial, logger: log, processMetrics: false });
    try {
      const reload = makeReloader(args, {}, daemon, log, initial);
      // A thousand clusters, each refused: validating it costs this thread seconds when it parses the file itself.
      writeFileSync(file, `clusters:\n${Array.from({ length: 1000 }, (_, i) => `  - name: c${i}\n    url: http://127.0.0.1:1\n    collectors:\n      search: { interval: 10x }\n`).join('')}`);
      let settled = false;
      const reloading = reload().finally(() => void (settled = true));
      const [healthy, metrics] = await Promise.all([daemon.app.inject({ method: 'GET', url: '/-/healthy' }), daemon.app.inject({ method: 'GET', url: '/metrics' })]);
      expect(healthy.statusCode).toBe(200);
      expect(metrics.statusCode).toBe(200);
      expect(settled).toBe(false);
      const r = await reloading;
      expect(r.ok).toBe(false);
      expect(r.ok ? '' : r.error).toContain('clusters[0].collectors.search.interval: invalid duration "10x"');
    } finally {
      await daemon.close();
    }
  });
});
