/** The command line, in-process through main() and as the real `bin/cbwatch.js` process. */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { clearCredentialWarnings, commandName, packagePaths } from '../src/commands/common.js';
import { demoNextSteps } from '../src/commands/demo.js';
import { usage } from '../src/config/flags.js';
import { shardOf } from '../src/config/load.js';
import { createSimulator } from '../src/simulator/index.js';
import type { Simulator } from '../src/simulator/index.js';

const ROOT = join(import.meta.dirname, '..');

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, (s) => void (out += s), (s) => void (err += s));
  return { code, out, err };
}

let sim: Simulator;
let simUrl: string;
const savedEnv = { ...process.env };
beforeAll(async () => {
  sim = createSimulator();
  simUrl = await sim.listen();
});
afterAll(async () => {
  await sim.close();
});
afterEach(() => {
  process.env = { ...savedEnv };
});

describe('cbwatch (in-process)', () => {
  it('prints its version and usage', async () => {
    // prometheus/common's layout: `<name>, version <v> (branch: <b>, revision: <r>)`, then indented build facts.
    const version = (await run(['--version'])).out;
    expect(version).toMatch(/^cbwatch, version \d+\.\d+\.\d+ \(branch: \S+, revision: \S+\)\n {2}build user: +\S+\n {2}build date: +\S+\n {2}node version: +v\d+/);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--couchbase.url');
  });

  it('exits 2 naming an unknown flag', async () => {
    const r = await run(['--couchbase.urll', 'http://x']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--couchbase.urll');
  });

  it('refuses a password on the command line without echoing it', async () => {
    const r = await run(['check', '--couchbase.password', 'hunter2-secret']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('CBWATCH_COUCHBASE_PASSWORD');
    expect(r.err).not.toContain('hunter2-secret');
  });

  it('--config.check: 0 for a valid file, 2 naming the key for a bad one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-cli-'));
    const good = join(dir, 'good.yml');
    writeFileSync(good, `clusters:\n  - name: a\n    url: ${simUrl}\n    username: Administrator\n    password_env: CLI_TEST_PW\n`);
    process.env.CLI_TEST_PW = 'password';
    const ok = await run(['run', '--config', good, '--config.check']);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('configuration is valid');
    expect(ok.out).not.toContain('password\n');
    const bad = join(dir, 'bad.yml');
    writeFileSync(bad, `clusters:\n  - url: ${simUrl}\n    collectors:\n      search: { slow_query_threshold: 10x }\n`);
    const ko = await run(['run', '--config', bad, '--config.check']);
    expect(ko.code).toBe(2);
    expect(ko.err).toContain('clusters[0].collectors.search.slow_query_threshold');
  });

  it('check: table and exit 0 against the simulator', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'password';
    const r = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator']);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/CLUSTER\s+COLLECTOR\s+ENDPOINT\s+STATUS\s+LATENCY\s+SERIES\s+DETAIL/);
    // The simulator is Couchbase 7.6: bucket statistics come from the range API, and the table says so.
    expect(r.out).toMatch(/bucket_stats \(ok\)\s+\/pools\/default\/stats\/range\s+200.*statistics: range \(auto: cluster 7\.6\)/);
    expect(r.out).toContain('all collectors succeeded');
    // tasks reads the tasks list the xdcr collector fetched: its row says so instead of staying blank.
    expect(r.out).toMatch(/tasks \(ok\)\s+-\s+-\s+\d+\s+no request of its own \(answer shared with another collector\)/);
    expect(r.code).toBe(0);
  });

  it('check: --couchbase.max-buffered-bytes bounds the answers being read (over_budget)', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'password';
    sim.ctx.faults.add({ match: '/pools/default/buckets', kind: 'oversize', bytes: 3 * 1024 * 1024, times: 1 });
    try {
      const r = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator', '--couchbase.max-buffered-bytes', '2MiB']);
      expect(r.code).toBe(1);
      expect(r.out).toContain('over_budget');
      expect(r.out).toContain('process-wide 2097152-byte budget');
    } finally {
      sim.ctx.faults.clear();
      const { setAnswerBudget, DEFAULT_ANSWER_BUDGET_BYTES } = await import('../src/couchbase/answer-budget.js');
      setAnswerBudget(DEFAULT_ANSWER_BUDGET_BYTES);
    }
  });

  it('check: --couchbase.max-answer-values stops an answer of too many values (too_large, named limit)', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'password';
    sim.ctx.faults.add({ match: '/pools/default/buckets', kind: 'oversize', bytes: 1024 * 1024, fill: '[]', times: 1 });
    try {
      const r = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator', '--couchbase.max-answer-values', '10000']);
      expect(r.code).toBe(1);
      expect(r.out).toContain('too_large');
      expect(r.out).toContain('more than 10000 JSON values');
    } finally {
      sim.ctx.faults.clear();
      const { setAnswerValueLimit, DEFAULT_MAX_ANSWER_VALUES } = await import('../src/couchbase/answer-values.js');
      setAnswerValueLimit(DEFAULT_MAX_ANSWER_VALUES);
    }
  });

  it('check: exit 1 and a 401 with a wrong password', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'wrong-password';
    const r = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator']);
    expect(r.code).toBe(1);
    expect(r.out).toContain('401 authentication failed: check the username and password');
    expect(r.out).not.toContain('(401)');
    expect(r.out).not.toContain('wrong-password');
  });

  it('check: with a wrong password every endpoint shows the 401, none `network` (requests beside the failing one)', async () => {
    // A little latency, as from a real cluster: the security collector's per-service calls are still out (or
    // queued for a slot) when its global call's 401 fails the poll.
    const slow = createSimulator({ latencyMs: 5 });
    const url = await slow.listen();
    try {
      process.env.CBWATCH_COUCHBASE_PASSWORD = 'wrong-password';
      const r = await run(['check', '--couchbase.url', url, '--couchbase.username', 'Administrator']);
      expect(r.code).toBe(1);
      const [head = '', ...lines] = r.out.trimEnd().split('\n').slice(0, -1);
      const [from, to] = [head.indexOf('STATUS'), head.indexOf('LATENCY')];
      const statuses = lines.map((l) => l.slice(from, to).trim());
      // Every request cbwatch sent was refused for its credentials ('-': a collector that used another's answer).
      expect(statuses.filter((s) => s !== '-' && !/^401(×\d+)?$/.test(s))).toEqual([]);
      expect(statuses.filter((s) => s.startsWith('401')).length).toBeGreaterThanOrEqual(12);
      expect(r.out).toMatch(/\/settings\/security\/\{service\}\s+401×8\s/);
      expect(r.out).not.toContain('network');
    } finally {
      await slow.close();
    }
  });

  it('--shard: check watches only its shard, and an empty shard is not an error', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'password';
    const mine = shardOf('sharded', 2);
    const other = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator', '--couchbase.cluster-name', 'sharded', '--shard', `${1 - mine}/2`]);
    expect(other.code).toBe(0);
    expect(other.out).toContain(`no cluster falls in shard ${1 - mine}/2`);
    const own = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator', '--couchbase.cluster-name', 'sharded', '--shard', `${mine}/2`]);
    expect(own.out).toContain('all collectors succeeded');
    expect((await run(['check', '--couchbase.url', simUrl, '--shard', '2/2'])).code).toBe(2);
  });

  it('check: names the missing permission on a 403', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'password';
    sim.ctx.faults.add({ match: '/pools/default/buckets', kind: 'forbidden', permissions: ['cluster.bucket[.].settings!read'] });
    try {
      const r = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator']);
      expect(r.code).toBe(1);
      expect(r.out).toContain('missing permission: cluster.bucket[.].settings!read');
    } finally {
      sim.ctx.faults.clear();
    }
  });
});

/** Start the real launcher; resolve with the URL from its "cbwatch started" log line. */
async function startBin(args: string[], env: Record<string, string>): Promise<{ url: string; stop: () => Promise<number | null>; output: () => string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'cbwatch.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const stop = (): Promise<number | null> =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
  for (let i = 0; i < 300; i++) {
    const m = /"url":"(http:\/\/[^"]+)"[^\n]*cbwatch started/.exec(out);
    if (m) return { url: m[1] as string, stop, output: () => out };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`cbwatch did not start: ${out}`);
}

describe('bin/cbwatch.js run without clusters (a real process)', () => {
  it('receives webhooks when the file configures only the Sync Gateway receiver', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-cli-'));
    const cfg = join(dir, 'webhooks-only.yml');
    writeFileSync(cfg, 'webhooks:\n  sync_gateway:\n    enabled: true\n    token_env: CLI_WH_TOKEN\n    databases: [travel]\n');
    const token = 'cli-webhook-token-0123456789';
    const { url, stop, output } = await startBin(['run', '--config', cfg, '--web.listen-address', '127.0.0.1:0'], { CLI_WH_TOKEN: token });
    try {
      expect((await fetch(`${url}/-/ready`)).status).toBe(200);
      // A refused post is logged once, with its component named once.
      const refused = await fetch(`${url}/webhooks/sync-gateway/travel?token=wrong`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(refused.status).toBe(401);
      for (let i = 0; i < 50 && !output().includes('refused a Sync Gateway webhook post'); i++) await new Promise((r) => setTimeout(r, 20));
      const line = output().split('\n').find((l) => l.includes('refused a Sync Gateway webhook post')) ?? '';
      expect(line.match(/"component"/g)).toHaveLength(1);
      const posted = await fetch(`${url}/webhooks/sync-gateway/travel?token=${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"_id":"d1"}' });
      expect(posted.status).toBe(200);
      expect(await (await fetch(`${url}/metrics`)).text()).toContain('cbwatch_webhook_documents_total{database="travel",result="accepted"} 1');
    } finally {
      expect(await stop()).toBe(0);
    }
  }, 60_000);

  it('serves its own metrics when its shard holds no cluster, and still refuses no cluster at all', async () => {
    const mine = shardOf('sharded', 2);
    const { url, stop } = await startBin(
      ['run', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator', '--couchbase.cluster-name', 'sharded', '--shard', `${1 - mine}/2`, '--web.listen-address', '127.0.0.1:0'],
      { CBWATCH_COUCHBASE_PASSWORD: 'password' },
    );
    try {
      expect((await fetch(`${url}/-/ready`)).status).toBe(200);
      const text = await (await fetch(`${url}/metrics`)).text();
      expect(text).toContain('cbwatch_build_info');
      expect(text).not.toContain('couchbase_cluster="sharded"');
    } finally {
      expect(await stop()).toBe(0);
    }
    const none = await run(['run', '--web.listen-address', '127.0.0.1:0']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('no cluster to watch');
  }, 60_000);
});

describe('bin/cbwatch.js demo (a real process)', () => {
  it('serves realistic bucket metrics, prints its URLs, and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'cbwatch.js'), 'demo', '--web.listen-address', '127.0.0.1:0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: tmpdir(),
      env: { ...process.env, PATH: '/usr/bin:/bin' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', () => undefined);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 30_000);
        const check = (): void => {
          const m = /metrics:\s+(http:\/\/[^\s]+)\/metrics/.exec(out);
          if (m) {
            clearTimeout(t);
            resolve(m[1] as string);
          } else setTimeout(check, 50);
        };
        check();
      });
      expect(out).toContain('simulator:');
      // The first five minutes: what to try next.
      expect(out).toContain('Try next:');
      // Started by the launcher's path (not from the package root, no cbwatch of ours on PATH): hints name it so,
      // never `npx cbwatch`, and give the dashboards and docs as absolute paths.
      const launcher = join(ROOT, 'bin', 'cbwatch.js');
      expect(out).not.toContain('npx');
      expect(out).toContain(`${launcher} demo --with-prometheus`);
      expect(out).toContain(`import ${join(ROOT, 'dashboards')}/*.json`);
      expect(out).toContain(`see ${join(ROOT, 'dashboards', 'README.md')}`);
      expect(out).toContain(`roles in ${join(ROOT, 'docs', 'configuration.md')}`);
      expect(out).toMatch(new RegExp(`CBWATCH_COUCHBASE_PASSWORD=\\S+ ${launcher.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} check --couchbase.url http://127\\.0\\.0\\.1:\\d+ --couchbase.username \\S+`));
      expect(out).toContain(`${launcher} run   --couchbase.url https://cb1.example.com:18091`);
      for (let i = 0; i < 200; i++) {
        if ((await fetch(`${url}/-/ready`)).status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const text = await (await fetch(`${url}/metrics`)).text();
      expect(text).toMatch(/couchbase_bucket_ops_per_second\{couchbase_cluster="demo",bucket="travel-sample"\} [\d.]+/);
      expect(text).toContain('cbwatch_collector_success{couchbase_cluster="demo",collector="bucket_stats"} 1');
    } finally {
      const code = await new Promise<number | null>((resolve) => {
        child.once('exit', (c) => resolve(c));
        child.kill('SIGTERM');
      });
      expect(code).toBe(0);
    }
  }, 60_000);
});

describe('bin/cbwatch.js with a reader that goes away (cbwatch … | head)', () => {
  // The parent closes its end of the stdout pipe before the child has started, so every write of the child
  // fails with EPIPE. It must exit as the command would have, without an 'error' stack trace on stderr.
  for (const args of [['rules'], ['rules', '--list'], ['--help']]) {
    it(`cbwatch ${args.join(' ')}: exits 0 with nothing on stderr`, async () => {
      const child = spawn(process.execPath, [join(ROOT, 'bin', 'cbwatch.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy();
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
      expect(err).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
      expect(err).toBe('');
      expect(code).toBe(0);
    }, 30_000);
  }
});

describe('bin/cbwatch.js with its port taken (a real process)', () => {
  it.each(['demo', 'run'])('%s exits 1 with the reason instead of hanging', async (command) => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const args = command === 'run' ? ['--couchbase.url', simUrl, '--couchbase.username', 'Administrator'] : [];
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'cbwatch.js'), command, '--web.listen-address', `127.0.0.1:${port}`, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CBWATCH_COUCHBASE_PASSWORD: sim.ctx.options.users.admin.password },
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', () => undefined);
    try {
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      expect(code).toBe(1);
      expect(err).toContain('EADDRINUSE');
    } finally {
      child.kill('SIGKILL');
      blocker.close();
    }
  }, 30_000);
});

describe('bin/cbwatch.js demo --web.config.file (a real process)', () => {
  it('applies the web config (basic auth) to the demo as to run', async () => {
    const bcrypt = (await import('bcryptjs')).default;
    const d = mkdtempSync(join(tmpdir(), 'cbw-demo-web-'));
    const web = join(d, 'web.yml');
    writeFileSync(web, `basic_auth_users:\n  prom: '${bcrypt.hashSync('demo-pw', 4)}'\n`);
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'cbwatch.js'), 'demo', '--web.listen-address', '127.0.0.1:0', '--web.config.file', web], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', () => undefined);
    try {
      let url: string | undefined;
      for (let i = 0; i < 300 && url === undefined; i++) {
        url = /metrics:\s+(http:\/\/[^\s]+)\/metrics/.exec(out)?.[1];
        if (url === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(url).toBeDefined();
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      const ok = await fetch(`${url}/metrics`, { headers: { authorization: `Basic ${Buffer.from('prom:demo-pw').toString('base64')}` } });
      expect(ok.status).toBe(200);
    } finally {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    }
  }, 60_000);
});

describe('hints name cbwatch the way it was started (commandName)', () => {
  /** A package tree with bin/cbwatch.js, as npm or the .deb lays it out. */
  function pkg(dir: string): string {
    mkdirSync(join(dir, 'bin'), { recursive: true });
    writeFileSync(join(dir, 'bin', 'cbwatch.js'), '#!/usr/bin/env node\n', { mode: 0o755 });
    return dir;
  }

  it('a global npm install (PATH links bin/cbwatch.js): cbwatch', () => {
    const d = mkdtempSync(join(tmpdir(), 'cbw-cmd-npm-'));
    const root = pkg(join(d, 'lib', 'node_modules', 'cbwatch'));
    mkdirSync(join(d, 'bin'));
    symlinkSync('../lib/node_modules/cbwatch/bin/cbwatch.js', join(d, 'bin', 'cbwatch'));
    expect(commandName({ env: { PATH: `/nonexistent:${join(d, 'bin')}:/usr/bin` }, cwd: '/', root })).toBe('cbwatch');
  });

  it('the Debian package (/usr/bin/cbwatch runs ../lib/cbwatch): cbwatch', () => {
    const d = mkdtempSync(join(tmpdir(), 'cbw-cmd-deb-'));
    const root = pkg(join(d, 'usr', 'lib', 'cbwatch'));
    mkdirSync(join(d, 'usr', 'bin'));
    writeFileSync(join(d, 'usr', 'bin', 'cbwatch'), '#!/bin/sh\n', { mode: 0o755 });
    expect(commandName({ env: { PATH: join(d, 'usr', 'bin') }, cwd: '/tmp', root })).toBe('cbwatch');
  });

  it('a clone: ./bin/cbwatch.js from its root, the absolute launcher elsewhere; another cbwatch first on PATH is not ours', () => {
    const d = mkdtempSync(join(tmpdir(), 'cbw-cmd-clone-'));
    const root = pkg(join(d, 'clone'));
    const other = join(d, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'cbwatch'), '#!/bin/sh\n', { mode: 0o755 });
    const launcher = join(realpathSync(root), 'bin', 'cbwatch.js');
    expect(commandName({ env: { PATH: '/usr/bin:/bin' }, cwd: root, root })).toBe('./bin/cbwatch.js');
    expect(commandName({ env: { PATH: '/usr/bin:/bin' }, cwd: d, root })).toBe(launcher);
    expect(commandName({ env: { PATH: other }, cwd: d, root })).toBe(launcher);
    // Not executable: the shell would not run it.
    writeFileSync(join(other, 'cbwatch'), '', { mode: 0o644 });
    symlinkSync(launcher, join(d, 'cbwatch'));
    expect(commandName({ env: { PATH: `${other}:relative/dir` }, cwd: d, root })).toBe(launcher);
  });

  it('the hints give dashboards and docs as absolute paths', () => {
    const p = packagePaths(ROOT);
    expect(p.dashboards).toBe(join(realpathSync(ROOT), 'dashboards'));
    expect(p.docs).toBe(join(realpathSync(ROOT), 'docs'));
    const text = demoNextSteps({ exporterUrl: 'http://127.0.0.1:9420', metricsUrl: 'http://127.0.0.1:9420/m', simUrl: 'http://127.0.0.1:1', username: 'u', password: 'p', withPrometheus: false, cmd: 'cbwatch', ...p });
    expect(text).not.toContain('npx');
    expect(text).toContain('cbwatch demo --with-prometheus');
    expect(text).toContain(`import ${p.dashboards}/*.json (pick a Prometheus scraping http://127.0.0.1:9420/m)`);
  });
});

describe('bin/cbwatch.js demo honours the flags and variables --help lists for it (a real process)', () => {
  it('--web.telemetry-path (and CBWATCH_WEB_TELEMETRY_PATH), --no-collector.<name> and CBWATCH_COLLECTOR_<NAME>', async () => {
    const help = usage();
    for (const flag of ['--web.telemetry-path', '--[no-]collector.xdcr']) expect(help.split('\n').find((l) => l.trimStart().startsWith(`${flag} `))).toMatch(/\[[^\]]*\bdemo\b[^\]]*\]$/);
    for (const [args, env, path] of [
      [['--web.telemetry-path', '/prom', '--no-collector.search'], { CBWATCH_COLLECTOR_XDCR: 'false' }, '/prom'],
      [[], { CBWATCH_WEB_TELEMETRY_PATH: '/stats', CBWATCH_COLLECTOR_XDCR: 'false', CBWATCH_COLLECTOR_SEARCH: 'no' }, '/stats'],
    ] as const) {
      const child = spawn(process.execPath, [join(ROOT, 'bin', 'cbwatch.js'), 'demo', '--web.listen-address', '127.0.0.1:0', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...env },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      try {
        let base: string | undefined;
        for (let i = 0; i < 600 && base === undefined; i++) {
          base = new RegExp(`metrics:\\s+(http://\\S+)${path}\\n`).exec(out)?.[1];
          if (base === undefined) await new Promise((r) => setTimeout(r, 50));
        }
        expect(base, `${out}\n${err}`).toBeDefined();
        // The banner and the hints are separate writes: wait for the hint line too (no timing asserted).
        const hint = `pick a Prometheus scraping ${base}${path})`;
        for (let i = 0; i < 600 && !out.includes(hint); i++) await new Promise((r) => setTimeout(r, 50));
        expect(out).toContain(hint);
        for (let i = 0; i < 200; i++) {
          if ((await fetch(`${base}/-/ready`)).status === 200) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect((await fetch(`${base}/metrics`)).status).toBe(404);
        const text = await (await fetch(`${base}${path}`)).text();
        expect(text).toContain('cbwatch_collector_success{couchbase_cluster="demo",collector="nodes"} 1');
        expect(text).not.toContain('collector="xdcr"');
        expect(text).not.toContain('collector="search"');
      } finally {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
    }
  }, 90_000);

  it('an unknown CBWATCH_COLLECTOR_<NAME> exits 2 naming it', async () => {
    process.env.CBWATCH_COLLECTOR_NOPE = 'false';
    const r = await run(['demo', '--web.listen-address', '127.0.0.1:0']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('CBWATCH_COLLECTOR_NOPE');
  });
});

describe('the CLI\'s messages: flag suggestions, the command list, one hint per error, warnings', () => {
  it('suggests a flag by edit distance among the command\'s own flags, and nothing when none is close', async () => {
    const cases: Array<[string[], string | undefined]> = [
      [['--bogus'], undefined],
      [['demo', '--bogus'], undefined],
      [['simulate', '--bogus'], undefined],
      [['--config.chek', 'x'], '--config.check'],
      [['check', '--couchbase.usrname', 'u'], '--couchbase.username'],
      [['demo', '--web.listen-adress', 'x'], '--web.listen-address'],
      [['simulate', '--nodse', '3'], '--nodes'],
      [['demo', '--with-promethues'], '--with-prometheus'],
      // A flag of another command is not suggested: simulate has no --web.listen-address.
      [['simulate', '--web.listen-adress', 'x'], undefined],
    ];
    for (const [argv, hint] of cases) {
      const r = await run(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      if (hint === undefined) expect(r.err, argv.join(' ')).not.toContain('did you mean');
      else expect(r.err, argv.join(' ')).toContain(`(did you mean ${hint}?)`);
    }
  });

  it('lists rules among the commands of an unknown command', async () => {
    const r = await run(['frob']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown command "frob" (commands: run, check, demo, simulate, healthcheck, rules, help, version)');
  });

  it('prints one hint line after each command-line error', async () => {
    for (const argv of [['--bogus'], ['demo', '--config', 'x'], ['--couchbase.url'], ['--port', 'x'], ['simulate', '--port', 'abc'], ['--log.level', 'loud'], ['frob'], ['rules', '--bogus'], ['rules', '--format', 'x']]) {
      const r = await run(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      const lines = r.err.trimEnd().split('\n');
      expect(lines, argv.join(' ')).toHaveLength(2);
      expect(lines[1], argv.join(' ')).toMatch(/^run 'cbwatch (rules )?--help' for usage$/);
      expect(lines[0], argv.join(' ')).not.toMatch(/--help/);
    }
  });

  it('https:// to the plain-HTTP port says that 8091 is plain HTTP and 18091 TLS', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'password';
    const r = await run(['check', '--couchbase.url', simUrl.replace('http:', 'https:'), '--couchbase.username', 'Administrator', '--no-collector.bucket_stats']);
    expect(r.code).toBe(1);
    const row = r.out.split('\n').find((l) => l.includes('nodes (FAILED)')) ?? '';
    expect(row).toContain('ERR_SSL_WRONG_VERSION_NUMBER');
    expect(row).toContain('Couchbase serves plain HTTP on 8091 and TLS on 18091');
    // The same server over http:// has no such hint (nor does any other failure).
    const plain = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator', '--no-collector.bucket_stats']);
    expect(plain.out).not.toContain('18091');
  });

  it('logfmt lines carry an error as err.message and err.code, its stack only at debug, never a JSON blob', async () => {
    const { createLogger } = await import('../src/log.js');
    const e = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:8091'), { code: 'ECONNREFUSED' });
    for (const [level, stack] of [['warn', false], ['info', false], ['debug', true]] as const) {
      let text = '';
      const sink = { write: (s: string) => void (text += s) } as unknown as NodeJS.WritableStream;
      const log = createLogger({ level, format: 'logfmt', destination: sink });
      log.warn({ err: e, cluster: 'prod' }, 'poll failed');
      await new Promise((r) => setImmediate(r));
      const line = text.trim();
      expect(line, level).toMatch(/^ts=\S+ level=warn msg="poll failed" /);
      expect(line, level).toContain('err.message="connect ECONNREFUSED 10.0.0.1:8091"');
      expect(line, level).toContain('err.code=ECONNREFUSED');
      expect(line, level).toContain('cluster=prod');
      expect(line, level).not.toContain('{');
      expect(line, level).not.toMatch(/\berr=/);
      expect(line.includes('err.stack='), level).toBe(stack);
      expect(line.match(/ err\.\w+=/g)?.map((k) => k.trim()), level).toEqual(['err.message=', 'err.code=', ...(stack ? ['err.stack='] : [])]);
    }
  });

  it('warns at start when credentials go in clear over http:// to a host that is not loopback', async () => {
    const base = { username: 'cbwatch', password: 'pw', searchUrl: undefined, backupUrl: undefined } as const;
    const warnings = clearCredentialWarnings([
      { ...base, name: 'remote', url: 'http://cb1.example.com:8091' },
      { ...base, name: 'tls', url: 'https://cb1.example.com:18091' },
      { ...base, name: 'local', url: 'http://127.0.0.1:8091' },
      { ...base, name: 'local6', url: 'http://[::1]:8091' },
      { ...base, name: 'localhost', url: 'http://localhost:8091' },
      { ...base, name: 'anonymous', url: 'http://cb2.example.com:8091', username: undefined, password: undefined },
      { ...base, name: 'search', url: 'https://cb3.example.com:18091', searchUrl: 'http://fts.example.com:8094' },
    ] as unknown as Parameters<typeof clearCredentialWarnings>[0]);
    expect(warnings.map((w) => w.cluster)).toEqual(['remote', 'search']);
    expect(warnings[0]?.message).toContain('go in clear over http:// to cb1.example.com:8091');
    expect(warnings[0]?.message).not.toContain('pw');
    expect(warnings[1]?.urls).toEqual(['http://fts.example.com:8094']);
    // The real start-up: logged once at warn, before anything is polled; the password never appears.
    const { stop, output } = await startBin(['run', '--couchbase.url', 'http://cbwatch-test.invalid:8091', '--couchbase.username', 'cbwatch', '--web.listen-address', '127.0.0.1:0'], { CBWATCH_COUCHBASE_PASSWORD: 'clear-text-secret' });
    try {
      const line = output().split('\n').find((l) => l.includes('go in clear')) ?? '';
      expect(line).toContain('"level":"warn"');
      expect(line).toContain('cbwatch-test.invalid:8091');
      expect(output()).not.toContain('clear-text-secret');
    } finally {
      expect(await stop()).toBe(0);
    }
    // None for the simulator on loopback.
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'password';
    const local = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator', '--no-collector.bucket_stats']);
    expect(local.err).not.toContain('in clear');
  }, 60_000);
});

describe('bin/cbwatch.js simulate (a real process)', () => {
  it('its "try:" hint names cbwatch as it was started, never npx', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'cbwatch.js'), 'simulate', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT, env: { ...process.env, PATH: '/usr/bin:/bin' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', () => undefined);
    try {
      for (let i = 0; i < 300 && !out.includes('try:'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(out).toMatch(/try: CBWATCH_COUCHBASE_PASSWORD=\S+ \.\/bin\/cbwatch\.js check --couchbase\.url http:\/\/127\.0\.0\.1:\d+ --couchbase\.username \S+/);
      expect(out).not.toContain('npx');
    } finally {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    }
  }, 30_000);
});

describe('demo --with-prometheus scrapes the telemetry path in effect', () => {
  it('the Prometheus configuration names it as metrics_path', async () => {
    const { prometheusConfig } = await import('../src/tools/prometheus-stack.js');
    const base = { exporterUrl: 'http://127.0.0.1:9420', rulesFile: '/r.yml', alertmanager: '127.0.0.1:9093', scrapeInterval: '15s', evaluationInterval: '15s', jobName: 'cbwatch' };
    expect(prometheusConfig({ ...base, metricsPath: '/stats' })).toMatch(/metrics_path: "?\/stats"?\n/);
    expect(prometheusConfig(base)).toMatch(/metrics_path: "?\/metrics"?\n/);
  });
});

describe('first-hour nits: the commands say what went wrong and what they take', () => {
  it('demo --help shows the demo\'s own help: its flags only, each line as in cbwatch --help without its commands', async () => {
    const r = await run(['demo', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: cbwatch demo \[flags\]\n/);
    expect(r.out).toContain('127.0.0.1:9420');
    const flagLines = r.out.split('\n').filter((l) => l.startsWith('  --'));
    for (const f of ['--with-prometheus', '--scenario NAME', '--port PORT', '--web.listen-address HOST:PORT', '--[no-]collector.xdcr', '--help']) {
      expect(flagLines.some((l) => l.startsWith(`  ${f} `)), f).toBe(true);
    }
    // Flags of other commands only: run's cluster and file, run's lifecycle, simulate's host.
    for (const f of ['--couchbase.url', '--config', '--config.check', '--web.enable-lifecycle', '--host', '--shard']) {
      expect(flagLines.some((l) => l.startsWith(`  ${f} `)), f).toBe(false);
    }
    const full = usage().split('\n');
    for (const line of flagLines) expect(full.some((l) => l.startsWith(line)), line).toBe(true);
  });

  it('rules --out into a missing directory: exit 1 naming the directory, no raw ENOENT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-rules-out-'));
    const target = join(dir, 'missing', 'cbwatch.rules.yml');
    const r = await run(['rules', '--out', target]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`cbwatch: rules: cannot write --out ${JSON.stringify(target)}: the directory ${JSON.stringify(join(dir, 'missing'))} does not exist\n`);
    expect(r.out).toBe('');
  });

  it('check with no username says so, naming where to give one, before the table of 401s', async () => {
    const r = await run(['check', '--couchbase.url', simUrl]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('cbwatch: warning: cluster 127.0.0.1 has no username (--couchbase.username, CBWATCH_COUCHBASE_USERNAME or username: in the file): Couchbase will refuse every request (401)\n');
    expect(r.out).toContain('401');
  });
});
