/**
 * Chaos part `range` (issue 39, items 2 and 8): range-API answers that bloat. A rewriting proxy between the
 * exporter and the simulator (7.6.5, so `bucket_stats` and `xdcr` read `POST /pools/default/stats/range`) changes
 * every range answer in one of six ways, the cases of the attack round on main:
 *
 *  - `label-1mb`: one fresh 1 MB label value per answer (main: RSS 74 → 418 MiB in 180 s, never given back);
 *  - `label-40`: forty fresh 1 MB label values per answer (main: 1,469 MiB in 95 s);
 *  - `errors-4mb`: ten `errors` entries of 4 MB strings per answer (main: VmHWM 764 MiB, 14 s of CPU in 25 s);
 *  - `series-100k`: 100,000 series in one query's answer (main: 878 MiB and a missed deadline);
 *  - `nested-3m`: 3,000,000 nested arrays (6 MB) in one query's answer (main: 556 MiB);
 *  - `errors-50k`: 50,000 `errors` entries in one query's answer (main: 504 MiB, 800,000 item errors in 25 s and
 *    257 MB of debug log).
 *
 * Each case runs a fresh exporter (default settings, log level debug, bucket_stats and xdcr every 10 s) for
 * CHAOS_RANGE_SECONDS (60) of hostile answers. Per case: peak RSS (VmHWM, /proc), RSS at the end, CPU seconds of
 * the phase, /metrics p99, whether the collectors stayed successful, the item errors and caps counted, and the
 * log's lines and bytes. CHAOS_RANGE_CASES (comma list) picks cases; BENCH_EXPORTER_CLI runs another build's
 * launcher (for the figures before a change). Everything black-box: real processes, HTTP and /proc.
 */
import { createServer, request } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, percentile, sumSeries } from './chaos-lib.js';
import type { Rows } from './chaos-lib.js';
import { log, sleep, start, startSim, stopProc, tallyRange, tempDir, timedGet, waitRangeGreen, writeChaosConfig } from './chaos-harness.js';
import type { Proc, RangeTally } from './chaos-harness.js';
import { cpuSeconds, EXPORTER_CLI, freePort, peakRssBytes, rssMB } from './common.js';

const PHASE_SECONDS = Number(process.env.CHAOS_RANGE_SECONDS ?? 60);
const RANGE_ROUTE = '/pools/default/stats/range';
const MB = 1_000_000;

export interface RangeAnswer {
  data: Array<{ metric: Record<string, unknown>; values: unknown[] }>;
  errors: unknown[];
  [k: string]: unknown;
}

/** A case: a name, what it does (for the table), the figure on main from the issue, and the rewrite of one body. */
interface RangeCase {
  readonly name: string;
  readonly what: string;
  readonly before: string;
  /** The rewritten body of one range answer (an array of query answers), from the simulator's. */
  readonly rewrite: (answers: RangeAnswer[], n: number) => string;
}

/** A fresh string of `bytes` ASCII characters: the answer's count in front, so no two answers repeat one. */
function fresh(n: number, i: number, bytes: number): string {
  const head = `fresh-${n}-${i}-`;
  return head + 'x'.repeat(Math.max(0, bytes - head.length));
}

const BIG_ERROR = 'e'.repeat(4 * MB);
/** series-100k's added entries, per template entry (its text). */
const EXTRA_SERIES = new Map<string, string>();
const NEST = `${'['.repeat(3_000_000)}${']'.repeat(3_000_000)}`;

/** The first query answer that has a series (the template for added ones), else the first. */
function firstWithData(answers: RangeAnswer[]): RangeAnswer | undefined {
  return answers.find((a) => Array.isArray(a.data) && a.data.length > 0) ?? answers[0];
}

export const RANGE_CASES: readonly RangeCase[] = [
  {
    name: 'label-1mb',
    what: 'one fresh 1 MB label value per answer',
    before: 'RSS 74 → 418 MiB in 180 s, never given back',
    rewrite: (answers, n) => {
      const a = firstWithData(answers);
      const e = a?.data[0];
      if (e !== undefined) e.metric['chaos'] = fresh(n, 0, MB);
      return JSON.stringify(answers);
    },
  },
  {
    name: 'label-40',
    what: 'forty fresh 1 MB label values per answer',
    before: '1,469 MiB in 95 s',
    rewrite: (answers, n) => {
      let i = 0;
      for (let round = 0; round < 40 && i < 40; round++) {
        for (const a of answers) {
          if (!Array.isArray(a.data) || a.data.length === 0 || i >= 40) continue;
          const template = a.data[0] as RangeAnswer['data'][number];
          a.data.push({ metric: { ...template.metric, chaos: fresh(n, i, MB) }, values: template.values });
          i++;
        }
        if (i === 0) break;
      }
      return JSON.stringify(answers);
    },
  },
  {
    name: 'errors-4mb',
    what: 'ten `errors` entries of 4 MB strings per answer (about 40 MB)',
    before: 'VmHWM 764 MiB, 14 s of CPU in 25 s, success reported, nothing logged',
    rewrite: (answers, n) => {
      const a = answers[0];
      if (a === undefined) return JSON.stringify(answers);
      a.errors = Array.from({ length: 10 }, (_, i) => ({ node: `chaos${i}.example:8091`, error: '@@BIG@@' }));
      let i = 0;
      return JSON.stringify(answers).replace(/"@@BIG@@"/g, () => JSON.stringify(`${n}-${i++}-${BIG_ERROR}`));
    },
  },
  {
    name: 'series-100k',
    what: '100,000 series in one query\'s answer',
    before: '878 MiB and a missed deadline',
    rewrite: (answers) => {
      const a = firstWithData(answers);
      const template = a?.data[0];
      if (a === undefined || template === undefined) return JSON.stringify(answers);
      // The 100,000 entries' text made once per template (the proxy's own time is not the exporter's).
      const key = JSON.stringify(template.metric);
      let extra = EXTRA_SERIES.get(key);
      if (extra === undefined) {
        const one = JSON.stringify({ metric: { ...template.metric, bucket: '@@B@@' }, values: template.values });
        extra = Array.from({ length: 100_000 }, (_, i) => one.replace('@@B@@', `chaos-bucket-${i}`)).join(',');
        EXTRA_SERIES.set(key, extra);
      }
      (a.data as unknown[]).push('@@EXTRA@@');
      return JSON.stringify(answers).replace('"@@EXTRA@@"', () => extra);
    },
  },
  {
    name: 'nested-3m',
    what: '3,000,000 nested arrays (6 MB) in one query\'s answer',
    before: '556 MiB (docs/security.md said about 100 MB at worst)',
    rewrite: (answers) => {
      const a = firstWithData(answers);
      if (a === undefined) return JSON.stringify(answers);
      (a.data as unknown[]).push('@@NEST@@');
      return JSON.stringify(answers).replace('"@@NEST@@"', () => NEST);
    },
  },
  {
    name: 'errors-50k',
    what: '50,000 `errors` entries in one query\'s answer',
    before: '504 MiB, 800,000 item errors in 25 s, 257 MB of debug log',
    rewrite: (answers, n) => {
      const a = answers[0];
      if (a === undefined) return JSON.stringify(answers);
      a.errors = Array.from({ length: 50_000 }, (_, i) => ({ node: `chaos${i}.example:8091`, error: `answer ${n}: node ${i} did not answer` }));
      return JSON.stringify(answers);
    },
  },
];

/** The range proxy in front of `simUrl`, listening on a free loopback port: the server and its URL. */
export async function listenRangeProxy(simUrl: string, state: { rewrite: ((answers: RangeAnswer[], n: number) => string) | undefined; n: number }): Promise<{ front: Server; frontUrl: string }> {
  const front = rangeProxy(new URL(simUrl), state);
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  return { front, frontUrl: `http://127.0.0.1:${(front.address() as AddressInfo).port}` };
}

/** The proxy: forwards to the simulator; a range answer is rewritten by `state.rewrite` when one is set. */
export function rangeProxy(target: URL, state: { rewrite: ((answers: RangeAnswer[], n: number) => string) | undefined; n: number }): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const rewrite = path === RANGE_ROUTE ? state.rewrite : undefined;
    const headers = { ...req.headers };
    // A rewritten answer is read as text: ask the simulator for it uncompressed.
    if (rewrite !== undefined) delete headers['accept-encoding'];
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (r) => {
      if (rewrite === undefined || r.statusCode !== 200) {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => {
        let body: string;
        try {
          body = rewrite(JSON.parse(Buffer.concat(chunks).toString('utf8')) as RangeAnswer[], state.n++);
        } catch {
          body = Buffer.concat(chunks).toString('utf8');
        }
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      });
      r.on('error', () => res.destroy());
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
}

interface Outcome {
  readonly name: string;
  readonly rows: Rows;
}

async function runCase(c: RangeCase): Promise<Outcome> {
  log(`range case ${c.name}: ${c.what}`);
  const dir = tempDir();
  const { sim, simUrl } = await startSim(3);
  const state: { rewrite: RangeCase['rewrite'] | undefined; n: number } = { rewrite: undefined, n: 0 };
  const { front, frontUrl } = await listenRangeProxy(simUrl, state);
  let exp: Proc | undefined;
  try {
    const cfg = join(dir, 'cbwatch.yml');
    writeChaosConfig(cfg, frontUrl, { intervalS: 10, only: ['buckets', 'bucket_stats', 'xdcr', 'nodes', 'tasks'] });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // Debug: the level at which the attack round counted 257 MB of log lines.
    exp = start(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'debug'], { CHAOS_CB_PASSWORD: 'password' }, EXPORTER_CLI);
    const e = exp;
    let logBytes = 0;
    let logLines = 0;
    let counting = false;
    const count = (d: Buffer): void => {
      if (!counting) return;
      logBytes += d.length;
      for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, i + 1)) logLines++;
    };
    e.child.stdout?.on('data', count);
    e.child.stderr?.on('data', count);
    await waitRangeGreen(url);
    const before = (await timedGet(`${url}/metrics`, 10_000)).body;
    const rss0 = rssMB(e.pid);
    const cpu0 = cpuSeconds(e.pid);
    state.rewrite = c.rewrite;
    counting = true;
    const end = Date.now() + PHASE_SECONDS * 1000;
    const lat: number[] = [];
    let scrapeFailures = 0;
    let rssMax = rss0;
    const seen: RangeTally = { bucket_stats: [0, 0], xdcr: [0, 0] };
    let last = '';
    while (Date.now() < end && e.child.exitCode === null && e.child.signalCode === null) {
      rssMax = Math.max(rssMax, rssMB(e.pid) || 0);
      const t = await timedGet(`${url}/metrics`, 15_000);
      lat.push(t.ms);
      if (t.status !== 200) scrapeFailures++;
      else {
        last = t.body;
        tallyRange(seen, t.body);
      }
      await sleep(Math.max(0, 500 - t.ms));
    }
    counting = false;
    // The exporter's last 256 KiB of log, for a look at what it said (CHAOS_RANGE_LOG: a directory).
    if (process.env.CHAOS_RANGE_LOG) writeFileSync(join(process.env.CHAOS_RANGE_LOG, `${c.name}.log`), e.output());
    const alive = e.child.exitCode === null && e.child.signalCode === null;
    const cpu = alive ? cpuSeconds(e.pid) - cpu0 : NaN;
    const hwm = alive ? peakRssBytes(e.pid) / 1024 / 1024 : NaN;
    const rssEnd = alive ? rssMB(e.pid) : NaN;
    state.rewrite = undefined;
    const itemErrors = sumSeries(last, 'cbwatch_collector_item_errors_total') - sumSeries(before, 'cbwatch_collector_item_errors_total');
    const capped = ['range_series', 'range_cells', 'range_cell_series', 'range_errors', 'range_label_length', 'range_error_text', 'range_nesting', 'range_duplicate_series']
      .map((w) => [w, sumSeries(last, 'cbwatch_collector_capped_total', `what="${w}"`) - sumSeries(before, 'cbwatch_collector_capped_total', `what="${w}"`)] as const)
      .filter(([, v]) => v > 0)
      .map(([w, v]) => `${w} ${v.toLocaleString('en')}`);
    const bucketSeries = last.split('\n').filter((l) => l.startsWith('couchbase_bucket_') && !l.startsWith('couchbase_bucket_info')).length;
    const rows: Rows = [
      [`${c.name}: answers`, `${c.what}; ${state.n} answers rewritten in ${PHASE_SECONDS} s`],
      [`${c.name}: on main (issue 39)`, c.before],
      [
        `${c.name}: now`,
        `peak RSS (VmHWM) ${fmt(hwm)} MiB (RSS before ${fmt(rss0)}, max sampled ${fmt(rssMax)}, at the end ${fmt(rssEnd)} MiB); CPU ${fmt(cpu, 1)} s in ${PHASE_SECONDS} s; ` +
          `/metrics p99 ${fmt(percentile(lat, 99), 0)} ms over ${lat.length} scrapes, ${scrapeFailures} failed; ` +
          `bucket_stats success 1 in ${seen.bucket_stats[0]} scrapes, 0 in ${seen.bucket_stats[1]}; xdcr 1 in ${seen.xdcr[0]}, 0 in ${seen.xdcr[1]}; ` +
          `bucket series at the end ${bucketSeries.toLocaleString('en')}; item errors +${itemErrors.toLocaleString('en')}; capped: ${capped.length ? capped.join(', ') : 'none'}; ` +
          `log ${logLines.toLocaleString('en')} lines, ${fmt(logBytes / MB, 1)} MB (debug); exporter ${alive ? 'alive' : 'EXITED'}`,
      ],
    ];
    return { name: c.name, rows };
  } finally {
    if (exp) await stopProc(exp);
    await stopProc(sim);
    front.closeAllConnections();
    await new Promise<void>((r) => front.close(() => r()));
  }
}

export async function caseRangeBounds(): Promise<Rows> {
  const pick = process.env.CHAOS_RANGE_CASES?.split(',').map((s) => s.trim());
  const rows: Rows = [
    ['setup', `each case: a fresh exporter (default settings, log level debug), bucket_stats, xdcr, buckets, nodes and tasks every 10 s against a 7.6.5 simulator (3 buckets) through a proxy that rewrites every range answer for ${PHASE_SECONDS} s`],
  ];
  for (const c of RANGE_CASES) {
    if (pick !== undefined && !pick.includes(c.name)) continue;
    try {
      rows.push(...(await runCase(c)).rows);
    } catch (err) {
      rows.push([`${c.name}: now`, `could not run: ${(err as Error).message}`]);
    }
  }
  return rows;
}
