/**
 * The XDCR target of issue 3: the simulator with 200 replications x 20 stats on 3 nodes, 5 ms latency per
 * request (`cbwatch simulate`, a child process), and the exporter (`cbwatch run`, a child process, only the
 * `xdcr` collector, concurrency 16) polling it with the real client. Measures, over several polls:
 *  - the wall time of a poll (cbwatch_collector_duration_seconds): the first one (full minute of samples per
 *    stat) and the following ones (haveTStamp: only the new samples);
 *  - requests per poll (cbwatch_collector_requests) of every poll measured: the last, the most and the mean.
 *    With the default stat tiers (4 fast stats every poll, 16 slow ones once per 4 min, spread) a poll asks
 *    2 + replications x (4 + ceil(16 / ceil(240 s / interval))) at most; BENCH_XDCR_SLOW_STATS_INTERVAL=15s
 *    (no longer than the interval) turns the tiers off: 2 + replications x 20, the figure before the tiers;
 *  - series per poll and the exporter's peak RSS (VmHWM).
 * `bench/run.ts` calls benchXdcr() and writes the figures into bench/RESULTS.md.
 * Knobs: BENCH_XDCR_REPLICATIONS, BENCH_XDCR_BUCKETS, BENCH_XDCR_CYCLES, BENCH_XDCR_INTERVAL_S,
 * BENCH_XDCR_SLOW_STATS_INTERVAL (a duration; default the collector's 4m), BENCH_LATENCY_MS.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, peakRssBytes, scrape, startExporterReady, startProcess, stop, value, waitFor } from './common.js';

/**
 * Scrape until `pick` returns a value, once a second. Not common.ts's waitFor (every 100 ms): the exposition of
 * 200 replications is about 3 MB, and ten scrapes a second would measure the bench's own load on the exporter's
 * memory rather than the poll's (Prometheus scrapes every 15-30 s).
 */
async function nextScrape<T>(url: string, what: string, pick: (text: string) => T | undefined, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = pick(await scrape(url));
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

const REPLICATIONS = Number(process.env.BENCH_XDCR_REPLICATIONS ?? 200);
const BUCKETS = Number(process.env.BENCH_XDCR_BUCKETS ?? 10);
const NODES = 3;
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 5);
const CONCURRENCY = 16;
const CYCLES = Number(process.env.BENCH_XDCR_CYCLES ?? 4);
const INTERVAL_S = Number(process.env.BENCH_XDCR_INTERVAL_S ?? 15);
const SLOW_STATS_INTERVAL = process.env.BENCH_XDCR_SLOW_STATS_INTERVAL;

/** Stat requests per replication of the busiest poll, by the rule of docs/configuration.md (4 fast, 16 slow). */
function expectedStatsPerPoll(intervalS: number, slowS: number): number {
  const every = Math.max(1, Math.ceil(slowS / intervalS));
  return every === 1 ? 20 : 4 + Math.ceil(16 / every);
}

function seconds(d: string): number {
  const m = /^(\d+)(s|m)$/.exec(d);
  if (!m) throw new Error(`BENCH_XDCR_SLOW_STATS_INTERVAL: use e.g. 15s or 3m, not ${d}`);
  return Number(m[1]) * (m[2] === 'm' ? 60 : 1);
}

const XDCR = 'collector="xdcr"';

export async function benchXdcr(): Promise<Record<string, number>> {
  const simPort = await freePort();
  const sim = startProcess([
    'simulate',
    '--port',
    String(simPort),
    '--replications',
    String(REPLICATIONS),
    '--buckets',
    String(BUCKETS),
    '--nodes',
    String(NODES),
    '--latency',
    String(LATENCY_MS),
  ]);
  const simUrl = `http://127.0.0.1:${simPort}`;
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-bench-xdcr-'));
  let exporter: ReturnType<typeof startProcess> | undefined;
  try {
    await waitFor('simulator', async () => ((await fetch(`${simUrl}/pools`)).status > 0 ? true : undefined));
    const cfg = join(dir, 'cbwatch.yml');
    const off = ['buckets', 'bucket_stats', 'nodes', 'tasks', 'autofailover', 'certificates', 'security', 'collections', 'search', 'backup'];
    writeFileSync(
      cfg,
      [
        'clusters:',
        '  - name: bench',
        `    url: ${simUrl}`,
        '    username: Administrator',
        '    password_env: BENCH_CB_PASSWORD',
        `    concurrency: ${CONCURRENCY}`,
        '    collectors:',
        `      xdcr: { interval: ${INTERVAL_S}s${SLOW_STATS_INTERVAL === undefined ? '' : `, slow_stats_interval: ${SLOW_STATS_INTERVAL}`} }`,
        ...off.map((c) => `      ${c}: { enabled: false }`),
        '',
      ].join('\n'),
    );
    const started0 = await startExporterReady(cfg);
    exporter = started0.exporter;
    const url = started0.url;

    const durations: number[] = [];
    let requests = NaN;
    const perPoll: number[] = [];
    let series = NaN;
    let last: number | undefined;
    let bytes = NaN;
    while (durations.length < CYCLES) {
      const text = await nextScrape(
        url,
        'next xdcr poll',
        (t) => {
          if (value(t, 'cbwatch_collector_success', XDCR) === 0) throw new Error('the xdcr poll failed');
          const ts = value(t, 'cbwatch_collector_last_success_timestamp_seconds', XDCR);
          return ts !== undefined && ts !== last ? t : undefined;
        },
        (INTERVAL_S + 60) * 1000,
      );
      bytes = text.length;
      last = value(text, 'cbwatch_collector_last_success_timestamp_seconds', XDCR);
      durations.push(value(text, 'cbwatch_collector_duration_seconds', XDCR) ?? NaN);
      requests = value(text, 'cbwatch_collector_requests', XDCR) ?? NaN;
      perPoll.push(requests);
      series = value(text, 'cbwatch_collector_series', XDCR) ?? NaN;
    }
    const later = durations.slice(1).sort((a, b) => a - b);
    return {
      replications: REPLICATIONS,
      buckets: BUCKETS,
      nodes: NODES,
      latencyMs: LATENCY_MS,
      concurrency: CONCURRENCY,
      // The worst poll: the budget the 10 s target is about.
      pollWallS: Math.max(...durations),
      firstPollWallS: durations[0] ?? NaN,
      pollWallMedianS: later[Math.floor(later.length / 2)] ?? NaN,
      requestsPerPoll: requests,
      requestsPerPollMax: Math.max(...perPoll),
      requestsPerPollMean: perPoll.reduce((a, b) => a + b, 0) / perPoll.length,
      // The most a poll may ask: 2 lists + replications x the busiest poll's stats.
      expectedRequestsPerPoll: 2 + REPLICATIONS * expectedStatsPerPoll(INTERVAL_S, seconds(SLOW_STATS_INTERVAL ?? '4m')),
      requestsPerPollWithoutTiers: 2 + REPLICATIONS * 20,
      series,
      metricsBytes: bytes,
      peakRssMB: peakRssBytes(exporter.pid as number) / 1024 / 1024,
    };
  } finally {
    if (exporter) await stop(exporter);
    await stop(sim);
    rmSync(dir, { recursive: true, force: true });
  }
}
