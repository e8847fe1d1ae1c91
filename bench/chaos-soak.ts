/**
 * Part `soak` of `npm run chaos` (bench/chaos.ts): new stat names in every bucket stats answer for
 * CHAOS_SOAK_SECONDS; RSS every 10 s (judged on its growth), /metrics latency, series lost by the other
 * collectors, promtool on the last body.
 */
import { fmt, lostBy, percentile, rssGrowth, seriesLostOutside, slope } from './chaos-lib.js';
import { COLLECTORS, VOLATILE, allGreen, log, promtoolCheck, scrapeView, sleep, startPair, stopPair } from './chaos-harness.js';
import { rssMB } from './common.js';
import type { Rows } from './chaos-lib.js';

export interface SoakOutcome {
  rows: Rows;
  rss: Array<[number, number]>;
}

export async function soak(seconds: number, churn = 200): Promise<SoakOutcome> {
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
