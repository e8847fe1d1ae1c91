/**
 * What the service collectors cost (`BENCH_SERVICES_COST=1 npm run bench`): the realistic scenario plus 50 indexes,
 * 10 Search indexes, 10 Eventing functions and an analytics node (the query service runs on the simulator's
 * default nodes), every collector on, against the same simulated cluster with the service collectors off, in
 * interleaved pairs (on, off, on, off …) on one machine. Each run has its own simulator and exporter
 * (bench/scenario.ts, window A only: gzip scrapes every 15 s).
 *
 * The index and eventing collectors read their state (/indexStatus, the eventing status) and their statistics in
 * one poll, with no switch for the statistics alone: the "off" side turns those collectors off altogether, so it
 * also saves their state requests.
 *
 * Knobs: BENCH_SERVICES_COST_PAIRS (7.x pairs, default 3), BENCH_SERVICES_COST_SECONDS (window A of each run,
 * default 120), BENCH_SERVICES_COST_BEFORE (the launcher of another build: one more 6.6.5 run with the services
 * on, for a before/after of its request count).
 */
import { cpus, loadavg } from 'node:os';
import { median } from './chaos-lib.js';
import { ALL_COLLECTORS, runScenario } from './scenario.js';
import type { ScenarioOptions, ScenarioResult } from './scenario.js';

/** The collectors whose cost is measured. */
export const SERVICE_COLLECTORS = ['query', 'analytics', 'processes', 'search_index', 'index', 'eventing'] as const;

/** The simulated services: 50 more indexes, 10 more Search indexes, 10 more deployed functions on an eventing node, one analytics node. */
export const SERVICE_KNOBS = { extraIndexes: 50, extraSearchIndexes: 10, extraFunctions: 10, analyticsNodes: 1, eventingNodes: 1 } as const;

type Base = Pick<ScenarioOptions, 'buckets' | 'nodes' | 'replications' | 'latencyMs' | 'statSet'> & {
  readonly warmupSeconds: number;
  readonly log: (s: string) => void;
  readonly when: () => string;
};

interface Run {
  readonly version: string;
  readonly side: 'on' | 'off' | 'on, before';
  readonly pair: number;
  readonly load: number;
  readonly r: ScenarioResult;
}

const env = (k: string, d: number): number => (process.env[k] === undefined ? d : Number(process.env[k]));
const fmt = (n: number | undefined, digits = 1): string => (n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/** Requests in one 30 s cycle (the service collectors' and the data collectors' interval) over window A. */
const perCycle = (perMinute: number): number => perMinute / 2;
/** Statistics requests: the legacy sections and the range API (routes with `/stats`). */
export function statsPerMinute(r: Pick<ScenarioResult, 'requestsByRoute'>): number {
  return Object.entries(r.requestsByRoute)
    .filter(([route]) => route.includes('/stats'))
    .reduce((a, [, n]) => a + n, 0);
}

export async function servicesCost(base: Base): Promise<string[]> {
  const pairs = env('BENCH_SERVICES_COST_PAIRS', 3);
  const seconds = env('BENCH_SERVICES_COST_SECONDS', 120);
  const before = process.env.BENCH_SERVICES_COST_BEFORE;
  const started = base.when();
  const off = ALL_COLLECTORS.filter((c) => !(SERVICE_COLLECTORS as readonly string[]).includes(c));
  const runs: Run[] = [];
  const one = async (version: string, side: Run['side'], pair: number, cli?: string): Promise<void> => {
    const load = loadavg()[0] ?? NaN;
    base.log(`services-cost ${version} ${side} (pair ${pair}) …`);
    const r = await runScenario({
      label: `services ${side} ${version}`,
      buckets: base.buckets,
      nodes: base.nodes,
      replications: base.replications,
      latencyMs: base.latencyMs,
      statSet: base.statSet,
      serverVersion: version,
      simKnobs: SERVICE_KNOBS,
      ...(side === 'off' ? { collectors: off } : {}),
      ...(cli ? { cli } : {}),
      measureSeconds: seconds,
      warmupSeconds: base.warmupSeconds,
      latencySeconds: 0,
    });
    base.log(`  cpu ${fmt(r.cpuPerMinute, 2)} s/min, peak rss ${fmt(r.peakRssMB)} MB, ${fmt(perCycle(r.requestsPerMinute))} requests / ${fmt(perCycle(statsPerMinute(r)))} statistics requests per 30 s, failed: ${r.failed.join(', ') || 'none'}, load ${fmt(load, 2)}`);
    runs.push({ version, side, pair, load, r });
  };
  for (let pair = 1; pair <= pairs; pair++) {
    await one('7.6.5', 'on', pair);
    await one('7.6.5', 'off', pair);
  }
  await one('6.6.5', 'on', 1);
  await one('6.6.5', 'off', 1);
  if (before) await one('6.6.5', 'on, before', 1, before);
  const ended = loadavg();

  const of = (version: string, side: Run['side']): Run[] => runs.filter((x) => x.version === version && x.side === side);
  const range = (xs: number[], d = 2): string => `${fmt(Math.min(...xs), d)}–${fmt(Math.max(...xs), d)}`;
  const ratios = (f: (r: ScenarioResult) => number): number[] =>
    Array.from({ length: pairs }, (_, i) => {
      const a = of('7.6.5', 'on').find((x) => x.pair === i + 1)?.r;
      const b = of('7.6.5', 'off').find((x) => x.pair === i + 1)?.r;
      return a && b ? f(a) / f(b) : NaN;
    });
  const cpuRatios = ratios((r) => r.cpuPerMinute);
  const rssRatios = ratios((r) => r.peakRssMB);
  const med = (version: string, side: Run['side'], f: (r: ScenarioResult) => number): number => median(of(version, side).map((x) => f(x.r)));
  const addedStats = (version: string): number => perCycle(med(version, 'on', statsPerMinute) - med(version, 'off', statsPerMinute));
  const added = (version: string): number => perCycle(med(version, 'on', (r) => r.requestsPerMinute) - med(version, 'off', (r) => r.requestsPerMinute));
  const cpuOk = median(cpuRatios) <= 1.15;
  const rssOk = median(rssRatios) <= 1.15;
  const reqOk = addedStats('7.6.5') <= 4;
  const perPoll = (r: ScenarioResult): string =>
    SERVICE_COLLECTORS.map((c) => (r.polls[c] ? `${c} ${r.polls[c].requests}` : undefined))
      .filter((x) => x !== undefined)
      .join(', ') || '—';
  const row = (x: Run): string =>
    `| ${x.version} | ${x.side} | ${x.pair} | ${fmt(x.load, 2)} | ${fmt(x.r.cpuPerMinute, 2)} | ${fmt(x.r.peakRssMB)} | ${fmt(x.r.rssMedianMB)} | ${fmt(perCycle(x.r.requestsPerMinute))} | ${fmt(perCycle(statsPerMinute(x.r)))} | ${perPoll(x.r)} | ${x.r.failed.length ? x.r.failed.join(', ') : 'none'} |`;
  const lines = [
    `## Service collectors' cost: on against off (realistic scenario + 50 indexes, 10 Search indexes, 10 functions)`,
    '',
    started,
    `Load average at the end: ${ended.map((x) => fmt(x, 2)).join(' ')} on ${cpus().length} cores.`,
    '',
    `${base.buckets} buckets (${base.statSet} stat set), ${base.nodes} nodes, ${base.replications} replications, ${base.latencyMs} ms latency; simulator knobs ${JSON.stringify(SERVICE_KNOBS)}`,
    '(the query service runs on the simulator\'s default query nodes). "on": every collector at its default interval. "off": the same simulated cluster',
    `with the collectors ${SERVICE_COLLECTORS.map((c) => `\`${c}\``).join(', ')} off. The index and eventing collectors have no switch for their`,
    'statistics alone, so "off" turns them off altogether (it also saves their /indexStatus and eventing status requests).',
    `Each run: its own simulator and exporter, ${base.warmupSeconds} s from ready, then ${seconds} s of window A scraped with gzip every 15 s;`,
    '7.6.5 in interleaved pairs (on, off, on, off …), then one 6.6.5 pair for the request count. CPU: the whole exporter',
    'process (all threads), s per minute of window A; peak RSS: VmHWM at the end of window A; requests: counted by the',
    'simulator (/_sim/requests), per 30 s (one cycle of the 30 s collectors); statistics requests: routes with `/stats`',
    '(range API, legacy sections); requests per poll: the largest `cbwatch_collector_requests` of one poll of each',
    'service collector.',
    '',
    '| profile | collectors | pair | load at start | CPU s/min | peak RSS MB | median RSS MB | requests / 30 s | statistics requests / 30 s | requests per poll | failed |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...runs.map(row),
    '',
    '| figure (7.6.5) | on: median (range) | off: median (range) | on / off per pair: median (range) | target | |',
    '|---|---|---|---|---|---|',
    `| CPU, s per minute | ${fmt(med('7.6.5', 'on', (r) => r.cpuPerMinute), 2)} (${range(of('7.6.5', 'on').map((x) => x.r.cpuPerMinute))}) | ${fmt(med('7.6.5', 'off', (r) => r.cpuPerMinute), 2)} (${range(of('7.6.5', 'off').map((x) => x.r.cpuPerMinute))}) | ${fmt(median(cpuRatios), 3)} (${range(cpuRatios, 3)}) | ≤ 1.15 | ${cpuOk ? 'met' : '**missed**'} |`,
    `| peak RSS, MB | ${fmt(med('7.6.5', 'on', (r) => r.peakRssMB))} (${range(of('7.6.5', 'on').map((x) => x.r.peakRssMB), 1)}) | ${fmt(med('7.6.5', 'off', (r) => r.peakRssMB))} (${range(of('7.6.5', 'off').map((x) => x.r.peakRssMB), 1)}) | ${fmt(median(rssRatios), 3)} (${range(rssRatios, 3)}) | ≤ 1.15 | ${rssOk ? 'met' : '**missed**'} |`,
    `| statistics requests added per 30 s | ${fmt(addedStats('7.6.5'))} (all requests added: ${fmt(added('7.6.5'))}) | | | ≤ 4 | ${reqOk ? 'met' : '**missed**'} |`,
    '',
    `6.6.5 (legacy sections, one pair): ${fmt(addedStats('6.6.5'))} statistics requests added per 30 s (all requests: ${fmt(added('6.6.5'))}). The simulator`,
    'lists its Search index definitions (`GET /api/index`), so search_index asks `@fts-<bucket>` only of the buckets with',
    'Search indexes, as on a real cluster.',
    ...(before ? [`The build before (${process.env.BENCH_SERVICES_COST_BEFORE_NAME ?? before}) on 6.6.5 with the services on: ${fmt(perCycle(med('6.6.5', 'on, before', (r) => r.requestsPerMinute)))} requests per 30 s, ${fmt(perCycle(med('6.6.5', 'on, before', statsPerMinute)))} of them statistics (this build: ${fmt(perCycle(med('6.6.5', 'on', (r) => r.requestsPerMinute)))}, ${fmt(perCycle(med('6.6.5', 'on', statsPerMinute)))}).`] : []),
    '',
    `Target (CPU and peak RSS within 15%, at most 4 statistics requests a poll added on 7.x): ${cpuOk && rssOk && reqOk ? '**holds**' : '**does not hold**'} in this run.`,
    '',
  ];
  return lines;
}
