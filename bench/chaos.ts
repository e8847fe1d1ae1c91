/**
 * `npm run chaos`: the hardening issue's fault matrix, its named cases and a churn soak, measured black-box.
 * Everything runs as real processes on loopback (`cbwatch simulate`, `cbwatch run` through the launcher, as
 * users run them) and is observed only through HTTP (/metrics, /-/healthy, the simulator's /_sim/ control
 * routes) and /proc. Faults are injected at runtime with `POST /_sim/faults`.
 *
 *  1. matrix: every fault variant of every kind the simulator has × every simulator route a collector
 *     requested during warm-up; per cell: exporter alive, /metrics parses (promtool), which collectors fail,
 *     series lost by collectors that do not request the route (must be 0), /metrics p99 during the fault,
 *     recovery after the fault is cleared.
 *  2. cases: sixteen ~60 MB answers; wrk -c1000 on /metrics; a wrong-password flood with basic auth on;
 *     slow-body webhook senders; SIGHUP.
 *  3. soak: new stat names in every answer for CHAOS_SOAK_SECONDS (default 600): RSS every 10 s, /metrics
 *     p99, series lost.
 * Writes the `## Chaos` section of bench/RESULTS.md (other sections untouched).
 *
 * Knobs (environment): CHAOS_SOAK_SECONDS, CHAOS_PARTS (comma list of matrix,large,wrk,auth,webhook,sighup,
 * slots (bench/chaos-slots.ts), clock,logpipe (bench/chaos-clock.ts), bounded (bench/chaos-bounded.ts), soak; default all), CHAOS_ROUTES / CHAOS_KINDS (substring filters on the matrix; CHAOS_ROUTES=/x exact), CHAOS_LARGE_COUNT (16),
 * CHAOS_LARGE_MB (60), CHAOS_LARGE_FILL (`[]`), CHAOS_NOTE (a line printed under the heading), CHAOS_RESULTS
 * (write the section into another file, for trials).
 * Every loop is bounded in count and time; every child is stopped at the end (SIGKILL after 60 s).
 */
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { CLI, ROOT, freePort } from './common.js';
import { caseSlots } from './chaos-slots.js';
import {
  FAULT_VARIANTS,
  MATRIX_MAX_RESPONSE_BYTES,
  buildMatrix,
  fmt,
  percentile,
  readCollectors,
  renderTable,
  replaceSection,
  routeKey,
  rssGrowth,
  seriesLostOutside,
  slope,
  sumSeries,
} from './chaos-lib.js';
import type { CollectorView, MatrixCell, SimRouteRef } from './chaos-lib.js';
import { caseClockSteps, caseLogDestination } from './chaos-clock.js';
import type { FaultKind } from '../src/simulator/index.js';
import { caseBoundedSchemaFailures } from './chaos-bounded.js';

const SOAK_SECONDS = Number(process.env.CHAOS_SOAK_SECONDS ?? 600);
const PARTS = new Set((process.env.CHAOS_PARTS ?? 'matrix,large,wrk,auth,webhook,sighup,slots,clock,logpipe,bounded,soak').split(',').map((s) => s.trim()));
const LARGE_COUNT = Number(process.env.CHAOS_LARGE_COUNT ?? 16);
const LARGE_MB = Number(process.env.CHAOS_LARGE_MB ?? 60);
const LARGE_FILL = process.env.CHAOS_LARGE_FILL ?? '[]';
const CB_PASSWORD = 'password';
const MATRIX_INTERVAL_S = 2;
/**
 * Collectors whose series count moves by design in the simulator (search: active queries come and go every
 * few seconds), so "series lost" is not judged for them; their success still is.
 */
const VOLATILE = ['search'];
const COLLECTORS = ['buckets', 'bucket_stats', 'xdcr', 'nodes', 'tasks', 'autofailover', 'certificates', 'security', 'collections', 'search', 'backup'];

const log = (s: string): void => void process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------
// processes

interface Proc {
  child: ChildProcess;
  pid: number;
  /** The last 256 KiB of stdout and stderr (consumed, so a chatty child never blocks on a full pipe). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();
const tempDirs: string[] = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'cbwatch-chaos-'));
  tempDirs.push(d);
  return d;
}

/** `cbwatch …` through the launcher (its shebang's Node flags apply), as users run it. */
function start(args: string[], env: Record<string, string> = {}): Proc {
  const child = spawn(CLI, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
async function stopProc(p: Proc, graceMs = 60_000): Promise<{ seconds: number; how: string }> {
  const t0 = Date.now();
  if (p.child.exitCode !== null || p.child.signalCode !== null) return { seconds: 0, how: 'already exited' };
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  const r = await p.exited;
  clearTimeout(timer);
  const seconds = (Date.now() - t0) / 1000;
  return { seconds, how: r.signal === 'SIGKILL' ? `ignored SIGTERM for ${graceMs / 1000} s, killed` : `exit ${r.code ?? r.signal}` };
}

function rssMB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

// ---------------------------------------------------------------------------------------------------------
// HTTP

interface Timed {
  ms: number;
  status: number;
  body: string;
  /** With status 0: what went wrong (the error's name and its cause's code), so a report can tell a timeout from a reset. */
  error?: string;
}

/** GET with a deadline; status 0 on a network error or timeout (then ms is the time waited). */
async function timedGet(url: string, timeoutMs = 5_000, headers: Record<string, string> = {}): Promise<Timed> {
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

async function json<T>(url: string, init: RequestInit = {}): Promise<T> {
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return (await r.json()) as T;
}

async function waitUntil<T>(what: string, fn: () => Promise<T | undefined>, ms: number, everyMs = 100): Promise<T> {
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

function promtoolCheck(body: string): string {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8', timeout: 60_000 });
  if (r.error) return `promtool not run: ${r.error.message}`;
  return r.status === 0 ? 'ok' : `FAIL: ${`${r.stdout}${r.stderr}`.trim().split('\n')[0] ?? ''}`;
}

// ---------------------------------------------------------------------------------------------------------
// a simulator and an exporter

interface Pair {
  sim: Proc;
  simUrl: string;
  exp: Proc;
  url: string;
  dir: string;
}

interface PairOptions {
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

async function startSim(buckets: number): Promise<{ sim: Proc; simUrl: string }> {
  const port = await freePort();
  const sim = start(['simulate', '--port', String(port), '--buckets', String(buckets)]);
  const simUrl = `http://127.0.0.1:${port}`;
  await waitUntil('simulator', async () => ((await fetch(`${simUrl}/_sim/state`)).ok ? true : undefined), 60_000);
  return { sim, simUrl };
}

async function startExporter(simUrl: string, o: PairOptions, dir: string, name = 'cbwatch.yml'): Promise<{ exp: Proc; url: string }> {
  const cfg = join(dir, name);
  const on = o.only ?? COLLECTORS;
  const timeout = o.timeoutS === undefined ? '' : `, timeout: ${Math.round(o.timeoutS * 1000)}ms`;
  writeFileSync(
    cfg,
    [
      'clusters:',
      '  - name: chaos',
      `    url: ${simUrl}`,
      '    username: Administrator',
      '    password_env: CHAOS_CB_PASSWORD',
      ...(o.extraCluster ?? []).map((l) => `    ${l}`),
      '    collectors:',
      ...COLLECTORS.map((c) => (on.includes(c) ? `      ${c}: { interval: ${o.intervalS}s${timeout} }` : `      ${c}: { enabled: false }`)),
      ...(o.extraFile ?? []),
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const exp = start(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'info', ...(o.exporterArgs ?? [])], {
    CHAOS_CB_PASSWORD: CB_PASSWORD,
    ...(o.env ?? {}),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil('exporter healthy', async () => ((await fetch(`${url}/-/healthy`)).ok ? true : undefined), 60_000);
  return { exp, url };
}

async function startPair(o: PairOptions): Promise<Pair> {
  const dir = tempDir();
  const { sim, simUrl } = await startSim(o.buckets ?? 3);
  const { exp, url } = await startExporter(simUrl, o, dir);
  if (o.waitAllGreen !== false) await allGreen(url, o.only ?? COLLECTORS, 120_000);
  return { sim, simUrl, exp, url, dir };
}

async function stopPair(p: Pair): Promise<void> {
  await stopProc(p.exp);
  await stopProc(p.sim);
}

async function scrapeView(url: string, headers: Record<string, string> = {}): Promise<{ t: Timed; view: CollectorView }> {
  const t = await timedGet(`${url}/metrics`, 5_000, headers);
  return { t, view: readCollectors(t.body) };
}

/** Waits until every listed collector reports success 1; returns the view. */
async function allGreen(url: string, collectors: readonly string[], ms: number): Promise<CollectorView> {
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

async function clearFaults(simUrl: string): Promise<void> {
  await fetch(`${simUrl}/_sim/faults`, { method: 'DELETE', signal: AbortSignal.timeout(10_000) });
}

async function addFault(simUrl: string, rule: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${simUrl}/_sim/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
    signal: AbortSignal.timeout(10_000),
  });
  if (!r.ok) throw new Error(`could not inject ${JSON.stringify(rule)}: ${r.status}`);
}

async function faultHits(simUrl: string): Promise<number> {
  const f = await json<{ rules: Array<{ hits?: number }> }>(`${simUrl}/_sim/faults`);
  return f.rules.reduce((a, r) => a + (r.hits ?? 0), 0);
}

// ---------------------------------------------------------------------------------------------------------
// 1. the fault matrix

interface CellResult {
  cell: MatrixCell;
  skipped?: string;
  hits: number;
  healthyOk: boolean;
  promtool: string;
  failed: string[];
  othersLost: number;
  /** collector=lost, for the collectors outside the route's owners that lost series. */
  othersLostBy: string;
  othersFailed: string[];
  /** Increase of cbwatch_collector_item_errors_total plus cbwatch_collector_skipped_items during the fault. */
  itemErrors: number;
  p99: number;
  max: number;
  recoveryS: number;
}

function itemErrorCount(body: string): number {
  return sumSeries(body, 'cbwatch_collector_item_errors_total') + sumSeries(body, 'cbwatch_collector_skipped_items');
}

function lostBy(baseline: ReadonlyMap<string, number>, minimum: ReadonlyMap<string, number>, owners: readonly string[]): string {
  return [...baseline]
    .filter(([c]) => !owners.includes(c))
    .map(([c, before]) => [c, before - (minimum.get(c) ?? 0)] as const)
    .filter(([, lost]) => lost > 0)
    .map(([c, lost]) => `${c}=${lost}`)
    .join(' ');
}

/** The same sampling window with no fault: which collectors' series counts move by themselves. */
async function controlCell(pair: Pair, collectors: readonly string[], windowMs: number): Promise<string> {
  const baseline = await allGreen(pair.url, collectors, 30_000);
  const minSeries = new Map(baseline.series);
  const t0 = Date.now();
  while (Date.now() - t0 < windowMs) {
    const { t, view } = await scrapeView(pair.url);
    if (t.status === 200) for (const c of collectors) minSeries.set(c, Math.min(minSeries.get(c) ?? 0, view.series.get(c) ?? 0));
    await sleep(Math.max(0, 50 - t.ms));
  }
  return lostBy(baseline.series, minSeries, []);
}

async function runCell(pair: Pair, cell: MatrixCell, collectors: readonly string[]): Promise<CellResult> {
  const { simUrl, url } = pair;
  const res: CellResult = { cell, hits: 0, healthyOk: true, promtool: '', failed: [], othersLost: 0, othersLostBy: '', othersFailed: [], itemErrors: 0, p99: NaN, max: NaN, recoveryS: NaN };
  let baseline: CollectorView;
  try {
    baseline = await allGreen(url, collectors, 30_000);
  } catch {
    res.skipped = 'exporter not all green before the cell (previous cell not recovered in 30 s)';
    return res;
  }
  const before = (await timedGet(`${url}/metrics`)).body;
  await addFault(simUrl, { match: cell.route.url, ...cell.variant.rule });
  const lat: number[] = [];
  const minSeries = new Map(baseline.series);
  const failed = new Set<string>();
  let lastBody = '';
  let firstHitAt = 0;
  const t0 = Date.now();
  // Sample /metrics every ~50 ms until the fault has answered and two more intervals passed (bounded: 20 s).
  let nextHealthy = 0;
  let nextHits = 0;
  while (Date.now() - t0 < 20_000) {
    const { t, view } = await scrapeView(url);
    lat.push(t.ms);
    if (t.status === 200) {
      lastBody = t.body;
      for (const [c, v] of view.series) minSeries.set(c, Math.min(minSeries.get(c) ?? v, v));
      for (const c of collectors) {
        if (!view.series.has(c)) minSeries.set(c, 0);
        if (view.success.get(c) === 0) failed.add(c);
      }
    }
    const now = Date.now();
    if (now >= nextHealthy) {
      nextHealthy = now + 250;
      const h = await timedGet(`${url}/-/healthy`, 2_000);
      if (h.status !== 200) res.healthyOk = false;
    }
    if (now >= nextHits && firstHitAt === 0) {
      nextHits = now + 250;
      if ((await faultHits(simUrl)) > 0) firstHitAt = Date.now();
    }
    if (firstHitAt > 0 && Date.now() - firstHitAt > 2 * MATRIX_INTERVAL_S * 1000 + 500) break;
    await sleep(Math.max(0, 50 - t.ms));
  }
  res.hits = await faultHits(simUrl);
  await clearFaults(simUrl);
  const clearedAt = Date.now();
  res.p99 = percentile(lat, 99);
  res.max = Math.max(...lat);
  res.promtool = lastBody ? promtoolCheck(lastBody) : 'no body';
  if (lastBody && before) res.itemErrors = itemErrorCount(lastBody) - itemErrorCount(before);
  res.failed = [...failed].sort();
  res.othersFailed = res.failed.filter((c) => !cell.owners.includes(c));
  res.othersLost = seriesLostOutside(baseline.series, minSeries, [...cell.owners, ...VOLATILE]);
  res.othersLostBy = lostBy(baseline.series, minSeries, [...cell.owners, ...VOLATILE]);
  if (res.hits === 0) res.skipped = 'fault never requested within 20 s';
  // Recovery: every collector green again, with a success that finished after the fault was cleared.
  try {
    await waitUntil(
      'recovery',
      async () => {
        const { view } = await scrapeView(url);
        const ok = collectors.every((c) => view.success.get(c) === 1 && (view.lastSuccess.get(c) ?? 0) * 1000 >= clearedAt - 1000);
        return ok ? true : undefined;
      },
      30_000,
      50,
    );
    res.recoveryS = (Date.now() - clearedAt) / 1000;
  } catch {
    res.recoveryS = Infinity;
  }
  return res;
}

interface MatrixOutcome {
  results: CellResult[];
  notRequested: SimRouteRef[];
  routes: SimRouteRef[];
  kinds: FaultKind[];
  exporterExit: string;
  noise: string[];
}

async function matrix(): Promise<MatrixOutcome> {
  log(`matrix: every collector every ${MATRIX_INTERVAL_S}s, max_response_bytes ${MATRIX_MAX_RESPONSE_BYTES}`);
  const pair = await startPair({
    intervalS: MATRIX_INTERVAL_S,
    extraCluster: [`max_response_bytes: ${MATRIX_MAX_RESPONSE_BYTES}`, 'request_timeout: 2s'],
  });
  try {
    await sleep(12_000); // warm-up: let the 10 s shared answers (nodeServices, /pools/default) be requested again
    const table = await json<{ routes: Array<SimRouteRef & { hits: number }>; faultKinds: FaultKind[] }>(`${pair.simUrl}/_sim/routes`);
    const routes = table.routes.map(({ method, url }) => ({ method, url }));
    const requested = new Set(table.routes.filter((r) => r.hits > 0).map(routeKey));
    const routeFilter = process.env.CHAOS_ROUTES;
    const kindFilter = process.env.CHAOS_KINDS;
    const cells = buildMatrix(routes, table.faultKinds).filter(
      // `=/pools/default` matches that route only (a plain filter is a substring: every /pools/default/… route).
      (c) => (!routeFilter || (routeFilter.startsWith('=') ? c.route.url === routeFilter.slice(1) : c.route.url.includes(routeFilter))) && (!kindFilter || c.variant.name.includes(kindFilter)),
    );
    const noise: string[] = [];
    for (let k = 0; k < 3; k++) noise.push((await controlCell(pair, COLLECTORS, 2 * MATRIX_INTERVAL_S * 1000 + 2_000)) || 'none');
    log(`control windows (no fault), series lost by collector: ${noise.join(' | ')}`);
    const results: CellResult[] = [];
    const deadline = Date.now() + 60 * 60_000;
    let i = 0;
    for (const cell of cells) {
      i++;
      if (!requested.has(routeKey(cell.route))) continue;
      if (Date.now() > deadline) {
        results.push({ cell, skipped: 'matrix time budget (60 min) spent', hits: 0, healthyOk: true, promtool: '', failed: [], othersLost: 0, othersLostBy: '', othersFailed: [], itemErrors: 0, p99: NaN, max: NaN, recoveryS: NaN });
        continue;
      }
      if (pair.exp.child.exitCode !== null || pair.exp.child.signalCode !== null) {
        results.push({ cell, skipped: 'exporter had exited', hits: 0, healthyOk: false, promtool: '', failed: [], othersLost: 0, othersLostBy: '', othersFailed: [], itemErrors: 0, p99: NaN, max: NaN, recoveryS: NaN });
        continue;
      }
      const r = await runCell(pair, cell, COLLECTORS);
      results.push(r);
      log(
        `[${i}/${cells.length}] ${cell.route.method} ${cell.route.url} × ${cell.variant.name}: hits ${r.hits}, failed [${r.failed.join(',')}], item errors ${r.itemErrors}, others lost ${r.othersLost}${r.othersLostBy ? ` (${r.othersLostBy})` : ''}, p99 ${fmt(r.p99, 1)} ms, recovery ${fmt(r.recoveryS, 1)} s, promtool ${r.promtool}${r.skipped ? ` (${r.skipped})` : ''}`,
      );
    }
    const notRequested = routes.filter((r) => !requested.has(routeKey(r)));
    const exporterExit = pair.exp.child.exitCode !== null || pair.exp.child.signalCode !== null ? `exited (${pair.exp.child.exitCode ?? pair.exp.child.signalCode})` : 'alive';
    return { results, notRequested, routes, kinds: table.faultKinds, exporterExit, noise };
  } finally {
    await stopPair(pair);
  }
}

function renderMatrix(m: MatrixOutcome): string {
  const run = m.results.filter((r) => !r.skipped);
  const bad = (r: CellResult): string[] => {
    const why: string[] = [];
    if (!r.healthyOk) why.push('/-/healthy failed');
    if (r.promtool !== 'ok') why.push('promtool');
    if (r.othersLost > 0 || r.othersFailed.length > 0) why.push('other collectors hit');
    if (!Number.isFinite(r.recoveryS)) why.push('no recovery in 30 s');
    return why;
  };
  const badCells = run.filter((r) => bad(r).length > 0);
  const silent = run.filter((r) => r.failed.length === 0 && r.itemErrors <= 0);
  const itemOnly = run.filter((r) => r.failed.length === 0 && r.itemErrors > 0);
  const p99s = run.map((r) => r.p99).filter(Number.isFinite);
  const variants = Object.values(FAULT_VARIANTS).flat().map((v) => v.name);
  const lines = [
    `Fault kinds (${m.kinds.length}, from the simulator's \`GET /_sim/routes\`): ${m.kinds.join(', ')}; run as ${variants.length} variants: ${variants.join(', ')}.`,
    `Routes (${m.routes.length}, the simulator's route table): ${m.routes.length - m.notRequested.length} requested by a collector during warm-up and faulted;`,
    `not requested in this configuration (so not faulted): ${m.notRequested.map((r) => `\`${routeKey(r)}\``).join(', ')}.`,
    `Every collector polls every ${MATRIX_INTERVAL_S} s (timeout = interval), \`max_response_bytes\` ${MATRIX_MAX_RESPONSE_BYTES / 1024 / 1024} MiB, \`request_timeout\` 2 s.`,
    'A cell: inject the fault on the route (every request to it), sample /metrics every ~50 ms and /-/healthy every 250 ms until the',
    `fault has answered and two intervals more passed, run \`promtool check metrics\` on the last body, clear, wait until every collector`,
    'is green with a success newer than the clear. "other lost" = series lost by collectors that do not request the route (oracle:',
    '`ROUTE_OWNERS` in bench/chaos-lib.ts, from DESIGN.md), must be 0; series counts are each collector\'s `cbwatch_collector_series`.',
    '"item errors" = increase of `cbwatch_collector_item_errors_total` + `cbwatch_collector_skipped_items` during the fault.',
    `Not judged for series lost: ${VOLATILE.join(', ')} (its series follow the simulated active queries, which come and go by design).`,
    `Control windows of the same length with no fault (series lost by collector, noise floor): ${m.noise.join(' | ')}.`,
    '',
    '| figure | value |',
    '|---|---|',
    `| cells run / skipped | ${run.length} / ${m.results.length - run.length} |`,
    `| exporter at the end | ${m.exporterExit} |`,
    `| cells with /-/healthy failing | ${run.filter((r) => !r.healthyOk).length} |`,
    `| cells whose /metrics failed promtool | ${run.filter((r) => r.promtool !== 'ok').length} |`,
    `| cells where a collector not requesting the route failed or lost series | ${run.filter((r) => r.othersLost > 0 || r.othersFailed.length > 0).length} (series lost in total: ${run.reduce((a, r) => a + r.othersLost, 0)}) |`,
    `| cells where no collector failed but per-item failures were counted | ${itemOnly.length} |`,
    `| cells where nothing reported the fault (no collector failed, no item error counted; e.g. a 404 or 403 on an optional endpoint) | ${silent.length} |`,
    `| cells not recovered within 30 s of the clear | ${run.filter((r) => !Number.isFinite(r.recoveryS)).length} |`,
    `| recovery after clear: median / max | ${fmt(percentile(run.map((r) => r.recoveryS).filter(Number.isFinite), 50), 1)} s / ${fmt(Math.max(...run.map((r) => r.recoveryS).filter(Number.isFinite)), 1)} s |`,
    `| /metrics p99 during faults: median cell / worst cell | ${fmt(percentile(p99s, 50), 1)} ms / ${fmt(Math.max(...p99s), 1)} ms |`,
    '',
  ];
  if (badCells.length > 0) {
    lines.push('Cells with a problem:', '');
    lines.push(
      renderTable(
        ['route', 'fault', 'problem', 'failed collectors', 'other lost (by collector)', '/metrics p99 ms'],
        badCells.map((r) => [`${r.cell.route.method} ${r.cell.route.url}`, r.cell.variant.name, bad(r).join('; ') + (r.promtool !== 'ok' ? ` (${r.promtool})` : ''), r.failed.join(', '), r.othersLostBy || '0', fmt(r.p99, 1)]),
      ),
      '',
    );
  }
  lines.push('<details><summary>Every cell</summary>', '');
  lines.push(
    renderTable(
      ['route', 'fault', 'hits', 'healthy', 'promtool', 'failed collectors', 'item errors', 'other lost', '/metrics p99 / max ms', 'recovery s'],
      m.results.map((r) =>
        r.skipped
          ? [`${r.cell.route.method} ${r.cell.route.url}`, r.cell.variant.name, String(r.hits), '', '', `skipped: ${r.skipped}`, '', '', '', '']
          : [
              `${r.cell.route.method} ${r.cell.route.url}`,
              r.cell.variant.name,
              String(r.hits),
              r.healthyOk ? 'ok' : 'FAILED',
              r.promtool,
              r.failed.join(', ') || '(none)',
              String(r.itemErrors),
              r.othersLostBy || '0',
              `${fmt(r.p99, 1)} / ${fmt(r.max, 0)}`,
              fmt(r.recoveryS, 1),
            ],
      ),
    ),
    '',
    '</details>',
    '',
  );
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// 2. the issue's cases

type Rows = Array<[string, string]>;

/** Sample a URL back to back (every `everyMs`) until `stopAt()`; latencies, timeouts as the time waited. */
async function sampler(url: string, everyMs: number, until: () => boolean, headers: Record<string, string> = {}, timeoutMs = 5_000): Promise<{ lat: number[]; failures: number }> {
  const lat: number[] = [];
  let failures = 0;
  const hardEnd = Date.now() + 15 * 60_000;
  while (!until() && Date.now() < hardEnd) {
    const t = await timedGet(url, timeoutMs, headers);
    lat.push(t.ms);
    if (t.status !== 200) failures++;
    await sleep(Math.max(0, everyMs - t.ms));
  }
  return { lat, failures };
}

async function caseLarge(): Promise<Rows> {
  log(`case: ${LARGE_COUNT} answers of ${LARGE_MB} MB (${LARGE_FILL}) on bucket stats`);
  const pair = await startPair({ buckets: LARGE_COUNT, intervalS: 10, only: ['buckets', 'bucket_stats', 'autofailover'] });
  const rows: Rows = [];
  try {
    const rss0 = rssMB(pair.exp.pid);
    await addFault(pair.simUrl, { match: '/pools/default/buckets/:bucket/stats', kind: 'oversize', bytes: LARGE_MB * 1_000_000, fill: LARGE_FILL, times: LARGE_COUNT });
    const t0 = Date.now();
    let recoveredAt = 0;
    let greenAt = 0;
    let done = false;
    let rssMax = rss0;
    const rssTimer = setInterval(() => (rssMax = Math.max(rssMax, rssMB(pair.exp.pid) || 0)), 500);
    const until = (): boolean => done;
    const healthy = sampler(`${pair.url}/-/healthy`, 100, until);
    const metrics = sampler(`${pair.url}/metrics`, 100, until);
    let sawFailure = false;
    // Upstream "recovers" when the simulator has served the last large answer (the rule is then gone).
    const watch = (async () => {
      const end = Date.now() + 5 * 60_000;
      while (Date.now() < end) {
        const rules = await json<{ rules: unknown[] }>(`${pair.simUrl}/_sim/faults`).catch(() => ({ rules: [1] }));
        if (recoveredAt === 0 && rules.rules.length === 0) recoveredAt = Date.now();
        const { t, view } = await scrapeView(pair.url);
        if (t.status === 200 && view.success.get('bucket_stats') === 0) sawFailure = true;
        if (recoveredAt > 0 && t.status === 200 && view.success.get('bucket_stats') === 1 && (view.lastSuccess.get('bucket_stats') ?? 0) * 1000 > recoveredAt) {
          greenAt = Date.now();
          return;
        }
        await sleep(250);
      }
    })();
    await watch;
    done = true;
    clearInterval(rssTimer);
    const h = await healthy;
    const m = await metrics;
    const stopped = await stopProc(pair.exp);
    rows.push(
      ['answers', `${LARGE_COUNT} × ${LARGE_MB} MB of \`${LARGE_FILL},\` (bucket_stats every 10 s, ${LARGE_COUNT} buckets, default caps: 64 MiB and 4,000,000 JSON values per answer)`],
      ['served in', recoveredAt ? `${fmt((recoveredAt - t0) / 1000, 1)} s` : 'not all served within 5 min'],
      ['/-/healthy latency max (p99), failures or 5 s timeouts', `${fmt(Math.max(...h.lat), 0)} ms (${fmt(percentile(h.lat, 99), 0)} ms), ${h.failures} of ${h.lat.length}`],
      ['/metrics latency max (p99), failures or 5 s timeouts', `${fmt(Math.max(...m.lat), 0)} ms (${fmt(percentile(m.lat, 99), 0)} ms), ${m.failures} of ${m.lat.length}`],
      ['RSS before / max', `${fmt(rss0)} MB / ${fmt(rssMax)} MB`],
      ['bucket_stats reported a failure', sawFailure ? 'yes' : 'no'],
      ['recovery after the upstream recovered', greenAt ? `${fmt((greenAt - recoveredAt) / 1000, 1)} s` : 'not within the 5 min bound'],
      ['SIGTERM to exit', `${fmt(stopped.seconds, 1)} s (${stopped.how})`],
    );
  } finally {
    await stopPair(pair);
  }
  return rows;
}

/** Collectors seen failing in scrapes every `everyMs` while `until()` is false; plus the requests that timed out. */
async function watchCollectors(
  url: string,
  collectors: readonly string[],
  until: () => boolean,
  headers: Record<string, string> = {},
): Promise<{ failed: Set<string>; absent: Set<string>; lat: number[]; scrapeFailures: number; failures: string }> {
  const kinds = new Map<string, number>();
  const failed = new Set<string>();
  const absent = new Set<string>();
  const lat: number[] = [];
  let scrapeFailures = 0;
  const hardEnd = Date.now() + 10 * 60_000;
  while (!until() && Date.now() < hardEnd) {
    const t = await timedGet(`${url}/metrics`, 15_000, headers);
    lat.push(t.ms);
    if (t.status !== 200) {
      scrapeFailures++;
      const kind = `${t.status === 0 ? (t.error ?? 'no answer') : `status ${t.status} ${JSON.stringify(t.body.trim().slice(0, 60))}`} in ${fmt(t.ms, 0)} ms`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    } else {
      const v = readCollectors(t.body);
      for (const c of collectors) {
        if (v.success.get(c) === 0) failed.add(c);
        else if (!v.success.has(c)) absent.add(c);
      }
    }
    await sleep(Math.max(0, 250 - t.ms));
  }
  const failures = [...kinds].map(([k, n]) => (n > 1 ? `${n} × ${k}` : k)).join('; ');
  return { failed, absent, lat, scrapeFailures, failures };
}

/** wrk as a child process (asynchronous: the harness keeps sampling while it runs); killed after seconds + 60. */
async function wrk(args: string[], seconds: number): Promise<{ rps: number; non2xx: number; socketErrors: string; latency: string }> {
  const child = spawn('wrk', [...args, '-d', `${seconds}s`], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', () => undefined);
  const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 60) * 1000);
  await new Promise<void>((resolve) => child.once('exit', () => resolve()));
  clearTimeout(timer);
  children.delete(child);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors:([^\n]*)/.exec(out)?.[1]?.trim() ?? 'none';
  const latency = /Latency\s+(\S+)\s+(\S+)\s+(\S+)/.exec(out);
  return { rps, non2xx, socketErrors, latency: latency ? `avg ${latency[1]}, max ${latency[3]}` : 'n/a' };
}

const TIMEOUT_CODES = ['code="timeout"', 'code="aborted"', 'code="network"'];
function timeouts(body: string): number {
  return TIMEOUT_CODES.reduce((a, c) => a + sumSeries(body, 'cbwatch_couchbase_requests_total', c), 0);
}

async function caseWrk(pair: Pair, seconds = 20): Promise<Rows> {
  log(`case: wrk -c1000 on /metrics for ${seconds} s`);
  const before = (await timedGet(`${pair.url}/metrics`)).body;
  let done = false;
  const watching = watchCollectors(pair.url, COLLECTORS, () => done);
  const w = await wrk(['-t2', '-c1000', '--timeout', '10s', `${pair.url}/metrics`], seconds);
  done = true;
  const seen = await watching;
  const after = (await timedGet(`${pair.url}/metrics`, 30_000)).body;
  return [
    ['load', `wrk -t2 -c1000 ${seconds} s on /metrics, every collector polling every 5 s`],
    ['wrk', `${fmt(w.rps, 0)} req/s, latency ${w.latency}, non-2xx ${w.non2xx}, socket errors ${w.socketErrors}`],
    ['collectors seen failing (success 0 in a scrape every 250 ms beside the load)', seen.failed.size ? [...seen.failed].join(', ') : 'none'],
    ...(seen.absent.size ? ([['collectors missing from a scrape', [...seen.absent].join(', ')]] as Rows) : []),
    ['requests to Couchbase timed out or aborted during the load', String(timeouts(after) - timeouts(before))],
    ['side scrape latency p99 / max, failures', `${fmt(percentile(seen.lat, 99), 0)} ms / ${fmt(Math.max(...seen.lat), 0)} ms, ${seen.scrapeFailures} of ${seen.lat.length}${seen.failures ? ` (${seen.failures})` : ''}`],
    // Refused side scrapes with "no collector failing" could otherwise hide an exporter that went away.
    ['exporter after the load', pair.exp.child.exitCode === null && pair.exp.child.signalCode === null ? 'alive' : `exited (code ${pair.exp.child.exitCode ?? 'none'}, signal ${pair.exp.child.signalCode ?? 'none'})`],
  ];
}

async function caseAuth(seconds = 20): Promise<Rows> {
  log(`case: wrong-password flood, 32 connections for ${seconds} s`);
  const { sim, simUrl } = await startSim(3);
  const dir = tempDir();
  const right = 'chaos-right-password';
  writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  prometheus: ${bcrypt.hashSync(right, 10)}\n`);
  const basic = (p: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`prometheus:${p}`).toString('base64')}` });
  const { exp, url } = await startExporter(simUrl, { intervalS: 5, exporterArgs: ['--web.config.file', join(dir, 'web.yml')] }, dir);
  try {
    await waitUntil('all green (with auth)', async () => {
      const v = readCollectors((await timedGet(`${url}/metrics`, 5_000, basic(right))).body);
      return COLLECTORS.every((c) => v.success.get(c) === 1) ? true : undefined;
    }, 120_000, 250);
    const wrong = (await timedGet(`${url}/metrics`, 5_000, basic('wrong'))).status;
    const before = (await timedGet(`${url}/metrics`, 5_000, basic(right))).body;
    let done = false;
    const watching = watchCollectors(url, COLLECTORS, () => done, basic(right));
    const w = await wrk(['-t2', '-c32', '--timeout', '10s', '-H', `Authorization: ${basic('wrong-password').authorization}`, `${url}/metrics`], seconds);
    done = true;
    const seen = await watching;
    const after = (await timedGet(`${url}/metrics`, 30_000, basic(right))).body;
    return [
      ['load', `wrk -t2 -c32 ${seconds} s on /metrics with a wrong password (bcrypt cost 10), every collector polling every 5 s`],
      ['a wrong password gets', String(wrong)],
      ['wrk', `${fmt(w.rps, 0)} req/s, latency ${w.latency}, non-2xx ${w.non2xx}, socket errors ${w.socketErrors}`],
      ['real scrapes (right password, every 250 ms) p99 / max, failures', `${fmt(percentile(seen.lat, 99), 0)} ms / ${fmt(Math.max(...seen.lat), 0)} ms, ${seen.scrapeFailures} of ${seen.lat.length}`],
      ['collectors seen failing (success 0)', seen.failed.size ? [...seen.failed].join(', ') : 'none'],
      ...(seen.absent.size ? ([['collectors missing from a scrape', [...seen.absent].join(', ')]] as Rows) : []),
      ['requests to Couchbase timed out or aborted during the flood', String(timeouts(after) - timeouts(before))],
    ];
  } finally {
    await stopProc(exp);
    await stopProc(sim);
  }
}

async function caseWebhook(pair: Pair, token: string, senders = 80, holdS = 30): Promise<Rows> {
  log(`case: ${senders} slow-body webhook senders for up to ${holdS} s`);
  const port = Number(new URL(pair.url).port);
  const path = `/webhooks/sync-gateway/db1?token=${token}`;
  const sockets: Socket[] = [];
  const closedAfter: number[] = [];
  const t0 = Date.now();
  for (let i = 0; i < senders; i++) {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    s.on('close', () => closedAfter.push((Date.now() - t0) / 1000));
    s.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"_id":"`);
    sockets.push(s);
  }
  const drip = setInterval(() => {
    for (const s of sockets) if (!s.destroyed) s.write('a');
  }, 1_000);
  await sleep(3_000);
  const post = async (): Promise<number> => {
    try {
      const r = await fetch(`${pair.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"_id":"doc1","type":"x"}', signal: AbortSignal.timeout(10_000) });
      await r.text();
      return r.status;
    } catch {
      return 0;
    }
  };
  const during = await post();
  const m = await timedGet(`${pair.url}/metrics`, 10_000);
  await waitUntil('slow senders closed', async () => (closedAfter.length >= senders ? true : undefined), holdS * 1000 - 3_000, 500).catch(() => undefined);
  clearInterval(drip);
  const closedByServer = closedAfter.length;
  for (const s of sockets) s.destroy();
  await sleep(1_000);
  const after = await post();
  closedAfter.sort((a, b) => a - b);
  return [
    ['senders', `${senders} connections posting a 100 kB body at 1 byte/s (max_concurrency default 64)`],
    ['a real post while they send', during === 0 ? 'no answer in 10 s' : String(during)],
    ['/metrics meanwhile', `${m.status || 'no answer'} in ${fmt(m.ms, 0)} ms`],
    ['slow connections closed by the exporter within 30 s', `${closedByServer} of ${senders}${closedByServer ? ` (first after ${fmt(closedAfter[0] ?? NaN, 1)} s, last after ${fmt(closedAfter[closedByServer - 1] ?? NaN, 1)} s)` : ''}`],
    ['a real post after they went away', after === 0 ? 'no answer in 10 s' : String(after)],
  ];
}

async function caseSighup(pair: Pair): Promise<Rows> {
  log('case: SIGHUP');
  const before = pair.exp.output().length;
  pair.exp.child.kill('SIGHUP');
  const r = await Promise.race([pair.exp.exited, sleep(5_000).then(() => undefined)]);
  const after = pair.exp.output().slice(before);
  if (r) {
    return [['SIGHUP', `the process exited (code ${r.code ?? 'none'}, signal ${r.signal ?? 'none'})${/shutting down/.test(after) ? ', after a shutdown log line' : ', with no shutdown log line'}`]];
  }
  const h = await timedGet(`${pair.url}/-/healthy`);
  const m = await timedGet(`${pair.url}/metrics`);
  const reload = sumSeries(m.body, 'cbwatch_config_last_reload_successful');
  return [
    ['SIGHUP', `still running 5 s later (/-/healthy ${h.status})${/reload/i.test(after) ? ', reload logged' : ', no reload logged'}`],
    ['cbwatch_config_last_reload_successful', m.body.includes('cbwatch_config_last_reload_successful') ? String(reload) : 'absent'],
  ];
}

// ---------------------------------------------------------------------------------------------------------
// 3. the churn soak

interface SoakOutcome {
  rows: Rows;
  rss: Array<[number, number]>;
}

async function soak(seconds: number, churn = 200): Promise<SoakOutcome> {
  log(`soak: ${seconds} s, ${churn} new stat names per stats answer`);
  const pair = await startPair({ intervalS: 5 });
  try {
    const base = await allGreen(pair.url, COLLECTORS, 60_000);
    const rss0 = rssMB(pair.exp.pid);
    await fetch(`${pair.simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ statChurnPerAnswer: churn }), signal: AbortSignal.timeout(10_000) });
    const t0 = Date.now();
    const end = t0 + seconds * 1000;
    const rss: Array<[number, number]> = [[0, rss0]];
    const lat: number[] = [];
    const minSeries = new Map(base.series);
    const failed = new Set<string>();
    let scrapeFailures = 0;
    let nextRss = t0 + 10_000;
    let lastBody = '';
    while (Date.now() < end && pair.exp.child.exitCode === null && pair.exp.child.signalCode === null) {
      const { t, view } = await scrapeView(pair.url);
      lat.push(t.ms);
      if (t.status !== 200) scrapeFailures++;
      else {
        lastBody = t.body;
        for (const c of COLLECTORS) {
          minSeries.set(c, Math.min(minSeries.get(c) ?? 0, view.series.get(c) ?? 0));
          if (view.success.get(c) !== 1) failed.add(c);
        }
      }
      if (Date.now() >= nextRss) {
        rss.push([Math.round((Date.now() - t0) / 1000), rssMB(pair.exp.pid)]);
        nextRss += 10_000;
      }
      await sleep(Math.max(0, 500 - t.ms));
    }
    rss.push([Math.round((Date.now() - t0) / 1000), rssMB(pair.exp.pid)]);
    const alive = pair.exp.child.exitCode === null && pair.exp.child.signalCode === null;
    // bucket_stats' own churned series come and go by design; the loss that matters is everyone else's.
    const lost = seriesLostOutside(base.series, minSeries, ['bucket_stats', ...VOLATILE]);
    const lostWho = lostBy(base.series, minSeries, ['bucket_stats', ...VOLATILE]);
    const perMin = slope(rss.map(([s, mb]) => [s / 60, mb] as const));
    const growth = rssGrowth(rss);
    const last = rss[rss.length - 1]?.[1] ?? NaN;
    const verdict =
      !alive ? 'FAILED: exporter exited'
      : lost > 0 || failed.size > 0 ? 'FAILED: collectors failed or lost series'
      : growth.rising === true ? `FAILED: RSS still rising (${growth.text})`
      : growth.rising === undefined ? `not judged: ${growth.text}`
      : 'passed';
    const promtool = lastBody ? promtoolCheck(lastBody) : 'no body';
    return {
      rss,
      rows: [
        ['duration', `${seconds} s, ${churn} new stat names in every bucket stats answer (3 buckets, every collector every 5 s)`],
        ['RSS start / end / max', `${fmt(rss0)} MB / ${fmt(last)} MB / ${fmt(Math.max(...rss.map((r) => r[1])))} MB`],
        ['RSS growth (the verdict\'s figure)', growth.text],
        ['RSS trend (least squares; not judged: a GC sawtooth reads as a slope)', `${fmt(perMin, 1)} MB/min`],
        ['/metrics p50 / p99 / max (a scrape every 500 ms)', `${fmt(percentile(lat, 50), 1)} / ${fmt(percentile(lat, 99), 1)} / ${fmt(Math.max(...lat), 0)} ms, ${scrapeFailures} failed of ${lat.length}`],
        [`series lost by the other collectors (${VOLATILE.join(', ')} not judged: its series come and go by design)`, lost ? `${lost} (${lostWho})` : '0'],
        ['collectors seen failing', failed.size ? [...failed].join(', ') : 'none'],
        ['/metrics at the end', `${fmt(lastBody.length / 1024)} KiB, promtool ${promtool}`],
        ['verdict', verdict],
      ],
    };
  } finally {
    await stopPair(pair);
  }
}

// ---------------------------------------------------------------------------------------------------------

function rowsTable(rows: Rows): string {
  return renderTable(['figure', 'value'], rows);
}

async function guard<T>(what: string, fn: () => Promise<T>): Promise<T | string> {
  try {
    return await fn();
  } catch (err) {
    log(`${what} failed: ${(err as Error).stack ?? String(err)}`);
    return `${what} could not run: ${(err as Error).message}`;
  }
}

async function main(): Promise<void> {
  const started = new Date();
  let revision = 'unknown';
  try {
    revision = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    /* not a checkout */
  }
  const sections: string[] = [];
  const note = process.env.CHAOS_NOTE;
  sections.push(
    `Produced by \`npm run chaos\` on ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC at revision ${revision}: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}.`,
    ...(note ? ['', `**${note}**`] : []),
    '',
    'Simulator and exporter run as separate processes started through the launcher `bin/cbwatch.js` (its Node flags apply);',
    'measured black-box over HTTP and /proc. Latencies include the harness\'s own scheduling on a loaded machine.',
    '',
  );
  if (PARTS.has('matrix')) {
    const m = await guard('matrix', matrix);
    sections.push('### Fault matrix', '', typeof m === 'string' ? m : renderMatrix(m), '');
  }
  const cases: Array<[string, Rows | string]> = [];
  if (PARTS.has('large')) cases.push(['Sixteen large answers (issue case 1)', await guard('large answers', caseLarge)]);
  if (PARTS.has('wrk') || PARTS.has('webhook') || PARTS.has('sighup')) {
    const token = 'chaos-webhook-token';
    const pair = await guard('pair', () =>
      startPair({
        intervalS: 5,
        extraFile: ['webhooks:', '  sync_gateway:', '    enabled: true', '    token_env: CHAOS_WEBHOOK_TOKEN', '    databases: [db1]'],
        env: { CHAOS_WEBHOOK_TOKEN: token },
      }),
    );
    if (typeof pair === 'string') cases.push(['wrk, webhooks, SIGHUP', pair]);
    else {
      try {
        if (PARTS.has('wrk')) cases.push(['1,000 connections on /metrics (issue case 2)', await guard('wrk', () => caseWrk(pair))]);
        if (PARTS.has('webhook')) cases.push(['Slow-body webhook senders (issue case 4)', await guard('webhook', () => caseWebhook(pair, token))]);
        if (PARTS.has('sighup')) cases.push(['SIGHUP (issue case 6)', await guard('sighup', () => caseSighup(pair))]);
      } finally {
        await stopPair(pair);
      }
    }
  }
  if (PARTS.has('auth')) cases.push(['Wrong-password flood, basic auth on (issue case 2)', await guard('auth', () => caseAuth())]);
  if (PARTS.has('slots')) cases.push(['Slots beside trickling bodies and a wrong-password flood (issue 25, item 2)', await guard('slots', () => caseSlots(log))]);
  if (PARTS.has('clock')) cases.push(['Wall-clock steps under libfaketime (issue 25, item 3)', await guard('clock', caseClockSteps)]);
  if (PARTS.has('logpipe')) cases.push(['A failing log destination (issue 25, item 5)', await guard('logpipe', caseLogDestination)]);
  if (PARTS.has('bounded')) cases.push(['Small answers failing their whole schema (issue 25, item 1)', await guard('bounded', caseBoundedSchemaFailures)]);
  if (cases.length) {
    sections.push('### Issue cases', '');
    for (const [title, rows] of cases) sections.push(`#### ${title}`, '', typeof rows === 'string' ? rows : rowsTable(rows), '');
  }
  if (PARTS.has('soak')) {
    const s = await guard('soak', () => soak(SOAK_SECONDS));
    sections.push(`### Churn soak (${SOAK_SECONDS} s)`, '');
    if (typeof s === 'string') sections.push(s, '');
    else sections.push(rowsTable(s.rows), '', `RSS over time (s → MB): ${s.rss.map(([t, mb]) => `${t}→${fmt(mb)}`).join(', ')}`, '');
  }
  sections.push(
    'Re-run: `npm run chaos` (CHAOS_SOAK_SECONDS, default 600; CHAOS_PARTS=matrix,large,wrk,auth,webhook,sighup,slots,clock,logpipe,bounded,soak; CHAOS_ROUTES and',
    'CHAOS_KINDS filter the matrix; CHAOS_LARGE_COUNT/_MB/_FILL; CHAOS_NOTE).',
  );
  const file = process.env.CHAOS_RESULTS ?? join(ROOT, 'bench', 'RESULTS.md');
  let doc = '';
  try {
    doc = readFileSync(file, 'utf8');
  } catch {
    doc = '# Benchmark results\n';
  }
  writeFileSync(file, replaceSection(doc, 'Chaos', sections.join('\n')));
  log(`wrote the Chaos section of ${file}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`chaos failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
