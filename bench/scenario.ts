/**
 * One benchmark scenario, with real processes: the simulator (`cbwatch simulate`, counting the requests it
 * receives) and the exporter (`cbwatch run` through the launcher, or `node <flags> bin/cbwatch.js`), then:
 *  A. a window scraped as Prometheus does (gzip, every 15 s): CPU seconds per minute, Couchbase requests per
 *     minute (counted by the simulator), peak RSS, the longest poll of each collector;
 *  B. one connection scraping back to back (plain): each scrape classified as "during a poll" when the
 *     simulator received a request from the exporter within 250 ms before it started or while it ran, else
 *     "between polls"; p50/p99/max of each;
 *  C. (optional) gzip throughput with 10 connections and one-connection gzip p99, beside the static-bytes
 *     ceiling: a bare Node http server writing the same gzip bytes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { COLLECTOR_NAMES } from '../src/config/schema.js';
import type { CollectorName } from '../src/config/schema.js';
import { DEFAULT_INTERVALS } from '../src/config/defaults.js';
import { byteRelay } from './answer-bytes.js';
import type { ByteRelay } from './answer-bytes.js';
import { median } from './chaos-lib.js';
import { cpuSeconds, EXPORTER_CLI, freePort, load, peakRssBytes, rssMB, startProcess, stop, value, waitFor } from './common.js';

/** The scrape client and ceiling server (bench/probe.ts), compiled beside this file. */
const PROBE = join(dirname(fileURLToPath(import.meta.url)), 'probe.js');
/** The simulator with knobs (bench/sim.ts), compiled beside this file. */
const SIM = join(dirname(fileURLToPath(import.meta.url)), 'sim.js');

/** Every collector the exporter has: a scenario's `collectors` turns the others off. */
export const ALL_COLLECTORS: readonly string[] = COLLECTOR_NAMES;

export interface ScenarioOptions {
  readonly label: string;
  readonly buckets: number;
  readonly nodes: number;
  readonly replications: number;
  readonly latencyMs: number;
  /** Simulated Couchbase Server version (`--server-version`; default the simulator's). */
  readonly serverVersion?: string;
  /**
   * Simulator knobs (e.g. { extraIndexes: 50, analyticsNodes: 1 }): the simulator then runs from bench/sim.ts, which
   * builds it with them (some are read only when it is built), in a process of its own as `simulate` does.
   */
  readonly simKnobs?: Readonly<Record<string, unknown>>;
  /** Simulator stat set: `full` (every stat) or the fixture's. */
  readonly statSet: 'full' | 'fixture';
  /** How many cluster entries (all pointing at the one simulator). */
  readonly clusters?: number;
  readonly collectors?: readonly string[];
  /** Per-collector interval override, e.g. { bucket_stats: '10s' }. */
  readonly intervals?: Readonly<Record<string, string>>;
  readonly concurrency?: number;
  /** Window A, seconds. */
  readonly measureSeconds: number;
  /**
   * Seconds between ready and window A (default 5). The first poll of every collector asks for a full window
   * of samples (a minute of them per stat, twice what a later poll gets), so a window that starts before the
   * first 30 s cycle is over measures start-up, not the steady state.
   */
  readonly warmupSeconds?: number;
  /** Window B, seconds (0: skip). */
  readonly latencySeconds: number;
  /** Window C. */
  readonly throughput?: boolean;
  /** Called at the end of window C with the exporter's URL and pid (the wrk study, bench/gzip-wrk.ts). */
  readonly onWindowC?: (url: string, pid: number) => Promise<void>;
  readonly loadSeconds?: number;
  /** The launcher of the exporter to measure (default EXPORTER_CLI): another build's, for before/after. */
  readonly cli?: string;
  /** `--shard i/n` for the exporter (the fleet split over replicas). */
  readonly shard?: string;
  /** Node flags instead of the launcher's (`[]`: V8 defaults). Undefined: the launcher as users run it. */
  readonly nodeArgs?: readonly string[];
  /** More command-line options for the exporter (after the bench's own). */
  readonly exporterArgs?: readonly string[];
  /** `stats_source` of every cluster entry (default: the exporter's default, auto). */
  readonly statsSource?: 'auto' | 'range' | 'envelope';
  /** Count the bytes of Couchbase's answers through a relay (bench/answer-bytes.ts): `answerBytesPerMinute`. */
  readonly countAnswerBytes?: boolean;
  /** Split window A's CPU by thread (`cpuByThread`). */
  readonly threads?: boolean;
  /** Called with the exporter's pid every second of window A, beside the VmRSS reading (the footprint's RssAnon/RssFile). */
  readonly onWindowASecond?: (pid: number) => void;
}

export interface Stats {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export interface ScenarioResult {
  readonly label: string;
  readonly opts: ScenarioOptions;
  cpuPerMinute: number;
  /** CPU seconds from launch to the start of window A (module loading, the first polls). */
  startupCpuSeconds: number;
  /** Peak RSS from launch to the start of window A. */
  startupPeakRssMB: number;
  requestsPerMinute: number;
  requestsByRoute: Record<string, number>;
  peakRssMB: number;
  /** Peak RSS at the end of window A (polling, scraped as by Prometheus), before any scrape load. */
  rssAfterWindowAMB: number;
  /** VmRSS read every second over window A: its median and its largest reading. */
  rssMedianMB: number;
  rssMaxInWindowAMB: number;
  plainBytes: number;
  gzipBytes: number;
  series: number;
  /** Longest poll seen per collector, s, and its interval, s. */
  polls: Record<string, { maxS: number; intervalS: number; requests: number }>;
  during?: Stats;
  between?: Stats;
  /** The ceiling's one-connection plain latency with the same client loop and bytes. */
  ceilingPlain?: Stats;
  gzip10?: { rps: number; p99: number; ceilingRps: number; ceilingP99: number };
  gzip1?: { p99: number; ceilingP99: number };
  failed: string[];
  /** Distinct `couchbase_cluster` values on /metrics at the end of window A. */
  clustersSeen: number;
  /** Bytes of Couchbase's answers per minute in window A (with `countAnswerBytes`). */
  answerBytesPerMinute?: number;
  /**
   * Window A's CPU per minute by thread (with `threads`): the main thread (HTTP), the busiest other thread (the
   * collection worker, in this scenario), and all the others together (V8's helpers, libuv's pool).
   */
  cpuByThread?: { main: number; busiest: number; others: number };
}

/** CPU seconds of each thread of `pid`, by thread id (/proc/PID/task/TID/stat); threads gone meanwhile are left out. */
function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const f = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => (s.length ? (s[Math.min(s.length - 1, Math.floor(q * s.length))] as number) : NaN);
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: s.length ? (s[s.length - 1] as number) : NaN };
}

async function text(url: string, headers: Record<string, string> = {}): Promise<string> {
  return (await fetch(url, { headers })).text();
}

function simRequests(simUrl: string, since = Number.MAX_SAFE_INTEGER): Promise<{ total: number; byRoute: Record<string, number>; times: number[] }> {
  return fetch(`${simUrl}/_sim/requests?since=${since}`).then((r) => r.json() as Promise<{ total: number; byRoute: Record<string, number>; times: number[] }>);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runScenario(o: ScenarioOptions): Promise<ScenarioResult> {
  const simPort = await freePort();
  const simArgs = ['simulate', '--port', String(simPort), '--buckets', String(o.buckets), '--nodes', String(o.nodes), '--replications', String(o.replications), '--latency', String(o.latencyMs)];
  if (o.statSet === 'full') simArgs.push('--stat-set', 'full');
  if (o.serverVersion) simArgs.push('--server-version', o.serverVersion);
  const simOpts = { buckets: o.buckets, nodes: o.nodes, replications: o.replications, latencyMs: o.latencyMs, statSet: o.statSet, ...(o.serverVersion ? { version: o.serverVersion } : {}), knobs: { ...o.simKnobs } };
  const sim = o.simKnobs ? spawn(process.execPath, [SIM, JSON.stringify(simOpts), String(simPort)], { stdio: ['ignore', 'pipe', 'pipe'] }) : startProcess(simArgs);
  sim.stderr?.on('data', () => undefined);
  const simUrl = `http://127.0.0.1:${simPort}`;
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-bench-'));
  let exporter: ReturnType<typeof startProcess> | undefined;
  let relay: ByteRelay | undefined;
  try {
    await waitFor('simulator', async () => ((await fetch(`${simUrl}/pools`)).status > 0 ? true : undefined));
    if (o.countAnswerBytes) relay = await byteRelay(simPort);
    const clusterUrl = relay ? `http://127.0.0.1:${relay.port}` : simUrl;
    const on = new Set(o.collectors ?? ALL_COLLECTORS);
    const cfg = join(dir, 'cbwatch.yml');
    const lines = ['clusters:'];
    for (let i = 0; i < (o.clusters ?? 1); i++) {
      lines.push(`  - name: bench${o.clusters && o.clusters > 1 ? `-${String(i).padStart(2, '0')}` : ''}`, `    url: ${clusterUrl}`, '    username: Administrator', '    password_env: BENCH_CB_PASSWORD');
      if (o.statsSource) lines.push(`    stats_source: ${o.statsSource}`);
      if (o.concurrency) lines.push(`    concurrency: ${o.concurrency}`);
      const cs: string[] = [];
      for (const c of ALL_COLLECTORS) {
        if (!on.has(c)) cs.push(`      ${c}: { enabled: false }`);
        else if (o.intervals?.[c]) cs.push(`      ${c}: { interval: ${o.intervals[c]} }`);
      }
      if (cs.length > 0) lines.push('    collectors:', ...cs);
    }
    writeFileSync(cfg, `${lines.join('\n')}\n`);
    const port = await freePort();
    const args = ['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'warn', ...(o.shard ? ['--shard', o.shard] : []), ...(o.exporterArgs ?? [])];
    exporter = startProcess(args, { BENCH_CB_PASSWORD: 'password' }, { cli: o.cli ?? EXPORTER_CLI, ...(o.nodeArgs ? { nodeArgs: o.nodeArgs } : {}) });
    const pid = exporter.pid as number;
    const url = `http://127.0.0.1:${port}`;
    const child = exporter;
    await waitFor('exporter ready', async () => ((await fetch(`${url}/-/ready`)).status === 200 ? true : undefined), 300_000, () => {
      if (child.exitCode !== null) throw new Error(`the exporter exited with code ${child.exitCode}`);
    });
    // Let the first polls (a full minute of samples each) pass before measuring the steady state.
    await sleep((o.warmupSeconds ?? 5) * 1000);
    const startupCpuSeconds = cpuSeconds(pid);
    const startupPeakRssMB = peakRssBytes(pid) / 1024 / 1024;

    // A: scraped as by Prometheus.
    const polls: ScenarioResult['polls'] = {};
    const notePolls = (t: string): void => {
      for (const line of t.split('\n')) {
        const m = /^cbwatch_collector_duration_seconds\{couchbase_cluster="[^"]*",collector="([^"]+)"\} (\S+)/.exec(line);
        if (!m) continue;
        const name = m[1] as string;
        const p = (polls[name] ??= { maxS: 0, intervalS: 0, requests: 0 });
        p.maxS = Math.max(p.maxS, Number(m[2]));
        p.requests = Math.max(p.requests, value(t, 'cbwatch_collector_requests', `collector="${name}"`) ?? 0);
      }
    };
    const sim0 = await simRequests(simUrl);
    const bytes0 = relay?.bytes() ?? 0;
    const cpu0 = cpuSeconds(pid);
    const threads0 = o.threads ? threadCpu(pid) : undefined;
    const t0 = Date.now();
    // RSS every second of window A (the peak alone says nothing of where the process spends the window).
    const rssSamples: number[] = [];
    const sampler = setInterval(() => {
      const mb = rssMB(pid);
      // NaN: the process is gone (the run fails below).
      if (!Number.isNaN(mb)) rssSamples.push(mb);
      o.onWindowASecond?.(pid);
    }, 1000);
    let last = '';
    while (Date.now() - t0 < o.measureSeconds * 1000) {
      last = await text(`${url}/metrics`, { 'accept-encoding': 'gzip' });
      notePolls(last);
      await sleep(Math.min(15_000, Math.max(0, o.measureSeconds * 1000 - (Date.now() - t0))));
    }
    clearInterval(sampler);
    const minutes = (Date.now() - t0) / 60_000;
    const cpuPerMinute = (cpuSeconds(pid) - cpu0) / minutes;
    let cpuByThread: ScenarioResult['cpuByThread'];
    if (threads0 !== undefined) {
      const used = [...threadCpu(pid)].map(([tid, s]) => ({ tid, s: (s - (threads0.get(tid) ?? 0)) / minutes }));
      const main = used.find((t) => t.tid === pid)?.s ?? 0;
      const rest = used.filter((t) => t.tid !== pid).sort((a, b) => b.s - a.s);
      const busiest = rest[0]?.s ?? 0;
      cpuByThread = { main, busiest, others: rest.slice(1).reduce((a, t) => a + t.s, 0) };
    }
    const answerBytes = relay ? (relay.bytes() - bytes0) / minutes : undefined;
    const sim1 = await simRequests(simUrl);
    const byRoute: Record<string, number> = {};
    for (const [r, n] of Object.entries(sim1.byRoute)) byRoute[r] = (n - (sim0.byRoute[r] ?? 0)) / minutes;
    const failed = [...last.matchAll(/^cbwatch_collector_success\{couchbase_cluster="([^"]*)",collector="([^"]+)"\} 0$/gm)].map((m) => `${m[1]}/${m[2]}`);
    const plain = Buffer.from(await text(`${url}/metrics`));
    for (const [name, p] of Object.entries(polls)) {
      const override = /^(\d+)s$/.exec(o.intervals?.[name] ?? '');
      p.intervalS = override ? Number(override[1]) : (DEFAULT_INTERVALS[name as CollectorName] ?? NaN) / 1000;
    }
    const result: ScenarioResult = {
      label: o.label,
      opts: o,
      cpuPerMinute,
      startupCpuSeconds,
      startupPeakRssMB,
      requestsPerMinute: (sim1.total - sim0.total) / minutes,
      requestsByRoute: byRoute,
      peakRssMB: peakRssBytes(pid) / 1024 / 1024,
      rssAfterWindowAMB: peakRssBytes(pid) / 1024 / 1024,
      rssMedianMB: median(rssSamples),
      rssMaxInWindowAMB: Math.max(...rssSamples),
      plainBytes: plain.length,
      gzipBytes: gzipSync(plain).length,
      series: [...plain.toString('utf8').split('\n')].filter((l) => l !== '' && !l.startsWith('#')).length,
      polls,
      failed,
      clustersSeen: new Set([...last.matchAll(/couchbase_cluster="([^"]*)"/g)].map((m) => m[1])).size,
      ...(answerBytes === undefined ? {} : { answerBytesPerMinute: answerBytes }),
      ...(cpuByThread === undefined ? {} : { cpuByThread }),
    };

    // B: one connection, back to back, plain.
    if (o.latencySeconds > 0) {
      // The client loop and the ceiling server run in processes of their own (bench/probe.ts says why).
      const loop = (target: string, seconds: number): Promise<Array<{ s: number; e: number; ms: number }>> =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [PROBE, 'loop', target, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
          child.on('error', reject);
          child.on('close', (code) => {
            if (code !== 0) return reject(new Error(`probe loop exited with code ${code}`));
            resolve((JSON.parse(out) as Array<[number, number, number]>).map(([s, e, ms]) => ({ s, e, ms })));
          });
        });
      const b0 = Date.now();
      const scrapes = await loop(`${url}/metrics`, o.latencySeconds);
      const bodyFile = join(dir, 'ceiling-body');
      writeFileSync(bodyFile, plain);
      const bport = await freePort();
      const bare = spawn(process.execPath, [PROBE, 'serve', bodyFile, String(bport)], { stdio: ['ignore', 'pipe', 'inherit'] });
      try {
        await new Promise<void>((resolve, reject) => {
          bare.stdout.on('data', (c: Buffer) => c.toString('utf8').includes('listening') && resolve());
          bare.on('error', reject);
          bare.on('exit', (code) => reject(new Error(`probe serve exited with code ${code}`)));
        });
        result.ceilingPlain = stats((await loop(`http://127.0.0.1:${bport}/metrics`, Math.min(20, o.latencySeconds))).map((x) => x.ms));
      } finally {
        bare.kill();
      }
      const times = (await simRequests(simUrl, b0 - 1000)).times.sort((a, b) => a - b);
      const during: number[] = [];
      const between: number[] = [];
      let j = 0;
      for (const sc of scrapes) {
        while (j < times.length && (times[j] as number) < sc.s - 250) j++;
        const busy = j < times.length && (times[j] as number) <= sc.e;
        (busy ? during : between).push(sc.ms);
      }
      result.during = stats(during);
      result.between = stats(between);
    }

    // C: gzip throughput and one-connection gzip latency, beside the ceiling.
    if (o.throughput) {
      const seconds = o.loadSeconds ?? 10;
      const gzHeaders = { 'accept-encoding': 'gzip' };
      const ex10 = await load(`${url}/metrics`, seconds, 10, gzHeaders);
      const ex1 = await load(`${url}/metrics`, Math.max(3, Math.round(seconds / 2)), 1, gzHeaders);
      const gzBody = gzipSync(plain);
      const ceiling = createServer((_req, res) => {
        res.setHeader('content-type', 'text/plain; version=0.0.4; charset=utf-8');
        res.setHeader('content-encoding', 'gzip');
        res.end(gzBody);
      });
      const cport = await freePort();
      await new Promise<void>((r) => ceiling.listen(cport, '127.0.0.1', r));
      const c10 = await load(`http://127.0.0.1:${cport}/metrics`, seconds, 10, gzHeaders);
      const c1 = await load(`http://127.0.0.1:${cport}/metrics`, Math.max(3, Math.round(seconds / 2)), 1, gzHeaders);
      await new Promise<void>((r) => ceiling.close(() => r()));
      result.gzip10 = { rps: ex10.rps, p99: ex10.p99, ceilingRps: c10.rps, ceilingP99: c10.p99 };
      result.gzip1 = { p99: ex1.p99, ceilingP99: c1.p99 };
      result.peakRssMB = peakRssBytes(pid) / 1024 / 1024;
      await o.onWindowC?.(url, pid);
    }
    return result;
  } finally {
    if (exporter) await stop(exporter);
    await relay?.close();
    await stop(sim);
    rmSync(dir, { recursive: true, force: true });
  }
}
