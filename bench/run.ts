/**
 * `npm run bench`: the targets of the foundation and XDCR issues, measured with real processes.
 *  - the simulator at 100 buckets with the full stat set and 5 ms latency per request (child process);
 *  - the exporter as `cbwatch run` (child process) polling bucket_stats;
 *  - /metrics under autocannon beside a plain Node http server serving the same bytes (the ceiling);
 *  - the XDCR poll at 200 replications x 20 stats (bench/xdcr.ts).
 * Writes bench/RESULTS.md.
 */
import { existsSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, freePort, load, peakRssBytes, ROOT, scrape, startProcess, stop, value, waitFor } from './common.js';

const BUCKETS = Number(process.env.BENCH_BUCKETS ?? 100);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 5);
const CYCLES = Number(process.env.BENCH_CYCLES ?? 5);
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);

function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

/** One exporter against the simulator: poll cycles, then (unless `pollOnly`) scrapes under load beside the ceiling. */
async function benchBuckets(opts: { v8Defaults?: boolean; pollOnly?: boolean } = {}): Promise<Record<string, number>> {
  const simPort = await freePort();
  const sim = startProcess(['simulate', '--port', String(simPort), '--buckets', String(BUCKETS), '--latency', String(LATENCY_MS), '--stat-set', 'full']);
  const simUrl = `http://127.0.0.1:${simPort}`;
  await waitFor('simulator', async () => ((await fetch(`${simUrl}/pools`)).status > 0 ? true : undefined));
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-bench-'));
  const cfg = join(dir, 'cbwatch.yml');
  const off = ['xdcr', 'nodes', 'tasks', 'autofailover', 'certificates', 'security', 'collections', 'search', 'backup'];
  writeFileSync(
    cfg,
    [
      'clusters:',
      '  - name: bench',
      `    url: ${simUrl}`,
      '    username: Administrator',
      '    password_env: BENCH_CB_PASSWORD',
      '    collectors:',
      '      buckets: { interval: 30s }',
      '      bucket_stats: { interval: 5s }',
      ...off.map((c) => `      ${c}: { enabled: false }`),
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const exporter = startProcess(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'warn'], { BENCH_CB_PASSWORD: 'password' }, opts);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor('exporter ready', async () => ((await fetch(`${url}/-/ready`)).status === 200 ? true : undefined), 120_000);
    // Poll-cycle figures over CYCLES polls of bucket_stats.
    const durations: number[] = [];
    let last = value(await scrape(url), 'cbwatch_collector_last_success_timestamp_seconds', 'collector="bucket_stats"');
    const cpu0 = cpuSeconds(exporter.pid as number);
    let requests = NaN;
    let series = NaN;
    while (durations.length < CYCLES) {
      const text = await waitFor('next bucket_stats poll', async () => {
        const t = await scrape(url);
        const ts = value(t, 'cbwatch_collector_last_success_timestamp_seconds', 'collector="bucket_stats"');
        return ts !== undefined && ts !== last ? t : undefined;
      });
      last = value(text, 'cbwatch_collector_last_success_timestamp_seconds', 'collector="bucket_stats"');
      durations.push(value(text, 'cbwatch_collector_duration_seconds', 'collector="bucket_stats"') ?? NaN);
      requests = value(text, 'cbwatch_collector_requests', 'collector="bucket_stats"') ?? NaN;
      series = value(text, 'cbwatch_collector_series', 'collector="bucket_stats"') ?? NaN;
    }
    const cpuPerCycle = (cpuSeconds(exporter.pid as number) - cpu0) / CYCLES;
    // Peak memory while polling and being scraped (every 100 ms above, more often than any Prometheus).
    const rssPolling = peakRssBytes(exporter.pid as number);
    if (opts.pollOnly) return { cpuPerCycleS: cpuPerCycle, peakRssPollingMB: rssPolling / 1024 / 1024 };
    const body = Buffer.from(await scrape(url));
    // One connection scraping back to back, as a Prometheus server does; then saturation with 10.
    const singleSeconds = Math.max(3, Math.round(LOAD_SECONDS / 2));
    const single = await load(`${url}/metrics`, singleSeconds, 1);
    const singleGzip = await load(`${url}/metrics`, singleSeconds, 1, { 'accept-encoding': 'gzip' });
    const exporterLoad = await load(`${url}/metrics`, LOAD_SECONDS);
    // The ceiling: a bare Node http server sending the same bytes from memory.
    const ceiling = createServer((_req, res) => {
      res.setHeader('content-type', 'text/plain; version=0.0.4; charset=utf-8');
      res.end(body);
    });
    const cport = await freePort();
    await new Promise<void>((r) => ceiling.listen(cport, '127.0.0.1', r));
    const ceilingSingle = await load(`http://127.0.0.1:${cport}/metrics`, singleSeconds, 1);
    const ceilingLoad = await load(`http://127.0.0.1:${cport}/metrics`, LOAD_SECONDS);
    await new Promise<void>((r) => ceiling.close(() => r()));
    const rss = peakRssBytes(exporter.pid as number);
    const sorted = [...durations].sort((a, b) => a - b);
    return {
      buckets: BUCKETS,
      latencyMs: LATENCY_MS,
      pollWallMedianS: sorted[Math.floor(sorted.length / 2)] ?? NaN,
      pollWallMaxS: sorted[sorted.length - 1] ?? NaN,
      requestsPerCycle: requests,
      seriesPerCycle: series,
      cpuPerCycleS: cpuPerCycle,
      peakRssPollingMB: rssPolling / 1024 / 1024,
      peakRssMB: rss / 1024 / 1024,
      metricsBytes: body.length,
      metricsRps: exporterLoad.rps,
      metricsP50Ms: exporterLoad.p50,
      metricsP99Ms: exporterLoad.p99,
      metricsErrors: exporterLoad.errors,
      singleP50Ms: single.p50,
      singleP99Ms: single.p99,
      singleRps: single.rps,
      singleGzipP50Ms: singleGzip.p50,
      singleGzipP99Ms: singleGzip.p99,
      ceilingSingleP99Ms: ceilingSingle.p99,
      ceilingRps: ceilingLoad.rps,
      ceilingP99Ms: ceilingLoad.p99,
    };
  } finally {
    await stop(exporter);
    await stop(sim);
  }
}

async function main(): Promise<void> {
  const started = new Date();
  process.stdout.write(`bench: ${BUCKETS} buckets, ${LATENCY_MS} ms latency, ${CYCLES} cycles, ${LOAD_SECONDS}s load\n`);
  const b = await benchBuckets();
  process.stdout.write(`${JSON.stringify(b, null, 2)}\n`);
  const d = await benchBuckets({ v8Defaults: true, pollOnly: true });
  process.stdout.write(`V8 defaults: ${JSON.stringify(d)}\n`);
  let x: Record<string, number> | undefined;
  try {
    const mod = (await import('./xdcr.js')) as { benchXdcr?: () => Promise<Record<string, number>> };
    if (mod.benchXdcr) {
      x = await mod.benchXdcr();
      process.stdout.write(`${JSON.stringify(x, null, 2)}\n`);
    }
  } catch (err) {
    process.stdout.write(`xdcr bench failed: ${(err as Error).message}\n`);
  }
  const ratio = (b.metricsRps ?? NaN) / (b.ceilingRps ?? NaN);
  const row = (k: string, v: string, target = '', ok = ''): string => `| ${k} | ${v} | ${target} | ${ok} |`;
  const yes = (c: boolean): string => (c ? 'met' : '**missed**');
  const lines = [
    '# Benchmark results',
    '',
    `Produced by \`npm run bench\` on ${started.toISOString().slice(0, 10)}: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}.`,
    'The simulator and the exporter run as separate processes (`cbwatch simulate`, `cbwatch run`, started through the',
    'launcher `bin/cbwatch.js` with its Node flags, as users run them); load comes from autocannon in the bench process,',
    'on loopback. Figures vary from run to run by roughly 10–20% (peak RSS more: it depends on when V8 collects).',
    '',
    `## Bucket stats: ${b.buckets} buckets, full stat set, ${b.latencyMs} ms latency per request`,
    '',
    '| figure | value | target | |',
    '|---|---|---|---|',
    row('bucket_stats poll wall time (median / max of cycles)', `${fmt(b.pollWallMedianS ?? NaN, 3)} s / ${fmt(b.pollWallMaxS ?? NaN, 3)} s`, '< 1 s', yes((b.pollWallMaxS ?? Infinity) < 1)),
    row('requests per cycle', fmt(b.requestsPerCycle ?? NaN, 0)),
    row('series per cycle', fmt(b.seriesPerCycle ?? NaN, 0)),
    row('exporter CPU time per cycle', `${fmt((b.cpuPerCycleS ?? NaN) * 1000, 0)} ms`),
    row('exporter peak RSS, polling and scraped', `${fmt(b.peakRssPollingMB ?? NaN)} MB`, '< 150 MB', yes((b.peakRssPollingMB ?? Infinity) < 150)),
    row('exporter peak RSS, also after the 10-connection load', `${fmt(b.peakRssMB ?? NaN)} MB`),
    row('the same exporter under V8\'s defaults (`node bin/cbwatch.js`): peak RSS polling / CPU per cycle', `${fmt(d.peakRssPollingMB ?? NaN)} MB / ${fmt((d.cpuPerCycleS ?? NaN) * 1000, 0)} ms`),
    row('/metrics size', `${fmt((b.metricsBytes ?? NaN) / 1024)} KiB`),
    row(`/metrics latency p50 / p99, 1 connection (${fmt(b.singleRps ?? NaN, 0)} req/s)`, `${fmt(b.singleP50Ms ?? NaN, 2)} ms / ${fmt(b.singleP99Ms ?? NaN, 2)} ms`, 'p99 < 5 ms', yes((b.singleP99Ms ?? Infinity) < 5)),
    row('/metrics latency p50 / p99, 1 connection, gzip (as Prometheus asks)', `${fmt(b.singleGzipP50Ms ?? NaN, 2)} ms / ${fmt(b.singleGzipP99Ms ?? NaN, 2)} ms`, 'p99 < 5 ms', yes((b.singleGzipP99Ms ?? Infinity) < 5)),
    row('static-bytes ceiling p99, 1 connection', `${fmt(b.ceilingSingleP99Ms ?? NaN, 2)} ms`),
    row(`/metrics latency p50 / p99, 10 connections, ${LOAD_SECONDS}s`, `${fmt(b.metricsP50Ms ?? NaN, 2)} ms / ${fmt(b.metricsP99Ms ?? NaN, 2)} ms`),
    row('/metrics requests per second, 10 connections', fmt(b.metricsRps ?? NaN, 0)),
    row('static-bytes ceiling (plain Node http, 10 connections)', `${fmt(b.ceilingRps ?? NaN, 0)} req/s, p99 ${fmt(b.ceilingP99Ms ?? NaN, 2)} ms`),
    row('throughput vs ceiling', `${fmt(ratio * 100, 0)}%`, '>= 80%', yes(ratio >= 0.8)),
    '',
    'The p99 target is judged on one connection scraping back to back, as a Prometheus server does (plain and gzip);',
    'the static-bytes ceiling\'s p99 on one connection shows what plain Node http takes for the same bytes on this',
    'machine. With 10 connections the latency is queueing behind 2.8 MB bodies, for the ceiling as for cbwatch.',
    'What separates cbwatch\'s one-connection p99 from the ceiling\'s is the scrapes that arrive while a poll\'s answers',
    'are parsed or its new snapshot rendered (~40 ms once per poll); the bench polls every 5 s, six times as often as the',
    'default interval. CPU per cycle includes the bench\'s own scrapes every 100 ms while it waits for the next poll.',
    '',
  ];
  if (x) {
    lines.push(
      `## XDCR: ${x.replications ?? '?'} replications x 20 stats, ${x.nodes ?? '?'} nodes, ${x.latencyMs ?? '?'} ms latency, concurrency ${x.concurrency ?? '?'}`,
      '',
      '| figure | value | target | |',
      '|---|---|---|---|',
      row('xdcr poll wall time', `${fmt(x.pollWallS ?? NaN, 2)} s`, '< 10 s', yes((x.pollWallS ?? Infinity) < 10)),
      row('requests per poll', fmt(x.requestsPerPoll ?? NaN, 0)),
      row('series per poll', fmt(x.series ?? NaN, 0)),
      row('peak RSS', `${fmt(x.peakRssMB ?? NaN)} MB`, '< 200 MB', yes((x.peakRssMB ?? Infinity) < 200)),
      '',
    );
  }
  lines.push('Re-run: `npm run bench` (environment knobs: BENCH_BUCKETS, BENCH_LATENCY_MS, BENCH_CYCLES, BENCH_LOAD_SECONDS).', '');
  // The `## Chaos` section is written by `npm run chaos` (bench/chaos.ts): keep it as it is.
  const results = join(ROOT, 'bench', 'RESULTS.md');
  const chaos = existsSync(results) ? (/\n## Chaos\n[\s\S]*?(?=\n## |$)/.exec(readFileSync(results, 'utf8'))?.[0] ?? '') : '';
  writeFileSync(results, lines.join('\n') + chaos);
  process.stdout.write('wrote bench/RESULTS.md\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
