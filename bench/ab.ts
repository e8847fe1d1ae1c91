/**
 * Two builds of the exporter side by side at the realistic scenario (100 buckets with the full stat set, 4 nodes,
 * 100 replications, 5 ms latency, every collector at its default interval), in interleaved pairs: A, B, A, B … on
 * one machine, each run its own simulator and exporter (bench/scenario.ts, window A only: gzip scrapes every 15 s).
 * Prints each run, then per pair the ratio B / A of the whole process's CPU, and the median and spread of the ratios.
 *
 *   BENCH_AB_A, BENCH_AB_B   the launchers (bin/cbwatch.js) of the two builds (each with dist/ built beside it)
 *   BENCH_AB_NAMES           "name of A,name of B" for the printout (default "A,B")
 *   BENCH_AB_PAIRS           pairs to run (default 3)
 *   BENCH_SECONDS            window A of each run (default 120)
 *   BENCH_WARMUP_SECONDS     from ready to window A (default 35: the first polls ask for a full window)
 *
 * Build each side from its commit with `git archive <commit> | tar -x -C <dir>`, a `node_modules` link to an
 * installed checkout's, then `npm run build` in <dir>.
 */
import { cpus, loadavg } from 'node:os';
import { median } from './chaos-lib.js';
import { refuseArguments } from './common.js';
import { runScenario } from './scenario.js';
import type { ScenarioResult } from './scenario.js';

const USAGE = `bench/ab.ts: two builds at the realistic scenario in interleaved pairs (A, B, A, B …).
Environment: BENCH_AB_A, BENCH_AB_B (launchers), BENCH_AB_NAMES ("a,b"), BENCH_AB_PAIRS (3), BENCH_SECONDS (120),
BENCH_WARMUP_SECONDS (35).
`;

refuseArguments('ab', USAGE);

const num = (k: string, d: number): number => (process.env[k] === undefined ? d : Number(process.env[k]));
const fmt = (n: number | undefined, digits = 2): string => (n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const log = (s: string): void => void process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

async function main(): Promise<void> {
  const a = process.env.BENCH_AB_A;
  const b = process.env.BENCH_AB_B;
  if (a === undefined || b === undefined) {
    process.stderr.write(`BENCH_AB_A and BENCH_AB_B must name the two launchers\n${USAGE}`);
    process.exit(2);
  }
  const [nameA = 'A', nameB = 'B'] = (process.env.BENCH_AB_NAMES ?? 'A,B').split(',');
  const pairs = num('BENCH_AB_PAIRS', 3);
  const seconds = num('BENCH_SECONDS', 120);
  const warmup = num('BENCH_WARMUP_SECONDS', 35);
  log(`${pairs} pairs, window A ${seconds} s after ${warmup} s; ${cpus().length} cores; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const runs: Array<{ pair: number; side: string; r: ScenarioResult; load: number }> = [];
  for (let pair = 1; pair <= pairs; pair++) {
    for (const [side, cli] of [[nameA, a], [nameB, b]] as const) {
      const load = loadavg()[0] ?? NaN;
      const r = await runScenario({ label: side, buckets: 100, nodes: 4, replications: 100, latencyMs: 5, statSet: 'full', measureSeconds: seconds, warmupSeconds: warmup, latencySeconds: 0, cli, threads: true });
      runs.push({ pair, side, r, load });
      const t = r.cpuByThread;
      log(`pair ${pair} ${side}: cpu ${fmt(r.cpuPerMinute)} s/min (main ${fmt(t?.main)}, busiest other ${fmt(t?.busiest)}, others ${fmt(t?.others)}), peak rss ${fmt(r.peakRssMB, 1)} MB, median rss ${fmt(r.rssMedianMB, 1)} MB, ${fmt(r.requestsPerMinute, 0)} req/min, failed: ${r.failed.join(', ') || 'none'}, load at start ${fmt(load)}`);
    }
  }
  const ratios: number[] = [];
  for (let pair = 1; pair <= pairs; pair++) {
    const ra = runs.find((x) => x.pair === pair && x.side === nameA)?.r.cpuPerMinute ?? NaN;
    const rb = runs.find((x) => x.pair === pair && x.side === nameB)?.r.cpuPerMinute ?? NaN;
    ratios.push(rb / ra);
  }
  const of = (side: string, f: (r: ScenarioResult) => number): number[] => runs.filter((x) => x.side === side).map((x) => f(x.r));
  const range = (xs: number[]): string => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
  log(`ratios ${nameB} / ${nameA} (whole-process CPU): ${ratios.map((x) => fmt(x, 3)).join(', ')}; median ${fmt(median(ratios), 3)}, range ${range(ratios)}`);
  for (const side of [nameA, nameB]) {
    const cpu = of(side, (r) => r.cpuPerMinute);
    const busy = of(side, (r) => r.cpuByThread?.busiest ?? NaN);
    const peak = of(side, (r) => r.peakRssMB);
    log(`${side}: cpu median ${fmt(median(cpu))} (${range(cpu)}) s/min; busiest other thread median ${fmt(median(busy))} (${range(busy)}); peak rss median ${fmt(median(peak), 1)} MB (${range(peak)})`);
  }
  process.stdout.write(`${JSON.stringify(runs.map((x) => ({ pair: x.pair, side: x.side, load: x.load, cpu: x.r.cpuPerMinute, threads: x.r.cpuByThread, peakRssMB: x.r.peakRssMB, rssMedianMB: x.r.rssMedianMB, requestsPerMinute: x.r.requestsPerMinute, failed: x.r.failed, polls: x.r.polls })))}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`ab failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
