/**
 * Chaos parts `refused-points` and `reload-stall`: nothing vanishes silently, and the HTTP
 * thread stays free while a refused configuration is reloaded. Everything black-box: real processes, HTTP.
 *
 *  - refused-points: a proxy between the exporter and the simulator rewrites every point of every range answer
 *    (`POST /pools/default/stats/range`) into a refused one, each series in turn: `""`, `" "`, `"0x1F"`, `"+Inf"`,
 *    every timestamp given twice with two values, `"-1"`. Reported: `couchbase_bucket_*` series before, during and after,
 *    `cbwatch_collector_success` of bucket_stats and xdcr, `cbwatch_collector_dropped_values_total` by reason,
 *    `cbwatch_collector_item_errors_total` and the landing page's lines naming an item with no usable point.
 *  - reload-stall: `POST /-/reload` (with `--web.enable-lifecycle`) of a refused near-limit file (a cluster of
 *    40,000 keys anchored once and listed 990 times) back to back, while a prober asks `/-/healthy` and
 *    `/metrics` in turn every 100 ms; quiet phase first.
 * CHAOS_SILENT_LOSS_SECONDS sets each phase's length (20).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, percentile, readCollectors, sumSeries } from './chaos-lib.js';
import type { Rows } from './chaos-lib.js';
import { log, probeRoutes, sleep, start, startSim, stopProc, tempDir, timedGet, waitRangeGreen, waitUntil, writeChaosConfig } from './chaos-harness.js';
import { listenRangeProxy } from './chaos-range.js';
import type { RangeAnswer } from './chaos-range.js';
import type { Proc } from './chaos-harness.js';
import { EXPORTER_CLI, freePort } from './common.js';

const SECONDS = Number(process.env.CHAOS_SILENT_LOSS_SECONDS ?? 20);
const REASONS = ['blank', 'not_a_number', 'non_finite', 'duplicate_time', 'negative', 'unknown_node'];


/** Every point of every series refused, the way chosen by the series' place in the answer. */
function refuseAll(answers: RangeAnswer[]): string {
  let k = 0;
  for (const a of answers) {
    for (const s of a.data ?? []) {
      const way = k++ % 6;
      if (!Array.isArray(s.values)) continue;
      const points = s.values as Array<[unknown, unknown]>;
      if (way === 4) s.values = points.flatMap((p) => [p, [p[0], '987654321']]);
      else {
        const v = ['', ' ', '0x1F', '+Inf', '', '-1'][way] ?? '';
        s.values = points.map((p) => [p[0], v]);
      }
    }
  }
  return JSON.stringify(answers);
}


const bucketSeries = (body: string): number => body.split('\n').filter((l) => l.startsWith('couchbase_bucket_') && !l.startsWith('couchbase_bucket_info')).length;

async function snapshot(url: string): Promise<string> {
  const m = (await timedGet(`${url}/metrics`, 15_000)).body;
  const page = (await timedGet(`${url}/`, 15_000)).body;
  const v = readCollectors(m);
  const dropped = REASONS.map((r) => [r, sumSeries(m, 'cbwatch_collector_dropped_values_total', `reason="${r}"`)] as const)
    .filter(([, n]) => n > 0)
    .map(([r, n]) => `${r} ${n.toLocaleString('en')}`);
  const text = page.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
  const named = [...text.matchAll(/[^.;]{0,120}no usable point/g)].map((x) => x[0].trim());
  return (
    `couchbase_bucket_* series ${bucketSeries(m).toLocaleString('en')}; success bucket_stats ${v.success.get('bucket_stats') ?? 'absent'}, xdcr ${v.success.get('xdcr') ?? 'absent'}; ` +
    `dropped values (total so far) ${dropped.join(', ') || 'none'}; item errors (total so far) ${sumSeries(m, 'cbwatch_collector_item_errors_total').toLocaleString('en')}; ` +
    `landing page mentions of "no usable point" ${named.length}${named.length ? ` ("${named.slice(0, 4).join('"; "')}")` : ''}`
  );
}

export async function caseRefusedPoints(): Promise<Rows> {
  log(`case refused-points: every range point refused for ${SECONDS} s`);
  const dir = tempDir();
  const { sim, simUrl } = await startSim(3);
  const state: { rewrite: ((answers: RangeAnswer[]) => string) | undefined; n: number } = { rewrite: undefined, n: 0 };
  const { front, frontUrl } = await listenRangeProxy(simUrl, state);
  let exp: Proc | undefined;
  try {
    const cfg = join(dir, 'cbwatch.yml');
    writeChaosConfig(cfg, frontUrl, { intervalS: 5, only: ['buckets', 'bucket_stats', 'xdcr', 'nodes', 'tasks'] });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    exp = start(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'info'], { CHAOS_CB_PASSWORD: 'password' }, EXPORTER_CLI);
    await waitRangeGreen(url);
    await sleep(6_000);
    const rows: Rows = [
      ['setup', `a fresh exporter (buckets, bucket_stats, xdcr, nodes, tasks every 5 s) against a 3-bucket simulator through a proxy; for ${SECONDS} s every point of every range answer is refused (per series in turn: "", " ", "0x1F", "+Inf", each timestamp twice with two different values, "-1"), then ${SECONDS} s unchanged`],
      ['before', await snapshot(url)],
    ];
    state.rewrite = refuseAll;
    await sleep(SECONDS * 1000);
    rows.push([`after ${SECONDS} s of refused points (${state.n} answers rewritten)`, await snapshot(url)]);
    state.rewrite = undefined;
    await sleep(SECONDS * 1000);
    rows.push([`${SECONDS} s after the answers are whole again`, await snapshot(url)]);
    rows.push(['on main before (issue 47)', 'bucket_stats series 399 → 42, cbwatch_collector_success 1, landing "ok … 0 series", nothing logged or counted']);
    rows.push(['exporter alive afterwards', (await timedGet(`${url}/-/healthy`)).status === 200 ? 'yes' : 'no']);
    return rows;
  } finally {
    if (exp) await stopProc(exp);
    await stopProc(sim);
    front.closeAllConnections();
    await new Promise<void>((r) => front.close(() => r()));
  }
}

function describe(values: readonly number[]): string {
  if (values.length === 0) return 'no answer';
  return `p50 ${fmt(percentile(values, 50), 1)} ms, p99 ${fmt(percentile(values, 99), 1)} ms, max ${fmt(Math.max(...values), 1)} ms (${values.length} probes)`;
}

export async function caseReloadStall(): Promise<Rows> {
  log(`case reload-stall: a refused near-limit file reloaded back to back, ${SECONDS} s a phase`);
  const dir = tempDir();
  const { sim, simUrl } = await startSim(3);
  const cfg = join(dir, 'cbwatch.yml');
  writeChaosConfig(cfg, simUrl, { intervalS: 5 });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const exp = start(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--web.enable-lifecycle', '--log.level', 'info'], { CHAOS_CB_PASSWORD: 'password' }, EXPORTER_CLI);
  try {
    await waitUntil('exporter healthy', async () => ((await fetch(`${url}/-/healthy`)).ok ? true : undefined), 60_000);
    await sleep(6_000);
    const entries = Array.from({ length: 40_000 }, (_, i) => `k${i}: 1`).join(', ');
    const alias = `x-cluster: &big { url: "${simUrl}", ${entries} }\nclusters: [${Array(990).fill('*big').join(', ')}]\n`;
    const rows: Rows = [
      ['load', `POST /-/reload back to back (one at a time) of a refused near-limit file (${fmt(Buffer.byteLength(alias) / 1024)} KB: a cluster of 40,000 unknown keys anchored once and listed 990 times); a prober asks /-/healthy and /metrics in turn every 100 ms; ${SECONDS} s a phase; every collector every 5 s against a 3-bucket simulator`],
    ];
    for (const hostile of [false, true]) {
      if (hostile) writeFileSync(cfg, alias);
      const end = Date.now() + SECONDS * 1000;
      const statuses = new Map<number, number>();
      const reloader = async (): Promise<void> => {
        while (hostile && Date.now() < end) {
          const t0 = Date.now();
          const s = await fetch(`${url}/-/reload`, { method: 'POST', signal: AbortSignal.timeout(60_000) }).then((r) => r.arrayBuffer().then(() => r.status), () => 0);
          statuses.set(s, (statuses.get(s) ?? 0) + 1);
          if (Date.now() - t0 < 50) await sleep(50);
        }
      };
      const [{ healthy, metrics, failed }] = await Promise.all([probeRoutes(url, end), reloader()]);
      const name = hostile ? 'reloads of the refused file' : 'quiet (no reloads)';
      rows.push([`${name}: /-/healthy`, describe(healthy)]);
      rows.push([`${name}: /metrics`, describe(metrics)]);
      if (failed) rows.push([`${name}: probes without a 200`, String(failed)]);
      if (hostile) rows.push([`${name}: reloads answered`, [...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${n} × ${s === 0 ? 'no answer' : s}`).join(', ')]);
    }
    const m = (await timedGet(`${url}/metrics`, 30_000)).body;
    rows.push(['cbwatch_config_reload_failures_total afterwards', /^cbwatch_config_reload_failures_total (\S+)$/m.exec(m)?.[1] ?? 'absent']);
    rows.push(['on main before (issue 47)', 'a refused near-limit file stalls /metrics for 10 s']);
    rows.push(['exporter alive afterwards', (await timedGet(`${url}/-/healthy`)).status === 200 ? 'yes' : 'no']);
    return rows;
  } finally {
    await stopProc(exp);
    await stopProc(sim);
  }
}
