/**
 * `npm run chaos`: the hardening issue's fault matrix, its named cases and a churn soak, measured black-box.
 * Everything runs as real processes on loopback (`cbwatch simulate`, `cbwatch run` through the launcher, as
 * users run them) and is observed only through HTTP (/metrics, /-/healthy, the simulator's /_sim/ control
 * routes) and /proc. Faults are injected at runtime with `POST /_sim/faults`.
 *
 *  1. matrix (bench/chaos-matrix.ts): every fault variant of every kind the simulator has × every simulator
 *     route a collector requested during warm-up; per cell: exporter alive, /metrics parses (promtool), which
 *     collectors fail, series lost by collectors that do not request the route (must be 0), /metrics p99
 *     during the fault, recovery after the fault is cleared.
 *  2. cases (bench/chaos-cases.ts): sixteen ~60 MB answers; wrk -c1000 on /metrics; a wrong-password flood
 *     with basic auth on; slow-body webhook senders; SIGHUP.
 *  3. soak (bench/chaos-soak.ts): new stat names in every answer for CHAOS_SOAK_SECONDS (default 600): RSS
 *     every 10 s, /metrics p99, series lost.
 * This file reads the knobs, runs the parts asked for and writes the `## Chaos` section of bench/RESULTS.md (other
 * sections untouched). The parts run on bench/chaos-harness.ts (processes, HTTP, the simulator and exporter pair,
 * fault injection); the pure parts (matrix, oracle, tables) are in bench/chaos-lib.ts.
 *
 * Knobs (environment): CHAOS_SOAK_SECONDS, CHAOS_PARTS (comma list of matrix,large,wrk,auth,webhook,sighup,
 * slots (bench/chaos-slots.ts), readers (bench/chaos-readers.ts), clusters (bench/chaos-clusters.ts), config (bench/chaos-config.ts), clock,cron,logpipe (bench/chaos-clock.ts), bounded (bench/chaos-bounded.ts), skew (bench/chaos-skew.ts: one node's clock ahead), webhook-bodies (bench/chaos-webhook-bodies.ts), refused-points and reload-stall (bench/chaos-silent-loss.ts: CHAOS_SILENT_LOSS_SECONDS), range (bench/chaos-range.ts:
 * CHAOS_RANGE_SECONDS, CHAOS_RANGE_CASES), soak; default all), CHAOS_ROUTES / CHAOS_KINDS (substring filters on the matrix; CHAOS_ROUTES=/x exact), CHAOS_LARGE_COUNT (16),
 * CHAOS_LARGE_MB (60), CHAOS_LARGE_FILL (`[]`), CHAOS_NOTE (a line printed under the heading), CHAOS_RESULTS
 * (write the section into another file, for trials).
 * Every loop is bounded in count and time; every child is stopped at the end (SIGKILL after 60 s).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { refuseArguments, ROOT } from './common.js';
import { caseSlots } from './chaos-slots.js';
import { caseReaders } from './chaos-readers.js';
import { caseClusters } from './chaos-clusters.js';
import { caseConfig } from './chaos-config.js';
import { fmt, renderTable, replaceSection } from './chaos-lib.js';
import type { Rows } from './chaos-lib.js';
import { log, startPair, stopPair } from './chaos-harness.js';
import { matrix, renderMatrix } from './chaos-matrix.js';
import { caseAuth, caseLarge, caseSighup, caseWebhook, caseWrk } from './chaos-cases.js';
import { soak } from './chaos-soak.js';
import { caseClockSteps, caseLogDestination, caseScheduleSteps } from './chaos-clock.js';
import { caseBoundedSchemaFailures } from './chaos-bounded.js';
import { caseRangeBounds } from './chaos-range.js';
import { caseSkew } from './chaos-skew.js';
import { caseWebhookBodies } from './chaos-webhook-bodies.js';
import { caseRefusedPoints, caseReloadStall } from './chaos-silent-loss.js';

const SOAK_SECONDS = Number(process.env.CHAOS_SOAK_SECONDS ?? 600);
const PARTS = new Set((process.env.CHAOS_PARTS ?? 'matrix,large,wrk,auth,webhook,sighup,slots,readers,clusters,config,clock,cron,logpipe,bounded,range,skew,webhook-bodies,refused-points,reload-stall,soak').split(',').map((s) => s.trim()));

function rowsTable(rows: Rows): string {
  return renderTable(['figure', 'value'], rows);
}

async function guard<T>(what: string, fn: () => Promise<T>): Promise<T | string> {
  try {
    return await fn();
  } catch (err) {
    log(`${what} failed: ${(err as Error).stack ?? String(err)}`);
    return `${what} could not run: ${(err as Error).message}`;
  }
}

async function main(): Promise<void> {
  const started = new Date();
  let revision = 'unknown';
  try {
    revision = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    /* not a checkout */
  }
  const sections: string[] = [];
  const note = process.env.CHAOS_NOTE;
  sections.push(
    `Produced by \`npm run chaos\` on ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC at revision ${revision}: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}.`,
    ...(note ? ['', `**${note}**`] : []),
    '',
    'Simulator and exporter run as separate processes started through the launcher `bin/cbwatch.js` (its Node flags apply);',
    'measured black-box over HTTP and /proc. Latencies include the harness\'s own scheduling on a loaded machine.',
    '',
  );
  if (PARTS.has('matrix')) {
    const m = await guard('matrix', matrix);
    sections.push('### Fault matrix', '', typeof m === 'string' ? m : renderMatrix(m), '');
  }
  const cases: Array<[string, Rows | string]> = [];
  if (PARTS.has('large')) cases.push(['Sixteen large answers (issue case 1)', await guard('large answers', caseLarge)]);
  if (PARTS.has('wrk') || PARTS.has('webhook') || PARTS.has('sighup')) {
    const token = 'chaos-webhook-token';
    const pair = await guard('pair', () =>
      startPair({
        intervalS: 5,
        extraFile: ['webhooks:', '  sync_gateway:', '    enabled: true', '    token_env: CHAOS_WEBHOOK_TOKEN', '    databases: [db1]'],
        env: { CHAOS_WEBHOOK_TOKEN: token },
      }),
    );
    if (typeof pair === 'string') cases.push(['wrk, webhooks, SIGHUP', pair]);
    else {
      try {
        if (PARTS.has('wrk')) cases.push(['1,000 connections on /metrics (issue case 2)', await guard('wrk', () => caseWrk(pair))]);
        if (PARTS.has('webhook')) cases.push(['Slow-body webhook senders (issue case 4)', await guard('webhook', () => caseWebhook(pair, token))]);
        if (PARTS.has('sighup')) cases.push(['SIGHUP (issue case 6)', await guard('sighup', () => caseSighup(pair))]);
      } finally {
        await stopPair(pair);
      }
    }
  }
  if (PARTS.has('auth')) cases.push(['Wrong-password flood, basic auth on (issue case 2)', await guard('auth', () => caseAuth())]);
  if (PARTS.has('slots')) cases.push(['Slots beside trickling bodies and a wrong-password flood (issue 25, item 2)', await guard('slots', () => caseSlots(log))]);
  if (PARTS.has('readers')) cases.push(['Slow readers, a plain flood and a reload flood beside a gzip scraper (issue 39, item 4)', await guard('readers', caseReaders)]);
  if (PARTS.has('clusters')) cases.push(['1,000 clusters in one process, applied by SIGHUP (issue 39, item 5)', await guard('clusters', caseClusters)]);
  if (PARTS.has('config')) cases.push(['Configuration, signals and methods (issue 39, items 5–7)', await guard('config', caseConfig)]);
  if (PARTS.has('clock')) cases.push(['Wall-clock steps under libfaketime (issue 25, item 3)', await guard('clock', caseClockSteps)]);
  if (PARTS.has('cron')) cases.push(['A cron schedule under wall-clock steps (issue 38)', await guard('cron', caseScheduleSteps)]);
  if (PARTS.has('logpipe')) cases.push(['A failing log destination (issue 25, item 5)', await guard('logpipe', caseLogDestination)]);
  if (PARTS.has('bounded')) cases.push(['Small answers failing their whole schema (issue 25, item 1)', await guard('bounded', caseBoundedSchemaFailures)]);
  if (PARTS.has('range')) cases.push(['Range answers that bloat (issue 39, item 2)', await guard('range', caseRangeBounds)]);
  if (PARTS.has('skew')) cases.push(['One node\'s clock ahead (issue 39, item 1)', await guard('skew', caseSkew)]);
  if (PARTS.has('webhook-bodies')) cases.push(['Hostile webhook bodies beside /-/healthy and /metrics (issue 47, item 5)', await guard('webhook-bodies', caseWebhookBodies)]);
  if (PARTS.has('refused-points')) cases.push(['Every range point refused: counted and named, never silent (issue 47, items 1 and 4)', await guard('refused-points', caseRefusedPoints)]);
  if (PARTS.has('reload-stall')) cases.push(['A refused near-limit file reloaded beside /-/healthy and /metrics (issue 47, item 5)', await guard('reload-stall', caseReloadStall)]);
  if (cases.length) {
    sections.push('### Issue cases', '');
    for (const [title, rows] of cases) sections.push(`#### ${title}`, '', typeof rows === 'string' ? rows : rowsTable(rows), '');
  }
  if (PARTS.has('soak')) {
    const s = await guard('soak', () => soak(SOAK_SECONDS));
    sections.push(`### Churn soak (${SOAK_SECONDS} s)`, '');
    if (typeof s === 'string') sections.push(s, '');
    else sections.push(rowsTable(s.rows), '', `RSS over time (s → MB): ${s.rss.map(([t, mb]) => `${t}→${fmt(mb)}`).join(', ')}`, '');
  }
  sections.push(
    'Re-run: `npm run chaos` (CHAOS_SOAK_SECONDS, default 600; CHAOS_PARTS=matrix,large,wrk,auth,webhook,sighup,slots,readers,clusters,config,clock,cron,logpipe,bounded,range,skew,webhook-bodies,refused-points,reload-stall,soak; CHAOS_ROUTES and',
    'CHAOS_KINDS filter the matrix; CHAOS_LARGE_COUNT/_MB/_FILL; CHAOS_NOTE).',
  );
  const file = process.env.CHAOS_RESULTS ?? join(ROOT, 'bench', 'RESULTS.md');
  let doc = '';
  try {
    doc = readFileSync(file, 'utf8');
  } catch {
    doc = '# Benchmark results\n';
  }
  writeFileSync(file, replaceSection(doc, 'Chaos', sections.join('\n')));
  log(`wrote the Chaos section of ${file}`);
}

refuseArguments(
  'chaos',
  `npm run chaos: hostile clusters, clients and configurations against real processes; writes the Chaos section of bench/RESULTS.md.
It takes no arguments; the environment chooses:
  CHAOS_PARTS        comma list of matrix,large,wrk,auth,webhook,sighup,slots,readers,clusters,config,clock,cron,logpipe,bounded,range,skew,webhook-bodies,refused-points,reload-stall,soak (default all)
  CHAOS_SOAK_SECONDS (600), CHAOS_RANGE_SECONDS (60), CHAOS_RANGE_CASES, CHAOS_ROUTES, CHAOS_KINDS,
  CHAOS_LARGE_COUNT (16), CHAOS_LARGE_MB (60), CHAOS_LARGE_FILL, CHAOS_NOTE, CHAOS_RESULTS (another file)
e.g. one range case: CHAOS_PARTS=range CHAOS_RANGE_CASES=series-100k npm run chaos
`,
);

main().catch((err: unknown) => {
  process.stderr.write(`chaos failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
