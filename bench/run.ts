/**
 * `npm run bench`: issue 12's targets, measured with real processes (bench/scenario.ts), written to
 * bench/RESULTS.md.
 *  - default (~8-10 min): the realistic scenario — simulator with 100 buckets (full stat set), 4 nodes,
 *    100 replications, 5 ms latency per request, every collector on at its default interval — through the
 *    launcher; with BENCH_FLAGS=1, then the same exporter under other Node flags (the semi-space cap, with
 *    --optimize-for-size) for CPU and RSS, which is what the launcher's flags are judged on.
 *  - BENCH_SCALE=1: the scale curve, 10/100/300/1000 buckets (buckets + bucket_stats) and 50/200/500/1000
 *    replications (xdcr), each for BENCH_SCALE_SECONDS (default 90).
 *  - BENCH_FLEET=1: 20 clusters x 20 buckets x 10 replications in one process (20 cluster entries pointing at
 *    one simulator), every collector on.
 *  - BENCH_XDCR=1: the older XDCR poll-time bench (bench/xdcr.ts).
 *  - BENCH_SERVICES_COST=1: the service collectors' cost (bench/services-cost.ts), on against off in interleaved pairs.
 * Knobs: BENCH_SECONDS (window A: default 300 for the realistic scenario, 120 elsewhere), BENCH_WARMUP_SECONDS
 * (realistic: from ready to window A, default 35), BENCH_LATENCY_SECONDS (window B, default 60),
 * BENCH_LOAD_SECONDS (window C, default 10), BENCH_FLAGS=1 to add the Node-flag comparison.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { EXPORTER_CLI, refuseArguments, ROOT } from './common.js';
import { gzipWrk, gzipWrkSection } from './gzip-wrk.js';
import { runScenario } from './scenario.js';
import type { ScenarioOptions, ScenarioResult, Stats } from './scenario.js';

const env = (k: string, d: number): number => (process.env[k] === undefined ? d : Number(process.env[k]));
const SECONDS = env('BENCH_SECONDS', 120);
/** Window A of the realistic scenario: one whole cycle of the 5-minute collectors, so their polls count too. */
const REALISTIC_SECONDS = env('BENCH_SECONDS', 300);
/** Ready, then one 30 s cycle of first polls (each asks for a full window of samples) before window A. */
const REALISTIC_WARMUP = env('BENCH_WARMUP_SECONDS', 35);
const LATENCY_SECONDS = env('BENCH_LATENCY_SECONDS', 60);
const LOAD_SECONDS = env('BENCH_LOAD_SECONDS', 10);
const SCALE_SECONDS = env('BENCH_SCALE_SECONDS', 90);

function fmt(n: number | undefined, digits = 1): string {
  return n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}
const ms = (s: Stats | undefined): string => (s ? `${fmt(s.p50)} / ${fmt(s.p99)} / ${fmt(s.max)} ms (n=${s.n})` : 'n/a');
const yes = (c: boolean): string => (c ? 'met' : '**missed**');

const REALISTIC: Omit<ScenarioOptions, 'label' | 'measureSeconds' | 'latencySeconds'> = { buckets: 100, nodes: 4, replications: 100, latencyMs: 5, statSet: 'full' };

function log(s: string): void {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
}

async function scenario(o: ScenarioOptions): Promise<ScenarioResult> {
  log(`scenario ${o.label} …`);
  const r = await runScenario(o);
  log(`  cpu ${fmt(r.cpuPerMinute, 2)} s/min, rss ${fmt(r.peakRssMB)} MB, ${fmt(r.requestsPerMinute, 0)} req/min, during ${ms(r.during)}, between ${ms(r.between)}, ceiling ${ms(r.ceilingPlain)}`);
  return r;
}

function pollRows(r: ScenarioResult): string[] {
  return Object.entries(r.polls).map(([name, p]) => `| ${name} | ${fmt(p.maxS, 2)} s | ${p.intervalS} s | ${p.requests} |`);
}

function topRoutes(r: ScenarioResult, n = 6): string {
  return Object.entries(r.requestsByRoute)
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([route, v]) => `\`${route}\` ${fmt(v, 0)}`)
    .join(', ');
}

async function main(): Promise<void> {
  const started = new Date();
  // Sections this run measured replace their namesakes in RESULTS.md; the others are kept, so the long runs
  // (BENCH_SCALE, BENCH_FLEET) can be made on their own with BENCH_REALISTIC=0.
  const sections = new Map<string, string[]>();
  let current: string[] = [];
  const section = (name: string): void => {
    current = [];
    sections.set(name, current);
  };
  const out = (...l: string[]): void => void current.push(...l);

  section('header');
  out(
    '# Benchmark results',
    '',
    `Last run of \`npm run bench\` on ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}.`,
    'Each section says when it was measured and how busy the machine was. The simulator and the exporter run as',
    'separate processes (`cbwatch simulate`, `cbwatch run` through the launcher `bin/cbwatch.js`); load comes from the',
    'bench process, on loopback. The exporter collects in a worker thread; peak RSS (VmHWM) is the whole process.',
    '',
  );
  const when = (): string => `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load average ${fmt(loadavg()[0])} on ${cpus().length} cores at the start${(loadavg()[0] ?? 0) > cpus().length * 0.5 ? ' — **the machine was shared and busy**: latency and CPU figures are inflated by other work and vary from run to run; compare figures within this section' : ''}.`;

  if (process.env.BENCH_REALISTIC !== '0') {
    section('realistic');
    const whenReal = when();
    const real = await scenario({
      ...REALISTIC,
      label: 'realistic',
      measureSeconds: REALISTIC_SECONDS,
      warmupSeconds: REALISTIC_WARMUP,
      latencySeconds: LATENCY_SECONDS,
      throughput: true,
      loadSeconds: LOAD_SECONDS,
      // Issue 26, item 2: window C again with wrk (bench/gzip-wrk.ts), a client that is not the bottleneck.
      onWindowC: async (url, pid) => void sections.set('gzip', gzipWrkSection(await gzipWrk(`${url}/metrics`, { seconds: LOAD_SECONDS, exporterPid: pid }), when())),
    });
    const flagRuns: Array<{ flags: string; r: ScenarioResult }> = [];
    if (process.env.BENCH_FLAGS === '1') {
      for (const nodeArgs of [['--max-semi-space-size=2'], ['--max-semi-space-size=2', '--optimize-for-size']]) {
        const r = await scenario({ ...REALISTIC, label: `flags ${nodeArgs.join(' ') || 'V8 defaults'}`, measureSeconds: Math.min(SECONDS, 90), latencySeconds: 0, nodeArgs });
        flagRuns.push({ flags: nodeArgs.join(' ') || '(V8 defaults)', r });
      }
    }
    const launcherFlags = /^#!.*node[ \t]*(.*)$/m.exec(readFileSync(join(ROOT, 'bin', 'cbwatch.js'), 'utf8'))?.[1]?.trim() || '(none: V8 defaults)';

    const g10 = real.gzip10;
    const g1 = real.gzip1;
    const ratio = g10 ? g10.rps / g10.ceilingRps : NaN;
    // The realistic scenario has 100 replications; requests are counted per minute.
    const xdcrPer30 = (real.requestsByRoute['/pools/default/buckets/:bucket/stats/*'] ?? 0) / 100 / 2;
    out(
      `## Realistic scenario: ${REALISTIC.buckets} buckets (full stat set), ${REALISTIC.nodes} nodes, ${REALISTIC.replications} replications, ${REALISTIC.latencyMs} ms latency, every collector at its default interval`,
      '',
      whenReal,
      '',
      `Launcher flags: \`${launcherFlags}\`. Window A (${REALISTIC_SECONDS} s from ${REALISTIC_WARMUP} s after ready, once the first poll of every collector is over;`,
      'scraped with gzip every 15 s as by Prometheus): CPU, requests, RSS; it spans a whole cycle of the 5-minute collectors,',
      `so each of their polls counts once. Start-up (launch to window A) is reported on its own row. Window B (${LATENCY_SECONDS} s): one`,
      'connection scraping plain /metrics back to back, from a process of its own (bench/probe.ts), beside the same loop',
      'against a bare Node http server in another process writing the same bytes; a scrape counts as "during a poll" when',
      'the simulator received a request within 250 ms before it started or while it ran. Window C: gzip scrapes, 10',
      'connections and 1, from the bench process, beside the static-bytes ceiling (a bare Node http server in the bench',
      'process writing the same gzip bytes).',
      '',
      '| figure | value | target (issue 12) | |',
      '|---|---|---|---|',
      `| CPU, s per minute | ${fmt(real.cpuPerMinute, 2)} | ≤ 1.5 | ${yes(real.cpuPerMinute <= 1.5)} |`,
      `| median RSS over window A (VmRSS every second) | ${fmt(real.rssMedianMB)} MB (largest reading ${fmt(real.rssMaxInWindowAMB)} MB) | ≤ 110 MB (issue 26) | ${yes(real.rssMedianMB <= 110)} |`,
      `| peak RSS | ${fmt(real.peakRssMB)} MB (${fmt(real.rssAfterWindowAMB)} MB at the end of window A, before windows B and C) | ≤ 140 MB (issue 26) | ${yes(real.peakRssMB <= 140)} |`,
      `| start-up: CPU from launch to window A, peak RSS by then | ${fmt(real.startupCpuSeconds, 2)} s, ${fmt(real.startupPeakRssMB)} MB | | |`,
      `| Couchbase requests per minute | ${fmt(real.requestsPerMinute, 0)} (${topRoutes(real, 3)}); XDCR stat requests per replication per 30 s: ${fmt(xdcrPer30, 1)} | ≤ 6 per replication per 30 s | ${xdcrPer30 <= 6 ? 'met' : '**missed**'} |`,
      `| /metrics size, plain / gzip | ${fmt(real.plainBytes / 1024)} KiB / ${fmt(real.gzipBytes / 1024)} KiB, ${real.series} series | | |`,
      `| /metrics p50 / p99 / max, 1 connection, plain, during polls | ${ms(real.during)} | p99 ≤ 1.5× between; max < 50 ms | ${yes((real.during?.p99 ?? Infinity) <= 1.5 * (real.between?.p99 ?? 0))} / ${yes(Math.max(real.during?.max ?? Infinity, real.between?.max ?? Infinity) < 50)} |`,
      `| /metrics p50 / p99 / max, 1 connection, plain, between polls | ${ms(real.between)} | | |`,
      `| static-bytes ceiling, 1 connection, plain, same client loop | ${ms(real.ceilingPlain)} | | |`,
      `| /metrics gzip, 10 connections | ${fmt(g10?.rps, 0)} req/s, p99 ${fmt(g10?.p99)} ms | ≥ 80% of the ceiling | ${yes(ratio >= 0.8)} (${fmt(ratio * 100, 0)}%) |`,
      `| ceiling gzip, 10 connections | ${fmt(g10?.ceilingRps, 0)} req/s, p99 ${fmt(g10?.ceilingP99)} ms | | |`,
      `| /metrics gzip p99, 1 connection / ceiling's | ${fmt(g1?.p99)} ms / ${fmt(g1?.ceilingP99)} ms | ≤ 2× the ceiling's | ${yes((g1?.p99 ?? Infinity) <= 2 * Math.max(1, g1?.ceilingP99 ?? 0))} |`,
      `| collectors failed at the end | ${real.failed.length ? real.failed.join(', ') : 'none'} | | |`,
      '',
      'Longest poll of each collector during window A (requests: the largest count of one poll):',
      '',
      '| collector | longest poll | interval | requests per poll |',
      '|---|---|---|---|',
      ...pollRows(real),
      '',
    );
    if (flagRuns.length) {
      out(
        '### Node flags',
        '',
        `The same scenario (window A from 5 s after ready) for ${Math.min(SECONDS, 90)} s under other flags (\`node <flags> bin/cbwatch.js\`), no scrape load but Prometheus's:`,
        '',
        '| flags | CPU s/min | peak RSS |',
        '|---|---|---|',
        `| launcher: \`${launcherFlags}\` | ${fmt(real.cpuPerMinute, 2)} | ${fmt(real.rssAfterWindowAMB)} MB (${fmt(real.peakRssMB)} MB after windows B and C) |`,
        ...flagRuns.map(({ flags, r }) => `| \`${flags}\` | ${fmt(r.cpuPerMinute, 2)} | ${fmt(r.peakRssMB)} MB |`),
        '',
      );
    }
  }

  if (process.env.BENCH_STATS_SOURCE !== '0') {
    // Issue 23: the realistic scenario on the simulator's default 7.6 profile, bucket and XDCR statistics from the
    // range API and from the sample envelopes, one after the other in this run, answers counted by a relay.
    section('stats-source');
    const whenSrc = when();
    const srcSeconds = env('BENCH_STATS_SOURCE_SECONDS', Math.min(REALISTIC_SECONDS, 180));
    const runs: Array<{ source: 'range' | 'envelope'; r: ScenarioResult }> = [];
    for (const source of ['range', 'envelope'] as const) {
      const r = await scenario({ ...REALISTIC, label: `stats_source ${source}`, statsSource: source, countAnswerBytes: true, measureSeconds: srcSeconds, warmupSeconds: REALISTIC_WARMUP, latencySeconds: 0 });
      runs.push({ source, r });
    }
    const statRoutes = (r: ScenarioResult): number =>
      Object.entries(r.requestsByRoute)
        .filter(([route]) => route.includes('/stats'))
        .reduce((a, [, n]) => a + n, 0);
    const pollsPerMinute = (r: ScenarioResult, c: string): number => 60 / (r.polls[c]?.intervalS ?? 30);
    out(
      `## Statistics source: range API against sample envelopes (realistic scenario, simulator 7.6.5)`,
      '',
      whenSrc,
      `${REALISTIC.buckets} buckets (full stat set), ${REALISTIC.nodes} nodes, ${REALISTIC.replications} replications, ${REALISTIC.latencyMs} ms latency, every collector at its default interval; each run ${srcSeconds} s of window A after ${REALISTIC_WARMUP} s of warm-up, scraped every 15 s. \`stats_source\` set on the cluster; answer bytes counted on the wire by a TCP relay in front of the simulator (bench/answer-bytes.ts).`,
      '',
      '| stats_source | Couchbase requests/min | statistics requests/min (`…/stats…` routes) | statistics requests per poll of bucket_stats + xdcr | answer bytes/min | exporter CPU s/min | peak RSS MB | longest bucket_stats / xdcr poll | failed collectors |',
      '|---|---|---|---|---|---|---|---|---|',
      ...runs.map(({ source, r }) => {
        const perPoll = statRoutes(r) / pollsPerMinute(r, 'bucket_stats');
        return `| ${source} | ${fmt(r.requestsPerMinute, 0)} | ${fmt(statRoutes(r), 0)} | ${fmt(perPoll, 1)} | ${fmt((r.answerBytesPerMinute ?? NaN) / 1e6, 2)} MB | ${fmt(r.cpuPerMinute, 2)} | ${fmt(r.peakRssMB, 0)} | ${fmt(r.polls.bucket_stats?.maxS ?? NaN, 2)} s / ${fmt(r.polls.xdcr?.maxS ?? NaN, 2)} s | ${r.failed.length === 0 ? 'none' : r.failed.join(', ')} |`;
      }),
      '',
      `Targets with range: at most 10 statistics requests per poll — ${yes(statRoutes(runs[0]?.r as ScenarioResult) / pollsPerMinute(runs[0]?.r as ScenarioResult, 'bucket_stats') <= 10)}; exporter CPU at most 1.0 s per minute — ${yes((runs[0]?.r.cpuPerMinute ?? Infinity) <= 1.0)}.`,
      `Requests by route (per minute), range: ${topRoutes(runs[0]?.r as ScenarioResult, 6)}; envelope: ${topRoutes(runs[1]?.r as ScenarioResult, 6)}.`,
      '',
    );
  }

  if (process.env.BENCH_SERVICES_COST === '1') {
    // Issue 46, item 12: what the service collectors cost, as an A/B interleaved on one machine (on, off, on, off …).
    const svc = await import('./services-cost.js');
    section('services-cost');
    out(...(await svc.servicesCost({ ...REALISTIC, warmupSeconds: REALISTIC_WARMUP, log, when })));
  }

  if (process.env.BENCH_FOOTPRINT !== '0') {
    // The footprint targets on the runtime the release ships (Node 24, fetched by scripts/node24.sh) and on Node 20 (the
    // bench's own node), side by side, beside the build named by BENCH_BEFORE when there is one.
    const fp = await import('./footprint.js');
    section('footprint');
    const whenFp = when();
    const fpSeconds = env('BENCH_FOOTPRINT_SECONDS', Math.min(REALISTIC_SECONDS, 180));
    const runtimes: Array<ReturnType<typeof fp.runtimeOf>> = [];
    if (process.env.BENCH_FOOTPRINT_NODE24 !== '0') runtimes.push(fp.runtimeOf(execFileSync('bash', [join(ROOT, 'scripts', 'node24.sh')], { encoding: 'utf8' }).trim()));
    if (process.env.BENCH_FOOTPRINT_NODE20 !== '0') runtimes.push(fp.runtimeOf(process.env.BENCH_FOOTPRINT_NODE20_BIN ?? process.execPath));
    const runs: Array<{ name: string; f: Awaited<ReturnType<typeof fp.footprint>> }> = [];
    const before = process.env.BENCH_BEFORE;
    for (const runtime of runtimes) {
      if (before) {
        log(`footprint of ${before} on Node ${runtime.version} …`);
        runs.push({ name: `before (${process.env.BENCH_BEFORE_NAME ?? before})`, f: await fp.footprint(before, runtime, REALISTIC, fpSeconds, REALISTIC_WARMUP) });
      }
      log(`footprint of this build on Node ${runtime.version} …`);
      runs.push({ name: 'this build', f: await fp.footprint(EXPORTER_CLI, runtime, REALISTIC, fpSeconds, REALISTIC_WARMUP) });
    }
    out(...fp.footprintLines(runs, whenFp, fpSeconds, REALISTIC_WARMUP));
  }

  if (process.env.BENCH_SCALE === '1') {
    section('scale');
    const whenScale = when();
    const rows: string[] = [];
    const row = (what: string, r: ScenarioResult, main: string): void => {
      const p = r.polls[main];
      rows.push(
        `| ${what} | ${fmt(r.cpuPerMinute, 2)} s | ${fmt(p ? (r.cpuPerMinute * p.intervalS) / 60 : NaN, 2)} s | ${fmt(p?.maxS, 2)} s / ${p?.intervalS ?? '?'} s | ${fmt(r.peakRssMB)} MB | ${fmt(r.plainBytes / 1024 / 1024, 2)} MB | ${fmt(r.during?.p99)} / ${fmt(r.between?.p99)} / ${fmt(Math.max(r.during?.max ?? 0, r.between?.max ?? 0))} ms | ${fmt(r.ceilingPlain?.p99)} / ${fmt(r.ceilingPlain?.max)} ms | ${fmt(r.requestsPerMinute, 0)} |`,
      );
    };
    for (const buckets of [10, 100, 300, 1000]) {
      const r = await scenario({ label: `${buckets} buckets`, buckets, nodes: 4, replications: 0, latencyMs: 5, statSet: 'full', collectors: ['buckets', 'bucket_stats'], measureSeconds: SCALE_SECONDS, latencySeconds: 30 });
      row(`${buckets} buckets (buckets + bucket_stats, full stat set)`, r, 'bucket_stats');
    }
    // The opt-in collections of the collection thread's heap, where they pay: the largest bucket count.
    for (const every of ['8MiB', '4MiB']) {
      const r = await scenario({ label: `1000 buckets, gc-every ${every}`, buckets: 1000, nodes: 4, replications: 0, latencyMs: 5, statSet: 'full', collectors: ['buckets', 'bucket_stats'], measureSeconds: SCALE_SECONDS, latencySeconds: 30, exporterArgs: ['--collection.gc-every', every] });
      row(`1000 buckets, \`--collection.gc-every ${every}\``, r, 'bucket_stats');
    }
    for (const replications of [50, 200, 500, 1000]) {
      const r = await scenario({ label: `${replications} replications`, buckets: 10, nodes: 4, replications, latencyMs: 5, statSet: 'fixture', collectors: ['xdcr'], concurrency: 16, measureSeconds: SCALE_SECONDS, latencySeconds: 30 });
      row(`${replications} replications (xdcr, concurrency 16)`, r, 'xdcr');
    }
    out(
      '## Scale curve',
      '',
      whenScale,
      '',
      `Each row: its own simulator (4 nodes, 5 ms latency) and exporter through the launcher, ${SCALE_SECONDS} s scraped as by Prometheus, then`,
      '30 s of one-connection plain scrapes. CPU per cycle is CPU per minute times the main collector\'s interval (30 s).',
      'Peak RSS is read at the end of the scraped-as-by-Prometheus window, before the back-to-back scrapes. The ceiling is a',
      'bare Node http server writing the same plain bytes, scraped for 20 s by the same one-connection loop right after',
      'them. The loop and that server each run in a process of their own (bench/probe.ts), and the exporter and the',
      'simulator go on polling beside them: a scrape of that size on this machine under the same background load.',
      '',
      '| scenario | CPU s/min | CPU per cycle | longest poll / interval | peak RSS | body | scrape p99 during / between / max | ceiling p99 / max | Couchbase req/min |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
    );
  }

  if (process.env.BENCH_FLEET === '1') {
    section('fleet');
    const whenFleet = when();
    const fleet = { buckets: 20, nodes: 4, replications: 10, latencyMs: 5, statSet: 'full', clusters: 20, measureSeconds: Math.max(SECONDS, 120) } as const;
    const r = await scenario({ ...fleet, label: 'fleet', latencySeconds: 30 });
    const over = Object.entries(r.polls).filter(([, p]) => p.maxS > p.intervalS);
    const gc = await scenario({ ...fleet, label: 'fleet, gc-every 8MiB', latencySeconds: 0, exporterArgs: ['--collection.gc-every', '8MiB'] });
    out(
      '## Fleet: 20 clusters x 20 buckets x 10 replications, one process',
      '',
      whenFleet,
      '',
      'Twenty cluster entries point at one simulator (20 buckets with the full stat set, 4 nodes, 10 replications, 5 ms',
      'latency): the exporter does the work of twenty clusters; the simulator is shared. Peak RSS is read at the end of',
      'the scraped-as-by-Prometheus window, before 30 s of one-connection back-to-back plain scrapes; the ceiling is taken',
      'as in the scale curve.',
      '',
      '| figure | value |',
      '|---|---|',
      `| CPU, s per minute | ${fmt(r.cpuPerMinute, 2)} |`,
      `| peak RSS | ${fmt(r.peakRssMB)} MB |`,
      `| Couchbase requests per minute | ${fmt(r.requestsPerMinute, 0)} |`,
      `| /metrics size | ${fmt(r.plainBytes / 1024 / 1024, 2)} MB, ${r.series} series |`,
      `| scrape p50 / p99 / max during polls | ${ms(r.during)} |`,
      `| scrape p50 / p99 / max between polls | ${ms(r.between)} |`,
      `| ceiling (bare Node server, same bytes) p50 / p99 / max | ${ms(r.ceilingPlain)} |`,
      `| every poll within its interval | ${over.length === 0 ? 'yes' : `no: ${over.map(([n]) => n).join(', ')}`} |`,
      `| collectors failed at the end | ${r.failed.length ? r.failed.length : 'none'} |`,
      '',
      '| collector | longest poll (any cluster) | interval | requests per poll |',
      '|---|---|---|---|',
      ...pollRows(r),
      '',
      `The same fleet with \`--collection.gc-every 8MiB\`, polled and scraped as by Prometheus only (no back-to-back scrapes): ${fmt(gc.cpuPerMinute, 2)} s of CPU per minute and ${fmt(gc.rssAfterWindowAMB)} MB peak, against ${fmt(r.cpuPerMinute, 2)} s and ${fmt(r.rssAfterWindowAMB)} MB without it at the same point of the run above.`,
      '',
    );
    // The same fleet split over four replicas (`--shard i/4`, one config), run at the same time.
    const whenShards = when();
    const shards = await Promise.all([0, 1, 2, 3].map((i) => scenario({ label: `shard ${i}/4`, buckets: 20, nodes: 4, replications: 10, latencyMs: 5, statSet: 'full', clusters: 20, shard: `${i}/4`, measureSeconds: Math.max(SECONDS, 120), latencySeconds: 30 })));
    const sum = (f: (x: ScenarioResult) => number): number => shards.reduce((n, x) => n + f(x), 0);
    out(
      '### The same fleet over four replicas (`--shard i/4`)',
      '',
      whenShards,
      '',
      'Four exporters, each given the same 20-cluster configuration and `--shard i/4`, each beside its own simulator',
      '(same scenario), all four running at once on this machine: a replica watches the clusters whose name hashes to',
      'its shard (the clusters column says how many).',
      '',
      '| replica | clusters | CPU s/min | peak RSS | scrape p99 during / between | every poll within its interval | collectors failed |',
      '|---|---|---|---|---|---|---|',
      ...shards.map((x) => {
        const late = Object.entries(x.polls).filter(([, p]) => p.maxS > p.intervalS);
        return `| ${x.label} | ${x.clustersSeen} | ${fmt(x.cpuPerMinute, 2)} | ${fmt(x.peakRssMB)} MB | ${fmt(x.during?.p99 ?? NaN)} / ${fmt(x.between?.p99 ?? NaN)} ms | ${late.length === 0 ? 'yes' : `no: ${late.map(([n]) => n).join(', ')}`} | ${x.failed.length || 'none'} |`;
      }),
      `| all four | ${sum((x) => x.clustersSeen)} | ${fmt(sum((x) => x.cpuPerMinute), 2)} | ${fmt(sum((x) => x.peakRssMB))} MB | | | |`,
      '',
    );
  }

  if (process.env.BENCH_HEALTHCHECK !== '0') {
    const hc = await import('./healthcheck.js');
    section('healthcheck');
    out(...hc.healthcheckLines(await hc.benchHealthcheck()));
  }
  if (process.env.BENCH_XDCR === '1') {
    const { benchXdcr } = await import('./xdcr.js');
    section('xdcr');
    const x = await benchXdcr();
    out('## XDCR poll (bench/xdcr.ts)', '', '```', JSON.stringify(x, null, 2), '```', '');
  }

  section('footer');
  out(
    'Re-run: `npm run bench` (BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_LATENCY_SECONDS, BENCH_LOAD_SECONDS, BENCH_FLAGS=1); the long ones:',
    '`BENCH_SCALE=1`, `BENCH_FLEET=1`, with `BENCH_REALISTIC=0` to run only those (the other sections are kept).',
    '',
  );
  const file = join(ROOT, 'bench', 'RESULTS.md');
  const kept = new Map<string, string>();
  try {
    for (const m of readFileSync(file, 'utf8').matchAll(/<!-- section:([\w-]+) -->\n([\s\S]*?)<!-- end:\1 -->\n/g)) kept.set(m[1] as string, m[2] as string);
  } catch {
    /* first run */
  }
  // `memory`, `heap-snapshots` (how the resident memory splits, per thread and mapping; what each thread's heap holds)
  // `reader-ab` and `floor-ab` (bench/ab.ts's pairs: the range reader against JSON.parse on slices; the reshaped
  // statistics floor against its starting commit) are written by hand, never generated: kept; so are
  // `chaos-webhook-bodies` and `chaos-silent-loss-reload`, which `npm run chaos` measures.
  const order = ['header', 'realistic', 'gzip', 'stats-source', 'services-cost', 'reader-ab', 'floor-ab', 'footprint', 'memory', 'heap-snapshots', 'scale', 'fleet', 'healthcheck', 'xdcr', 'chaos-webhook-bodies', 'chaos-silent-loss-reload', 'footer'];
  const body = order
    .map((name) => {
      const fresh = sections.get(name);
      const text = fresh ? `${fresh.join('\n')}\n` : kept.get(name);
      return text === undefined ? '' : `<!-- section:${name} -->\n${text}<!-- end:${name} -->\n`;
    })
    .join('');
  // Everything after the footer (the chaos sections, written by `npm run chaos` and its parts) is kept as it is.
  const chaos = existsSync(file) ? (/<!-- end:footer -->\n([\s\S]*)$/.exec(readFileSync(file, 'utf8'))?.[1] ?? '') : '';
  writeFileSync(file, body + chaos);
  log('wrote bench/RESULTS.md');
}

/** What `npm run bench -- --help` prints: the bench takes no arguments, only the environment's knobs. */
const USAGE = `npm run bench: measures the exporter with real processes and writes bench/RESULTS.md (about 8-10 min by default).
It takes no arguments; sections and durations are chosen with environment variables:
  BENCH_REALISTIC=0 BENCH_STATS_SOURCE=0 BENCH_FOOTPRINT=0 BENCH_HEALTHCHECK=0   skip a default section
  BENCH_SCALE=1 BENCH_FLEET=1 BENCH_XDCR=1 BENCH_FLAGS=1                          add a longer section
  BENCH_SERVICES_COST=1 (BENCH_SERVICES_COST_PAIRS, _SECONDS, _BEFORE)              the service collectors' A/B
  BENCH_SECONDS BENCH_WARMUP_SECONDS BENCH_LATENCY_SECONDS BENCH_LOAD_SECONDS
  BENCH_SCALE_SECONDS BENCH_STATS_SOURCE_SECONDS BENCH_FOOTPRINT_SECONDS           window lengths (s)
  BENCH_EXPORTER_CLI, BENCH_BEFORE, BENCH_BEFORE_NAME                             another build to compare
  BENCH_FOOTPRINT_NODE24=0 BENCH_FOOTPRINT_NODE20=0 BENCH_FOOTPRINT_NODE20_BIN       footprint runtimes
e.g. only the statistics-source comparison, 90 s a source:
  BENCH_REALISTIC=0 BENCH_FOOTPRINT=0 BENCH_HEALTHCHECK=0 BENCH_STATS_SOURCE_SECONDS=90 npm run bench
`;

refuseArguments('bench', USAGE);

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
