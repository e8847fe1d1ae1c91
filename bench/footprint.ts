/**
 * Issue 26, item 2: the footprint targets, this build beside another (BENCH_BEFORE: the launcher of the previous
 * release's checkout, e.g. `../before/bin/cbwatch.js`), each measured the same way in the same run:
 * - at rest: the daemon pointed at a port where nothing listens, VmRSS 30 s after start, three processes side by
 *   side (the median is reported);
 * - the realistic scenario: window A only (polled and scraped as by Prometheus), VmRSS every second: median and
 *   largest reading, and CPU;
 * - 1,000 buckets on 4 nodes with the full stat set, buckets and bucket_stats at their default settings: VmHWM.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './chaos-lib.js';
import { freePort, peakRssBytes, rssMB, startProcess, stop, waitFor } from './common.js';
import { runScenario } from './scenario.js';
import type { ScenarioOptions, ScenarioResult } from './scenario.js';

export interface Footprint {
  readonly cli: string;
  readonly restMB: number[];
  readonly restPeakMB: number[];
  readonly realistic: ScenarioResult;
  readonly thousand: ScenarioResult;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** VmRSS and VmHWM, MB, of `runs` daemons side by side, `seconds` after each is ready, no cluster to reach. */
export async function atRest(cli: string, runs = 3, seconds = 30): Promise<{ rss: number[]; peak: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-rest-'));
  const pw = join(dir, 'password');
  writeFileSync(pw, 'not-used\n', { mode: 0o600 });
  const procs = await Promise.all(
    Array.from({ length: runs }, async () => {
      const port = await freePort();
      const p = startProcess(['run', '--couchbase.url', 'http://127.0.0.1:9', '--couchbase.username', 'u', '--couchbase.password-file', pw, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'error'], {}, { cli });
      await waitFor('exporter at rest', async () => ((await fetch(`http://127.0.0.1:${port}/-/healthy`)).status === 200 ? true : undefined), 60_000);
      return p;
    }),
  );
  try {
    await sleep(seconds * 1000);
    return { rss: procs.map((p) => rssMB(p.pid)), peak: procs.map((p) => peakRssBytes(p.pid as number) / 1024 / 1024) };
  } finally {
    await Promise.all(procs.map((p) => stop(p)));
  }
}

export async function footprint(cli: string, realistic: Omit<ScenarioOptions, 'label' | 'measureSeconds' | 'latencySeconds'>, seconds: number, warmup: number): Promise<Footprint> {
  const rest = await atRest(cli);
  const r = await runScenario({ ...realistic, cli, label: `footprint realistic ${cli}`, measureSeconds: seconds, warmupSeconds: warmup, latencySeconds: 0 });
  const thousand = await runScenario({ cli, label: `footprint 1000 buckets ${cli}`, buckets: 1000, nodes: 4, replications: 0, latencyMs: 5, statSet: 'full', collectors: ['buckets', 'bucket_stats'], measureSeconds: Math.min(seconds, 120), warmupSeconds: warmup, latencySeconds: 0 });
  return { cli, restMB: rest.rss, restPeakMB: rest.peak, realistic: r, thousand };
}

const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const met = (ok: boolean): string => (ok ? 'met' : '**missed**');

/** The section's table: one column per build, the targets beside them (judged on this build, the last). */
export function footprintLines(builds: ReadonlyArray<{ name: string; f: Footprint }>, when: string, seconds: number, runtime?: string): string[] {
  const cols = builds.map((b) => b.name);
  // A row with a target is judged on this build (the last column); one without has neither.
  const row = (what: string, cell: (f: Footprint) => string, target?: string, ok?: (f: Footprint) => boolean): string => {
    const last = builds[builds.length - 1]?.f as Footprint;
    return `| ${what} | ${builds.map((b) => cell(b.f)).join(' | ')} | ${target ?? ''} | ${ok === undefined ? '' : met(ok(last))} |`;
  };
  const intro =
    runtime === undefined
      ? ['## Footprint against the targets of issue 26 (item 2)', '', when, '', 'Each build through its own launcher (its own flags), on the Node that runs the bench (see the header).']
      : [`### The same on Node ${runtime.replace(/^v/, '')}, the runtime of the Docker image and the Debian package`, '', when, '', 'Each build through its own launcher, with Node 24 first on PATH (the launchers run `node` from PATH).'];
  return [
    ...intro,
    'At rest: three daemons side by side pointed at a port where',
    `nothing listens, VmRSS 30 s after each was healthy (median of three; VmHWM the largest of three). Realistic: 100 buckets, 4 nodes, 100 replications, the full stat set, every collector at its default interval, ${seconds} s`,
    'of window A after the warm-up, scraped with gzip every 15 s; VmRSS read every second. 1,000 buckets: 4 nodes, the full',
    'stat set, `buckets` and `bucket_stats` at their default settings (range source through `auto` on the simulator\'s 7.6.5), VmHWM over start-up and window A.',
    '',
    `| figure | ${cols.join(' | ')} | target | |`,
    `|---|${cols.map(() => '---|').join('')}---|---|`,
    row('at rest, VmRSS median of 3', (f) => `${f1(median(f.restMB))} MB (${f.restMB.map(f1).join(' / ')})`, '≤ 80 MB', (f) => median(f.restMB) <= 80),
    row('at rest, VmHWM', (f) => `${f1(Math.max(...f.restPeakMB))} MB`),
    row('realistic, median VmRSS over window A', (f) => `${f1(f.realistic.rssMedianMB)} MB`, '≤ 110 MB', (f) => f.realistic.rssMedianMB <= 110),
    row('realistic, peak (VmHWM, start-up included / largest reading in window A)', (f) => `${f1(f.realistic.peakRssMB)} / ${f1(f.realistic.rssMaxInWindowAMB)} MB`, '≤ 140 MB', (f) => f.realistic.peakRssMB <= 140),
    row('realistic, CPU s/min over window A', (f) => f.realistic.cpuPerMinute.toFixed(2)),
    row('1,000 buckets, peak (VmHWM)', (f) => `${f1(f.thousand.peakRssMB)} MB`, '≤ 250 MB', (f) => f.thousand.peakRssMB <= 250),
    row('1,000 buckets, median VmRSS over window A / CPU s/min', (f) => `${f1(f.thousand.rssMedianMB)} MB / ${f.thousand.cpuPerMinute.toFixed(2)}`),
    row('collectors failed at the end (realistic / 1,000 buckets)', (f) => `${f.realistic.failed.length === 0 ? 'none' : f.realistic.failed.join(', ')} / ${f.thousand.failed.length === 0 ? 'none' : f.thousand.failed.join(', ')}`, 'none', (f) => f.realistic.failed.length + f.thousand.failed.length === 0),
    '',
  ];
}
