/**
 * Part `matrix` of `npm run chaos` (bench/chaos.ts): every fault variant of every kind the simulator has × every
 * simulator route a collector requested during warm-up. Per cell: exporter alive, /metrics parses (promtool),
 * which collectors fail, series lost by collectors that do not request the route (must be 0), /metrics p99
 * during the fault, recovery after the fault is cleared. The pure parts (the matrix, the oracle) are in
 * chaos-lib.ts.
 */
import { FAULT_VARIANTS, MATRIX_MAX_RESPONSE_BYTES, buildMatrix, fmt, lostBy, percentile, renderTable, routeKey, seriesLostOutside, sumSeries } from './chaos-lib.js';
import type { CollectorView, MatrixCell, SimRouteRef } from './chaos-lib.js';
import { COLLECTORS, VOLATILE, addFault, allGreen, clearFaults, faultHits, json, log, promtoolCheck, scrapeView, sleep, startPair, stopPair, timedGet, waitUntil } from './chaos-harness.js';
import type { Pair } from './chaos-harness.js';
import type { FaultKind } from '../src/simulator/index.js';

const MATRIX_INTERVAL_S = 2;

export interface CellResult {
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

export interface MatrixOutcome {
  results: CellResult[];
  notRequested: SimRouteRef[];
  routes: SimRouteRef[];
  kinds: FaultKind[];
  exporterExit: string;
  noise: string[];
}

export async function matrix(): Promise<MatrixOutcome> {
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

export function renderMatrix(m: MatrixOutcome): string {
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
