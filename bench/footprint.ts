/**
 * The footprint targets, per runtime: the same build measured under each Node binary (the launcher runs `node` from
 * PATH, so the runtime's directory goes first on PATH for the run), beside another build when BENCH_BEFORE names one:
 * - at rest: the daemon pointed at a port where nothing listens, /proc status 30 s after start, three processes side
 *   by side (the median is reported);
 * - the realistic scenario: window A only (polled and scraped as by Prometheus), VmRSS, RssAnon and RssFile every
 *   second: median and largest reading, and CPU;
 * - 1,000 buckets on 4 nodes with the full stat set, buckets and bucket_stats at their default settings: VmHWM.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { median } from './chaos-lib.js';
import { freePort, peakRssBytes, rssMB, startProcess, stop, waitFor } from './common.js';
import { runScenario } from './scenario.js';
import type { ScenarioOptions, ScenarioResult } from './scenario.js';

/** A Node binary to run the launcher under, and its version (`v24.x.y`). */
export interface Runtime {
  readonly node: string;
  readonly version: string;
}

export function runtimeOf(path: string): Runtime {
  // The real path: /proc/PID/exe names the binary itself, not a link to it.
  const node = realpathSync(path);
  return { node, version: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim() };
}

/** Resident memory split by /proc/PID/status: anonymous (heaps, malloc) and file-backed (the binary, libraries), MB. */
export interface RssSplit {
  readonly anon: number;
  readonly file: number;
}

export function rssSplitMB(pid: number): RssSplit {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (f: string): number => Number(new RegExp(`${f}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN);
    return { anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 };
  } catch {
    return { anon: NaN, file: NaN };
  }
}

/** The binary a process runs, to check that PATH picked the runtime asked for. */
function exeOf(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '?';
  }
}

export interface Footprint {
  readonly cli: string;
  readonly runtime: Runtime;
  readonly restMB: number[];
  readonly restPeakMB: number[];
  readonly restAnonMB: number[];
  readonly realistic: ScenarioResult;
  readonly realisticAnonMB: number[];
  readonly realisticFileMB: number[];
  readonly thousand: ScenarioResult;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `fn` with `runtime`'s directory first on PATH (children inherit process.env), PATH restored after. */
async function onRuntime<T>(runtime: Runtime, fn: () => Promise<T>): Promise<T> {
  const path = process.env.PATH;
  process.env.PATH = `${dirname(runtime.node)}:${path ?? ''}`;
  try {
    return await fn();
  } finally {
    process.env.PATH = path;
  }
}

/** VmRSS, VmHWM and RssAnon, MB, of `runs` daemons side by side, `seconds` after each is ready, no cluster to reach. */
export async function atRest(cli: string, runtime: Runtime, runs = 3, seconds = 30): Promise<{ rss: number[]; peak: number[]; anon: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-rest-'));
  const pw = join(dir, 'password');
  writeFileSync(pw, 'not-used\n', { mode: 0o600 });
  const procs = await onRuntime(runtime, () =>
    Promise.all(
      Array.from({ length: runs }, async () => {
        const port = await freePort();
        const p = startProcess(['run', '--couchbase.url', 'http://127.0.0.1:9', '--couchbase.username', 'u', '--couchbase.password-file', pw, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'error'], {}, { cli });
        await waitFor('exporter at rest', async () => ((await fetch(`http://127.0.0.1:${port}/-/healthy`)).status === 200 ? true : undefined), 60_000);
        return p;
      }),
    ),
  );
  try {
    for (const p of procs) {
      const exe = exeOf(p.pid as number);
      if (exe !== runtime.node) throw new Error(`the exporter runs ${exe}, not ${runtime.node}`);
    }
    await sleep(seconds * 1000);
    return {
      rss: procs.map((p) => rssMB(p.pid)),
      peak: procs.map((p) => peakRssBytes(p.pid as number) / 1024 / 1024),
      anon: procs.map((p) => rssSplitMB(p.pid as number).anon),
    };
  } finally {
    await Promise.all(procs.map((p) => stop(p)));
  }
}

export async function footprint(cli: string, runtime: Runtime, realistic: Omit<ScenarioOptions, 'label' | 'measureSeconds' | 'latencySeconds'>, seconds: number, warmup: number): Promise<Footprint> {
  const rest = await atRest(cli, runtime);
  const anon: number[] = [];
  const file: number[] = [];
  const r = await onRuntime(runtime, () =>
    runScenario({
      ...realistic,
      cli,
      label: `footprint realistic ${cli} ${runtime.version}`,
      measureSeconds: seconds,
      warmupSeconds: warmup,
      latencySeconds: 0,
      onWindowASecond: (pid) => {
        const s = rssSplitMB(pid);
        if (!Number.isNaN(s.anon)) anon.push(s.anon);
        if (!Number.isNaN(s.file)) file.push(s.file);
      },
    }),
  );
  const thousand = await onRuntime(runtime, () =>
    runScenario({ cli, label: `footprint 1000 buckets ${cli} ${runtime.version}`, buckets: 1000, nodes: 4, replications: 0, latencyMs: 5, statSet: 'full', collectors: ['buckets', 'bucket_stats'], measureSeconds: Math.min(seconds, 120), warmupSeconds: warmup, latencySeconds: 0 }),
  );
  return { cli, runtime, restMB: rest.rss, restPeakMB: rest.peak, restAnonMB: rest.anon, realistic: r, realisticAnonMB: anon, realisticFileMB: file, thousand };
}

const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const met = (ok: boolean): string => (ok ? 'met' : '**missed**');
const major = (f: Footprint): number => Number(/^v(\d+)/.exec(f.runtime.version)?.[1] ?? NaN);

/** The targets, per runtime major (the figures the release must reach on the runtime it ships and on Node 20). */
const TARGETS = {
  restMB: (m: number): number | undefined => (m === 20 ? 65 : undefined),
  anonMB: (): number => 60,
  medianMB: (m: number): number => (m === 20 ? 85 : 100),
  peakMB: (m: number): number => (m === 20 ? 115 : 125),
  thousandPeakMB: (): number => 250,
};

/**
 * The section: one column per (build, runtime), each judged against its runtime's target in the cell itself, so
 * Node 20 and Node 24 read side by side.
 */
export function footprintLines(runs: ReadonlyArray<{ name: string; f: Footprint }>, when: string, seconds: number, warmup: number): string[] {
  const cols = runs.map((b) => `${b.name}, Node ${b.f.runtime.version.replace(/^v/, '')}`);
  const judged = (v: number, target: number | undefined): string => (target === undefined ? `${f1(v)} MB` : `${f1(v)} MB (≤ ${target}: ${met(v <= target)})`);
  const row = (what: string, cell: (f: Footprint) => string): string => `| ${what} | ${runs.map((b) => cell(b.f)).join(' | ')} |`;
  return [
    '## Footprint on the runtime the release ships and on Node 20, against the targets of issue 48',
    '',
    when,
    '',
    'Each build through its own launcher (its own flags), once with Node 24 (`scripts/node24.sh`, what the Docker image',
    'and the Debian package run) first on PATH and once with Node 20; the bench checks /proc/PID/exe of every daemon at',
    'rest. At rest: three daemons side by side pointed at a port where nothing listens, /proc status 30 s after each was',
    `healthy (median of three; VmHWM the largest of three). Realistic: 100 buckets, 4 nodes, 100 replications, the full stat set, every collector at its default interval, ${seconds} s`,
    `of window A after ${warmup} s of warm-up, scraped with gzip every 15 s; VmRSS, RssAnon (heaps, malloc, stacks) and RssFile (the node binary`,
    'and libraries mapped from disk) read every second. 1,000 buckets: 4 nodes, the full stat set, `buckets` and `bucket_stats` at their',
    `default settings (range source through \`auto\` on the simulator's 7.6.5), VmHWM over start-up and ${Math.min(seconds, 120)} s of window A.`,
    'A target in a cell is that runtime\'s.',
    '',
    `| figure | ${cols.join(' | ')} |`,
    `|---|${cols.map(() => '---|').join('')}`,
    row('at rest, VmRSS median of 3', (f) => `${judged(median(f.restMB), TARGETS.restMB(major(f)))} (${f.restMB.map(f1).join(' / ')})`),
    row('at rest, RssAnon median of 3 / VmHWM largest', (f) => `${f1(median(f.restAnonMB))} / ${f1(Math.max(...f.restPeakMB))} MB`),
    row('realistic, median VmRSS over window A', (f) => judged(f.realistic.rssMedianMB, TARGETS.medianMB(major(f)))),
    row('realistic, peak VmHWM (start-up included)', (f) => judged(f.realistic.peakRssMB, TARGETS.peakMB(major(f)))),
    row('realistic, largest VmRSS reading in window A', (f) => `${f1(f.realistic.rssMaxInWindowAMB)} MB`),
    row('realistic, median RssAnon (anonymous) over window A', (f) => judged(median(f.realisticAnonMB), TARGETS.anonMB())),
    row('realistic, largest RssAnon reading in window A', (f) => `${f1(Math.max(...f.realisticAnonMB))} MB`),
    row('realistic, median RssFile (file-backed) over window A', (f) => `${f1(median(f.realisticFileMB))} MB`),
    row('realistic, CPU s/min over window A', (f) => f.realistic.cpuPerMinute.toFixed(2)),
    // The 1,000-bucket target holds only with every collector succeeding: a failed poll keeps less.
    row('1,000 buckets, peak (VmHWM)', (f) =>
      f.thousand.failed.length === 0 ? judged(f.thousand.peakRssMB, TARGETS.thousandPeakMB()) : `${f1(f.thousand.peakRssMB)} MB (≤ ${TARGETS.thousandPeakMB()} with every collector succeeding: **missed**, ${f.thousand.failed.join(', ')} failed)`,
    ),
    row('1,000 buckets, median VmRSS over window A / CPU s/min', (f) => `${f1(f.thousand.rssMedianMB)} MB / ${f.thousand.cpuPerMinute.toFixed(2)}`),
    // A poll longer than its deadline (the interval less 0.5 s) fails: on a loaded machine this is what fails first.
    row('1,000 buckets, longest bucket_stats poll seen in window A / its deadline', (f) => {
      const p = f.thousand.polls.bucket_stats;
      return p === undefined ? 'n/a' : `${p.maxS.toFixed(1)} s / ${(p.intervalS - 0.5).toFixed(1)} s`;
    }),
    row('collectors failed at the end (realistic / 1,000 buckets)', (f) => `${f.realistic.failed.length === 0 ? 'none' : f.realistic.failed.join(', ')} / ${f.thousand.failed.length === 0 ? 'none' : f.thousand.failed.join(', ')}`),
    '',
  ];
}

/** One side of an interleaved A/B: a launcher (its own flags and build) under a runtime. */
export interface AbSide {
  readonly name: string;
  readonly cli: string;
}

/** One run of an A/B at the realistic scenario: what the footprint section reads, and scrape latency (window B). */
export interface AbRun {
  readonly pair: number;
  readonly side: string;
  readonly node: string;
  readonly load: number;
  readonly rssMedianMB: number;
  readonly anonMedianMB: number;
  readonly fileMedianMB: number;
  /** VmHWM at the end of window A (start-up included, before window B's scrapes). */
  readonly peakMB: number;
  readonly cpuPerMinute: number;
  readonly duringP99: number;
  readonly betweenP99: number;
  readonly failed: readonly string[];
}

/**
 * Sides in interleaved pairs on each runtime (pair 1: A, B on the first runtime, A, B on the next; pair 2 …), each
 * run its own simulator and exporter at the realistic scenario: window A (gzip scrapes every 15 s, /proc status every
 * second) and then window B (one connection scraping back to back: p99 during and between polls).
 */
export async function abRuns(sides: readonly AbSide[], runtimes: readonly Runtime[], pairs: number, seconds: number, warmup: number, latencySeconds: number, log: (s: string) => void): Promise<AbRun[]> {
  const { loadavg } = await import('node:os');
  const runs: AbRun[] = [];
  for (let pair = 1; pair <= pairs; pair++) {
    for (const runtime of runtimes) {
      for (const side of sides) {
        const load = loadavg()[0] ?? NaN;
        const anon: number[] = [];
        const file: number[] = [];
        const r = await onRuntime(runtime, () =>
          runScenario({
            label: side.name,
            cli: side.cli,
            buckets: 100,
            nodes: 4,
            replications: 100,
            latencyMs: 5,
            statSet: 'full',
            measureSeconds: seconds,
            warmupSeconds: warmup,
            latencySeconds,
            onWindowASecond: (pid) => {
              const s = rssSplitMB(pid);
              if (!Number.isNaN(s.anon)) anon.push(s.anon);
              if (!Number.isNaN(s.file)) file.push(s.file);
            },
          }),
        );
        const run: AbRun = {
          pair,
          side: side.name,
          node: runtime.version,
          load,
          rssMedianMB: r.rssMedianMB,
          anonMedianMB: median(anon),
          fileMedianMB: median(file),
          peakMB: r.rssAfterWindowAMB,
          cpuPerMinute: r.cpuPerMinute,
          duringP99: r.during?.p99 ?? NaN,
          betweenP99: r.between?.p99 ?? NaN,
          failed: r.failed,
        };
        runs.push(run);
        log(`pair ${pair} ${runtime.version} ${side.name}: ${JSON.stringify(run)}`);
      }
    }
  }
  return runs;
}

/** Per runtime and side: the median of each figure over the pairs, with its range. */
export function abSummary(runs: readonly AbRun[]): string[] {
  const keys = ['rssMedianMB', 'anonMedianMB', 'fileMedianMB', 'peakMB', 'cpuPerMinute', 'duringP99', 'betweenP99'] as const;
  const out: string[] = [`| runtime | side | ${keys.join(' | ')} | load at start |`, `|---|---|${keys.map(() => '---|').join('')}---|`];
  for (const node of [...new Set(runs.map((r) => r.node))]) {
    for (const side of [...new Set(runs.map((r) => r.side))]) {
      const rs = runs.filter((r) => r.node === node && r.side === side);
      const cell = (k: (typeof keys)[number]): string => {
        const xs = rs.map((r) => r[k]);
        return `${median(xs).toFixed(k === 'cpuPerMinute' ? 2 : 1)} (${Math.min(...xs).toFixed(k === 'cpuPerMinute' ? 2 : 1)}–${Math.max(...xs).toFixed(k === 'cpuPerMinute' ? 2 : 1)})`;
      };
      const loads = rs.map((r) => r.load.toFixed(1)).join(', ');
      out.push(`| ${node} | ${side} | ${keys.map(cell).join(' | ')} | ${loads} |`);
    }
  }
  return out;
}

/** `node bench/out/bench/footprint.js ab` with BENCH_AB_SIDES="name=launcher,name=launcher…", BENCH_AB_NODES="24,20". */
if (process.argv[2] === 'ab') {
  const sides = (process.env.BENCH_AB_SIDES ?? '').split(',').map((s) => {
    const [name = '', cli = ''] = s.split('=');
    return { name, cli };
  });
  const want = (process.env.BENCH_AB_NODES ?? '24,20').split(',');
  const runtimes: Runtime[] = [];
  for (const w of want) {
    if (w === '24') runtimes.push(runtimeOf(execFileSync('bash', [join(dirname(dirname(dirname(dirname(new URL(import.meta.url).pathname)))), 'scripts', 'node24.sh')], { encoding: 'utf8' }).trim()));
    if (w === '20') runtimes.push(runtimeOf(process.execPath));
  }
  const n = (k: string, d: number): number => (process.env[k] === undefined ? d : Number(process.env[k]));
  const log = (s: string): void => void process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
  abRuns(sides, runtimes, n('BENCH_AB_PAIRS', 3), n('BENCH_SECONDS', 60), n('BENCH_WARMUP_SECONDS', 35), n('BENCH_LATENCY_SECONDS', 15), log).then(
    (runs) => process.stdout.write(`${abSummary(runs).join('\n')}\n`),
    (e: unknown) => {
      process.stderr.write(`ab failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
