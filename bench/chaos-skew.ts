/**
 * Chaos part `skew` (issue 39, item 1): one node's clock ahead. A 7.6.5 simulator of 4 nodes and 3 buckets, whose
 * node cb2 stamps its statistics `ahead` in the future (knob nodeFaults.clockAheadMs, set at runtime through
 * POST /_sim/knobs: its Prometheus stamps the value of real time t as t + ahead), read by a fresh exporter
 * (`bucket_stats` and `xdcr` every 10 s, range source). Phases: healthy (30 s), cb2 300 s ahead (60 s), cb2 80
 * years ahead (40 s), healthy again (30 s). Per phase, at its end: the `couchbase_bucket_*` and `couchbase_xdcr_*`
 * series on /metrics, the collectors' success over the phase's scrapes (every second), the nodes counted missing, the future points dropped
 * (cbwatch_stats_future_points_dropped_total, by node), whether any exported sample timestamp is ahead of now, and
 * the warn lines naming the node. On main (issue 39) 300 s ahead took bucket_stats from 1,818 series to 0 and XDCR
 * stat series from 94 to 17, with success 1 and nothing logged above debug, until restart for 80 years.
 * Everything black-box: real processes, HTTP, the exporter's log.
 */
import { fmt, sumSeries } from './chaos-lib.js';
import type { Rows } from './chaos-lib.js';
import { log, sleep, start, stopProc, tallyRange, tempDir, timedGet, waitRangeGreen, waitUntil, writeChaosConfig } from './chaos-harness.js';
import type { Proc, RangeTally } from './chaos-harness.js';
import { EXPORTER_CLI, freePort } from './common.js';
import { join } from 'node:path';

const NODE = 'cb2.cbsim.local:8091';
const YEAR_MS = 365.25 * 24 * 3600 * 1000;

interface Phase {
  readonly name: string;
  readonly aheadMs: number;
  readonly seconds: number;
}

const PHASES: readonly Phase[] = [
  { name: 'healthy', aheadMs: 0, seconds: 30 },
  { name: 'cb2 300 s ahead', aheadMs: 300_000, seconds: 60 },
  { name: 'cb2 80 years ahead', aheadMs: 80 * YEAR_MS, seconds: 40 },
  { name: 'healthy again', aheadMs: 0, seconds: 30 },
];

/** Series of a family prefix on /metrics (not the info series). */
function count(body: string, prefix: string): number {
  return body.split('\n').filter((l) => l.startsWith(prefix) && !l.startsWith(`${prefix}info`)).length;
}

/** Samples on /metrics that carry a timestamp later than `nowMs` (the exposition's third field). */
function futureStamps(body: string, nowMs: number): number {
  let n = 0;
  for (const l of body.split('\n')) {
    if (l.startsWith('#') || l === '') continue;
    const parts = l.slice(l.lastIndexOf('}') + 1).trim().split(' ');
    const ts = Number(parts[1]);
    if (parts.length >= 2 && Number.isFinite(ts) && ts > nowMs) n++;
  }
  return n;
}

export async function caseSkew(): Promise<Rows> {
  const dir = tempDir();
  const simPort = await freePort();
  const sim = start(['simulate', '--port', String(simPort), '--buckets', '3', '--nodes', '4', '--stat-set', 'full']);
  const simUrl = `http://127.0.0.1:${simPort}`;
  let exp: Proc | undefined;
  const rows: Rows = [
    [
      'setup',
      'a fresh exporter (default settings), bucket_stats and xdcr every 10 s, against a 7.6.5 simulator of 4 nodes and 3 buckets (full stat set); node cb2 stamps its statistics ahead of real time by the phase\'s amount (nodeFaults.clockAheadMs); /metrics scraped every second',
    ],
    ['on main (issue 39)', '1 of 4 nodes 300 s ahead: bucket_stats 1,818 series → 0 (the healthy nodes\' too), XDCR stat series 94 → 17, success 1, the landing page ok, nothing logged above debug; 80 years ahead: blind until restart'],
  ];
  try {
    await waitUntil('simulator', async () => ((await fetch(`${simUrl}/_sim/state`)).ok ? true : undefined), 60_000);
    const cfg = join(dir, 'cbwatch.yml');
    writeChaosConfig(cfg, simUrl, { intervalS: 10, only: ['buckets', 'bucket_stats', 'xdcr', 'nodes', 'tasks'] });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    exp = start(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'info'], { CHAOS_CB_PASSWORD: 'password' }, EXPORTER_CLI);
    const e = exp;
    await waitRangeGreen(url);
    for (const p of PHASES) {
      log(`skew phase: ${p.name}`);
      const knob = { nodeFaults: p.aheadMs > 0 ? { [NODE]: { clockAheadMs: p.aheadMs } } : {} };
      await fetch(`${simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(knob) });
      const logFrom = e.output().length;
      const end = Date.now() + p.seconds * 1000;
      const seen: RangeTally = { bucket_stats: [0, 0], xdcr: [0, 0] };
      let last = '';
      let minBucket = Infinity;
      let ahead = 0;
      while (Date.now() < end && e.child.exitCode === null) {
        const t = await timedGet(`${url}/metrics`, 10_000);
        if (t.status === 200) {
          last = t.body;
          tallyRange(seen, t.body);
          minBucket = Math.min(minBucket, count(t.body, 'couchbase_bucket_'));
          ahead = Math.max(ahead, futureStamps(t.body, Date.now() + 1000));
        }
        await sleep(Math.max(0, 1000 - t.ms));
      }
      const dropped = sumSeries(last, 'cbwatch_stats_future_points_dropped_total', NODE.split(':')[0] as string);
      const missing = ['bucket_stats', 'xdcr'].map((c) => `${c} ${fmt(sumSeries(last, 'cbwatch_stats_nodes_missing', `collector="${c}"`), 0)}`).join(', ');
      const warns = e
        .output()
        .slice(logFrom)
        .split('\n')
        .filter((l) => l.includes('"level":"warn"') || l.includes('level=warn')).filter((l) => l.includes('ahead'));
      rows.push([
        p.name,
        `at the end: ${count(last, 'couchbase_bucket_').toLocaleString('en')} bucket series (fewest in a scrape ${Number.isFinite(minBucket) ? minBucket.toLocaleString('en') : '—'}), ` +
          `${count(last, 'couchbase_xdcr_').toLocaleString('en')} XDCR series; bucket_stats success 1 in ${seen.bucket_stats[0]} scrapes, 0 in ${seen.bucket_stats[1]}; ` +
          `xdcr 1 in ${seen.xdcr[0]}, 0 in ${seen.xdcr[1]}; nodes missing (cbwatch_stats_nodes_missing) ${missing}; points from cb2 dropped so far ${fmt(dropped, 0)}; samples stamped ahead of now ${ahead}; ` +
          `warn lines naming a clock ahead ${warns.length}${warns.length > 0 && warns[0]?.includes('cb2') ? ' (naming cb2)' : ''}`,
      ]);
    }
    rows.push(['exporter', e.child.exitCode === null ? 'alive' : `EXITED (${e.child.exitCode})`]);
    return rows;
  } finally {
    if (exp) await stopProc(exp);
    await stopProc(sim);
  }
}
