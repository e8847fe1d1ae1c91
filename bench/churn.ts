/**
 * Churn soak (issue 13, case 8): a simulated cluster whose every answer carries stat names it never sent before
 * (simulator knob `statChurnPerAnswer`: new bucket stats in every stats envelope, new cluster counters and
 * node `interestingStats` in every /pools/default), polled by the real exporter (`cbwatch run`, a child process
 * started by its launcher) with `bucket_stats` and `nodes` every second. Prints, every BENCH_CHURN_EVERY_S
 * seconds: elapsed time, the exporter's RSS, series on /metrics, and cbwatch_collector_capped_total.
 *
 *   npm run build && npx tsc -p bench/tsconfig.json && node bench/out/bench/churn.js
 *
 * Knobs: BENCH_CHURN_SECONDS (default 600), BENCH_CHURN_PER_ANSWER (200), BENCH_CHURN_BUCKETS (3),
 * BENCH_CHURN_MAX_FAMILIES (max_dynamic_families, default 5000), BENCH_CHURN_EVERY_S (30).
 * RSS on a shared machine is noisy: compare its trend (flat or rising), not single figures.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, rssMB, scrape, startExporterReady, startProcess, stop, value } from './common.js';

const SECONDS = Number(process.env.BENCH_CHURN_SECONDS ?? 600);
const PER_ANSWER = Number(process.env.BENCH_CHURN_PER_ANSWER ?? 200);
const BUCKETS = Number(process.env.BENCH_CHURN_BUCKETS ?? 3);
const MAX_FAMILIES = Number(process.env.BENCH_CHURN_MAX_FAMILIES ?? 5000);
const EVERY_S = Number(process.env.BENCH_CHURN_EVERY_S ?? 30);


async function main(): Promise<void> {
  // The built simulator (dist/), which finds its fixtures from there: the copy compiled into bench/out would not.
  const { createSimulator } = (await import(pathToFileURL(join(ROOT, 'dist', 'simulator', 'index.js')).href)) as typeof import('../src/simulator/index.js');
  const sim = createSimulator({ buckets: BUCKETS, knobs: { statChurnPerAnswer: PER_ANSWER } });
  const simUrl = await sim.listen();
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-churn-'));
  let exporter: ReturnType<typeof startProcess> | undefined;
  try {
    const cfg = join(dir, 'cbwatch.yml');
    const off = ['buckets', 'xdcr', 'tasks', 'autofailover', 'certificates', 'security', 'collections', 'search', 'backup'];
    writeFileSync(
      cfg,
      [
        'clusters:',
        '  - name: churn',
        `    url: ${simUrl}`,
        '    username: Administrator',
        '    password_env: BENCH_CB_PASSWORD',
        `    max_dynamic_families: ${MAX_FAMILIES}`,
        '    collectors:',
        '      bucket_stats: { interval: 1s }',
        '      nodes: { interval: 1s }',
        ...off.map((c) => `      ${c}: { enabled: false }`),
        '',
      ].join('\n'),
    );
    const started0 = await startExporterReady(cfg);
    exporter = started0.exporter;
    const url = started0.url;
    const pid = exporter.pid as number;
    const started = Date.now();
    process.stdout.write(`churn soak: ${PER_ANSWER} new names per answer, ${BUCKETS} buckets, max_dynamic_families ${MAX_FAMILIES}, ${SECONDS}s\n`);
    process.stdout.write('elapsed_s rss_mb series capped_bucket_stats capped_nodes\n');
    for (;;) {
      const text = await scrape(url);
      const series = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
      const ok = (c: string): number => value(text, 'cbwatch_collector_success', `collector="${c}"`) ?? NaN;
      if (ok('bucket_stats') !== 1 || ok('nodes') !== 1) {
        const page = await (await fetch(`${url}/`)).text();
        process.stdout.write(`(a poll failed: bucket_stats ${ok('bucket_stats')}, nodes ${ok('nodes')}: ${/CBW_ERR_[A-Z_]+[^<]{0,160}/.exec(page)?.[0] ?? '?'})\n`);
      }
      const capped = (c: string): number => value(text, 'cbwatch_collector_capped_total', `collector="${c}"`, 'what="dynamic_families"') ?? NaN;
      const elapsed = Math.round((Date.now() - started) / 1000);
      process.stdout.write(`${elapsed} ${rssMB(pid).toFixed(0)} ${series} ${capped('bucket_stats')} ${capped('nodes')}\n`);
      if (elapsed >= SECONDS) break;
      await new Promise((r) => setTimeout(r, EVERY_S * 1000));
    }
  } finally {
    if (exporter) await stop(exporter);
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`churn soak failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
