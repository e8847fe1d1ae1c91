/**
 * The harness every built-in part of `npm run chaos` (bench/chaos.ts) runs on: child processes started through
 * the launcher and always stopped (SIGKILL at exit), HTTP with deadlines, a simulator and an exporter started as
 * a pair, and faults injected into the simulator at runtime (`/_sim/faults`). Observes only over HTTP and /proc.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, freePort, rssMB } from './common.js';
import { readCollectors } from './chaos-lib.js';
import type { CollectorView } from './chaos-lib.js';

const CB_PASSWORD = 'password';
/**
 * Collectors whose series count moves by design in the simulator (search: active queries come and go every
 * few seconds), so "series lost" is not judged for them; their success still is.
 */
export const VOLATILE = ['search'];
export const COLLECTORS = ['buckets', 'bucket_stats', 'xdcr', 'nodes', 'tasks', 'autofailover', 'certificates', 'security', 'collections', 'search', 'backup', 'index', 'search_index', 'eventing', 'query', 'analytics', 'processes'];

export const log = (s: string): void => void process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------
// processes

export interface Proc {
  child: ChildProcess;
  pid: number;
  /** The last 256 KiB of stdout and stderr (consumed, so a chatty child never blocks on a full pipe). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export const children = new Set<ChildProcess>();
const tempDirs: string[] = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'cbwatch-chaos-'));
  tempDirs.push(d);
  return d;
}

/** `cbwatch …` through the launcher (its shebang's Node flags apply), as users run it. */
export function start(args: string[], env: Record<string, string> = {}, cli = CLI): Proc {
  const child = spawn(cli, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let buf = '';
  const keep = (d: Buffer): void => {
    buf += d.toString('utf8');
    if (buf.length > 256 * 1024) buf = buf.slice(-256 * 1024);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, pid: child.pid as number, output: () => buf, exited };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves to the seconds it took to exit and how. */
export async function stopProc(p: Proc, graceMs = 60_000): Promise<{ seconds: number; how: string }> {
  const t0 = Date.now();
  if (p.child.exitCode !== null || p.child.signalCode !== null) return { seconds: 0, how: 'already exited' };
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  const r = await p.exited;
  clearTimeout(timer);
  const seconds = (Date.now() - t0) / 1000;
  return { seconds, how: r.signal === 'SIGKILL' ? `ignored SIGTERM for ${graceMs / 1000} s, killed` : `exit ${r.code ?? r.signal}` };
}


// ---------------------------------------------------------------------------------------------------------
// HTTP

export interface Timed {
  ms: number;
  status: number;
  body: string;
  /** With status 0: what went wrong (the error's name and its cause's code), so a report can tell a timeout from a reset. */
  error?: string;
}

/** GET with a deadline; status 0 on a network error or timeout (then ms is the time waited). */
export async function timedGet(url: string, timeoutMs = 5_000, headers: Record<string, string> = {}): Promise<Timed> {
  const t0 = performance.now();
  try {
    const r = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    const body = await r.text();
    return { ms: performance.now() - t0, status: r.status, body };
  } catch (err) {
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    return { ms: performance.now() - t0, status: 0, body: '', error: `${e.name ?? 'Error'}: ${e.cause?.code ?? e.cause?.message ?? e.message ?? ''}` };
  }
}

/** `/-/healthy` and `/metrics` asked in turn every 100 ms until `end` (epoch ms): each route's times, and the probes without a 200. */
export async function probeRoutes(url: string, end: number): Promise<{ healthy: number[]; metrics: number[]; failed: number }> {
  const healthy: number[] = [];
  const metrics: number[] = [];
  let failed = 0;
  for (let i = 0; Date.now() < end; i++) {
    const t = await timedGet(`${url}${i % 2 === 0 ? '/-/healthy' : '/metrics'}`, 30_000);
    if (t.status !== 200) failed++;
    else (i % 2 === 0 ? healthy : metrics).push(t.ms);
    await sleep(100);
  }
  return { healthy, metrics, failed };
}

export async function json<T>(url: string, init: RequestInit = {}): Promise<T> {
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return (await r.json()) as T;
}

export async function waitUntil<T>(what: string, fn: () => Promise<T | undefined>, ms: number, everyMs = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function promtoolCheck(body: string): string {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8', timeout: 60_000 });
  if (r.error) return `promtool not run: ${r.error.message}`;
  return r.status === 0 ? 'ok' : `FAIL: ${`${r.stdout}${r.stderr}`.trim().split('\n')[0] ?? ''}`;
}

// ---------------------------------------------------------------------------------------------------------
// a simulator and an exporter

export interface Pair {
  sim: Proc;
  simUrl: string;
  exp: Proc;
  url: string;
  dir: string;
}

export interface PairOptions {
  buckets?: number;
  intervalS: number;
  timeoutS?: number;
  only?: readonly string[];
  extraCluster?: string[];
  extraFile?: string[];
  exporterArgs?: string[];
  env?: Record<string, string>;
  waitAllGreen?: boolean;
}

export async function startSim(buckets: number): Promise<{ sim: Proc; simUrl: string }> {
  const port = await freePort();
  const sim = start(['simulate', '--port', String(port), '--buckets', String(buckets)]);
  const simUrl = `http://127.0.0.1:${port}`;
  await waitUntil('simulator', async () => ((await fetch(`${simUrl}/_sim/state`)).ok ? true : undefined), 60_000);
  return { sim, simUrl };
}

/**
 * Writes the configuration of one cluster `chaos` at `url` (password from CHAOS_CB_PASSWORD): the collectors of
 * `o.only` (default all) every `o.intervalS` seconds, the others off.
 */
export function writeChaosConfig(file: string, url: string, o: Pick<PairOptions, 'intervalS' | 'timeoutS' | 'only' | 'extraCluster' | 'extraFile'>): void {
  const on = o.only ?? COLLECTORS;
  const timeout = o.timeoutS === undefined ? '' : `, timeout: ${Math.round(o.timeoutS * 1000)}ms`;
  writeFileSync(
    file,
    [
      'clusters:',
      '  - name: chaos',
      `    url: ${url}`,
      '    username: Administrator',
      '    password_env: CHAOS_CB_PASSWORD',
      ...(o.extraCluster ?? []).map((l) => `    ${l}`),
      '    collectors:',
      ...COLLECTORS.map((c) => (on.includes(c) ? `      ${c}: { interval: ${o.intervalS}s${timeout} }` : `      ${c}: { enabled: false }`)),
      ...(o.extraFile ?? []),
      '',
    ].join('\n'),
  );
}

export async function startExporter(simUrl: string, o: PairOptions, dir: string, name = 'cbwatch.yml'): Promise<{ exp: Proc; url: string }> {
  const cfg = join(dir, name);
  writeChaosConfig(cfg, simUrl, o);
  const port = await freePort();
  const exp = start(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'info', ...(o.exporterArgs ?? [])], {
    CHAOS_CB_PASSWORD: CB_PASSWORD,
    ...(o.env ?? {}),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil('exporter healthy', async () => ((await fetch(`${url}/-/healthy`)).ok ? true : undefined), 60_000);
  return { exp, url };
}

export async function startPair(o: PairOptions): Promise<Pair> {
  const dir = tempDir();
  const { sim, simUrl } = await startSim(o.buckets ?? 3);
  const { exp, url } = await startExporter(simUrl, o, dir);
  if (o.waitAllGreen !== false) await allGreen(url, o.only ?? COLLECTORS, 120_000);
  return { sim, simUrl, exp, url, dir };
}

export async function stopPair(p: Pair): Promise<void> {
  await stopProc(p.exp);
  await stopProc(p.sim);
}

export async function scrapeView(url: string, headers: Record<string, string> = {}): Promise<{ t: Timed; view: CollectorView }> {
  const t = await timedGet(`${url}/metrics`, 5_000, headers);
  return { t, view: readCollectors(t.body) };
}

/** Waits until every listed collector reports success 1; returns the view. */
export async function allGreen(url: string, collectors: readonly string[], ms: number): Promise<CollectorView> {
  return waitUntil(
    'every collector green',
    async () => {
      const { view } = await scrapeView(url);
      return collectors.every((c) => view.success.get(c) === 1) ? view : undefined;
    },
    ms,
    250,
  );
}

export async function clearFaults(simUrl: string): Promise<void> {
  await fetch(`${simUrl}/_sim/faults`, { method: 'DELETE', signal: AbortSignal.timeout(10_000) });
}

export async function addFault(simUrl: string, rule: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${simUrl}/_sim/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
    signal: AbortSignal.timeout(10_000),
  });
  if (!r.ok) throw new Error(`could not inject ${JSON.stringify(rule)}: ${r.status}`);
}

export async function faultHits(simUrl: string): Promise<number> {
  const f = await json<{ rules: Array<{ hits?: number }> }>(`${simUrl}/_sim/faults`);
  return f.rules.reduce((a, r) => a + (r.hits ?? 0), 0);
}

/** The two range-source collectors the range and skew parts watch. */
export const RANGE_COLLECTORS = ['bucket_stats', 'xdcr'] as const;
export type RangeTally = Record<(typeof RANGE_COLLECTORS)[number], [number, number]>;

/** An exporter at `url` healthy, then both range collectors successful once. */
export async function waitRangeGreen(url: string): Promise<void> {
  await waitUntil('exporter healthy', async () => ((await fetch(`${url}/-/healthy`)).ok ? true : undefined), 60_000);
  await waitUntil(
    'range collectors green',
    async () => {
      const v = readCollectors((await timedGet(`${url}/metrics`)).body);
      return RANGE_COLLECTORS.every((k) => v.success.get(k) === 1) ? true : undefined;
    },
    120_000,
    250,
  );
}

/** Adds one scrape's success of each range collector to `seen` ([scrapes at 1, scrapes at 0]). */
export function tallyRange(seen: RangeTally, body: string): void {
  const v = readCollectors(body);
  for (const k of RANGE_COLLECTORS) {
    const s = v.success.get(k);
    if (s === 1) seen[k][0]++;
    else if (s === 0) seen[k][1]++;
  }
}
