/**
 * `cbwatch demo`, the first five minutes: the CBWATCH_* variables apply as documented
 * (except those naming a cluster, a config file or a shard), it serves on 127.0.0.1 unless told otherwise,
 * and the simulator's, Prometheus' and Alertmanager's ports can be chosen. Real processes of bin/cbwatch.js.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_IGNORED_ENV, DEMO_LISTEN_ADDRESS, demoEnvironment } from '../src/commands/demo.js';
import { usage } from '../src/config/flags.js';
import { ENV_VARS } from '../src/config/load.js';

const ROOT = join(import.meta.dirname, '..');

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

interface Demo {
  readonly child: ChildProcess;
  readonly out: () => string;
  readonly err: () => string;
}

function startDemo(args: string[], env: NodeJS.ProcessEnv): Demo {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'cbwatch.js'), 'demo', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return { child, out: () => out, err: () => err };
}

async function until<T>(what: string, f: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The exporter's URL as the demo printed it, if it has. */
function printedUrl(d: Demo): string | undefined {
  return /metrics:\s+(http:\/\/[^\s]+)\/metrics/.exec(d.out())?.[1];
}

/** The exporter's URL once the demo prints it; a demo that exits first fails with its exit and its stderr. */
async function metricsUrl(d: Demo): Promise<string> {
  return until('the metrics URL', () => {
    const url = printedUrl(d);
    if (url === undefined && d.child.exitCode !== null) throw new Error(`the demo exited ${d.child.exitCode} before printing its URL; stderr:\n${d.err().slice(-4000)}`);
    return url;
  });
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  return new Promise((resolve) => {
    child.once('exit', (c) => resolve(c));
    child.kill('SIGTERM');
  });
}

/** The environment of a shell with no CBWATCH_* variable, plus `extra`. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CBWATCH_')) e[k] = v;
  return { ...e, ...extra };
}

describe('cbwatch demo and the environment', () => {
  it('applies CBWATCH_WEB_LISTEN_ADDRESS, CBWATCH_LOG_FORMAT and CBWATCH_LOG_LEVEL; ignores the cluster, config and shard variables', async () => {
    const d = startDemo(
      [],
      env({
        CBWATCH_WEB_LISTEN_ADDRESS: '127.0.0.1:0',
        CBWATCH_LOG_FORMAT: 'json',
        CBWATCH_LOG_LEVEL: 'debug',
        // Would make `run` watch another cluster, or no cluster at all: not the demo's.
        CBWATCH_COUCHBASE_URL: 'http://192.0.2.1:8091',
        CBWATCH_COUCHBASE_USERNAME: 'someone',
        CBWATCH_CONFIG: '/nonexistent/cbwatch.yml',
        CBWATCH_SHARD: '1/2',
      }),
    );
    try {
      const url = await metricsUrl(d);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(url).not.toBe('http://127.0.0.1:9420');
      await until('ready', async () => ((await fetch(`${url}/-/ready`)).status === 200 ? true : undefined));
      expect(await (await fetch(`${url}/metrics`)).text()).toContain('cbwatch_collector_success{couchbase_cluster="demo",collector="bucket_stats"} 1');
      // json, not the demo's logfmt default; debug lines appear.
      const lines = d.err().split('\n').filter((l) => l.trim() !== '');
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect(() => JSON.parse(l) as unknown, l).not.toThrow();
      expect(lines.some((l) => (JSON.parse(l) as { level?: unknown }).level === 20 || (JSON.parse(l) as { level?: unknown }).level === 'debug')).toBe(true);
    } finally {
      expect(await stop(d.child)).toBe(0);
    }
  }, 60_000);

  it('listens on 127.0.0.1:9420 by default; a flag or CBWATCH_WEB_LISTEN_ADDRESS wins', () => {
    expect(DEMO_LISTEN_ADDRESS).toBe('127.0.0.1:9420');
    // What the demo ignores is exactly the cluster, its credentials, the config file and the shard.
    for (const k of DEMO_IGNORED_ENV) expect(Object.keys(ENV_VARS)).toContain(k);
    const kept = demoEnvironment({ CBWATCH_COUCHBASE_URL: 'http://x', CBWATCH_WEB_MAX_REQUESTS: '3', CBWATCH_COUCHBASE_MAX_BUFFERED_BYTES: '2MiB', PATH: '/bin' });
    expect(kept).toEqual({ CBWATCH_WEB_MAX_REQUESTS: '3', CBWATCH_COUCHBASE_MAX_BUFFERED_BYTES: '2MiB', PATH: '/bin' });
    // --help says so.
    expect(usage()).toContain('demo: 127.0.0.1:9420');
    expect(usage()).toMatch(/demo reads them too, except those naming a cluster, a config file or a shard/);
  });

  it('--help lists healthcheck among the commands of every flag of run (it takes run\'s command line)', () => {
    const help = usage();
    for (const flag of ['--web.listen-address', '--web.config.file', '--couchbase.url', '--log.level']) {
      const line = help.split('\n').find((l) => l.trimStart().startsWith(`${flag} `));
      // --log.level names its commands too (rules, parsed apart, does not take it): healthcheck among them.
      expect(line, flag).toMatch(/\[[^\]]*\bhealthcheck\b[^\]]*\]/);
    }
    expect(help.split('\n').find((l) => l.trimStart().startsWith('--config.check'))).not.toContain('healthcheck');
  });

  // The default address (127.0.0.1:9420) is checked above as a value; this run binds an ephemeral port on the same
  // host, so the suite never takes 9420 (a user's demo, or another test run, may hold it).
  it('on 127.0.0.1, serves that address only, not the machine\'s other addresses', async () => {
    const d = startDemo(['--web.listen-address', '127.0.0.1:0'], env({}));
    try {
      const url = await until('the URL', () => printedUrl(d));
      const port = Number(new URL(url).port);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${url}/-/healthy`)).status).toBe(200);
      const other = Object.values(networkInterfaces())
        .flat()
        .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
      if (other !== undefined) {
        const reached = await new Promise<boolean>((resolve) => {
          const s = connect(port, other, () => {
            s.destroy();
            resolve(true);
          });
          s.on('error', () => resolve(false));
        });
        expect(reached, `demo reachable on ${other}:${port}`).toBe(false);
      }
    } finally {
      await stop(d.child);
    }
  }, 60_000);

  it('the flapping node it announces is under "Needs a look", linked to its runbook entry, within the first minute', async () => {
    const started = Date.now();
    const d = startDemo(['--web.listen-address', '127.0.0.1:0'], env({}));
    try {
      const url = await metricsUrl(d);
      const item = await until(
        'the unhealthy node on the landing page',
        async () => /<li class="critical">[^<]*<\/?b>[^<]*<\/b> demo: node cb2\.cbsim\.local:8091 is unhealthy <a class="runbook" href="([^"]+)"/.exec(await (await fetch(`${url}/`)).text())?.[1],
        75_000,
      );
      expect(Date.now() - started).toBeLessThan(75_000);
      expect(item).toMatch(/\/alerts\/runbook\.md#couchbasenodeunhealthy$/);
    } finally {
      expect(await stop(d.child)).toBe(0);
    }
  }, 120_000);

  it('--port chooses the simulator port', async () => {
    const port = await freePort();
    const d = startDemo(['--web.listen-address', '127.0.0.1:0', '--port', String(port)], env({}));
    try {
      const sim = await until('the simulator URL', () => /simulator:\s+(http:\/\/\S+)/.exec(d.out())?.[1]);
      expect(sim).toBe(`http://127.0.0.1:${port}`);
      expect((await fetch(`${sim}/pools`)).status).toBe(401);
    } finally {
      expect(await stop(d.child)).toBe(0);
    }
  }, 60_000);

  it('--port taken: exits 1 naming --port, not the exporter\'s address', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const d = startDemo(['--web.listen-address', '127.0.0.1:0', '--port', String(port)], env({}));
    try {
      const code = await new Promise<number | null>((resolve) => d.child.once('exit', (c) => resolve(c)));
      expect(code).toBe(1);
      expect(d.err()).toContain(`cannot listen for the simulator on 127.0.0.1:${port}`);
      expect(d.err()).toContain('choose another --port');
      expect(d.err()).not.toContain('--web.listen-address');
    } finally {
      d.child.kill('SIGKILL');
      blocker.close();
    }
  }, 30_000);

  it.skipIf(!existsSync('/usr/bin/prometheus') || !existsSync('/usr/bin/prometheus-alertmanager'))(
    '--prometheus.port and --alertmanager.port choose the ports of --with-prometheus',
    async () => {
      const [pp, ap] = [await freePort(), await freePort()];
      const d = startDemo(['--web.listen-address', '127.0.0.1:0', '--with-prometheus', '--prometheus.port', String(pp), '--alertmanager.port', String(ap)], env({}));
      try {
        await until('the alertmanager URL', () => (/alertmanager: /.test(d.out()) ? true : undefined), 60_000);
        expect(d.out()).toContain(`prometheus:   http://127.0.0.1:${pp}`);
        expect(d.out()).toContain(`alertmanager: http://127.0.0.1:${ap}`);
        expect((await fetch(`http://127.0.0.1:${pp}/-/ready`)).status).toBe(200);
        expect((await fetch(`http://127.0.0.1:${ap}/-/ready`)).status).toBe(200);
      } finally {
        expect(await stop(d.child)).toBe(0);
      }
    },
    90_000,
  );
});
