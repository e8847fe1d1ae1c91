/**
 * The hardening issue's named cases in `npm run chaos` (bench/chaos.ts), each returning the rows of its table:
 * sixteen ~60 MB answers (`large`), wrk -c1000 on /metrics (`wrk`), a wrong-password flood with basic auth on
 * (`auth`), slow-body webhook senders (`webhook`) and SIGHUP (`sighup`). Knobs: CHAOS_LARGE_COUNT (16),
 * CHAOS_LARGE_MB (60), CHAOS_LARGE_FILL (`[]`).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { fmt, percentile, readCollectors, sumSeries } from './chaos-lib.js';
import type { Rows } from './chaos-lib.js';
import {
  COLLECTORS,
  addFault,
  children,
  json,
  log,
  scrapeView,
  sleep,
  startExporter,
  startPair,
  startSim,
  stopPair,
  stopProc,
  tempDir,
  timedGet,
  waitUntil,
} from './chaos-harness.js';
import { rssMB } from './common.js';
import { wrkMissing } from './gzip-wrk.js';
import type { Pair } from './chaos-harness.js';

const LARGE_COUNT = Number(process.env.CHAOS_LARGE_COUNT ?? 16);
const LARGE_MB = Number(process.env.CHAOS_LARGE_MB ?? 60);
const LARGE_FILL = process.env.CHAOS_LARGE_FILL ?? '[]';

/** Sample a URL back to back (every `everyMs`) until `stopAt()`; latencies, timeouts as the time waited. */
async function sampler(url: string, everyMs: number, until: () => boolean, headers: Record<string, string> = {}, timeoutMs = 5_000): Promise<{ lat: number[]; failures: number }> {
  const lat: number[] = [];
  let failures = 0;
  const hardEnd = Date.now() + 15 * 60_000;
  while (!until() && Date.now() < hardEnd) {
    const t = await timedGet(url, timeoutMs, headers);
    lat.push(t.ms);
    if (t.status !== 200) failures++;
    await sleep(Math.max(0, everyMs - t.ms));
  }
  return { lat, failures };
}

export async function caseLarge(): Promise<Rows> {
  log(`case: ${LARGE_COUNT} answers of ${LARGE_MB} MB (${LARGE_FILL}) on bucket stats`);
  const pair = await startPair({ buckets: LARGE_COUNT, intervalS: 10, only: ['buckets', 'bucket_stats', 'autofailover'] });
  const rows: Rows = [];
  try {
    const rss0 = rssMB(pair.exp.pid);
    await addFault(pair.simUrl, { match: '/pools/default/buckets/:bucket/stats', kind: 'oversize', bytes: LARGE_MB * 1_000_000, fill: LARGE_FILL, times: LARGE_COUNT });
    const t0 = Date.now();
    let recoveredAt = 0;
    let greenAt = 0;
    let done = false;
    let rssMax = rss0;
    const rssTimer = setInterval(() => (rssMax = Math.max(rssMax, rssMB(pair.exp.pid) || 0)), 500);
    const until = (): boolean => done;
    const healthy = sampler(`${pair.url}/-/healthy`, 100, until);
    const metrics = sampler(`${pair.url}/metrics`, 100, until);
    let sawFailure = false;
    // Upstream "recovers" when the simulator has served the last large answer (the rule is then gone).
    const watch = (async () => {
      const end = Date.now() + 5 * 60_000;
      while (Date.now() < end) {
        const rules = await json<{ rules: unknown[] }>(`${pair.simUrl}/_sim/faults`).catch(() => ({ rules: [1] }));
        if (recoveredAt === 0 && rules.rules.length === 0) recoveredAt = Date.now();
        const { t, view } = await scrapeView(pair.url);
        if (t.status === 200 && view.success.get('bucket_stats') === 0) sawFailure = true;
        if (recoveredAt > 0 && t.status === 200 && view.success.get('bucket_stats') === 1 && (view.lastSuccess.get('bucket_stats') ?? 0) * 1000 > recoveredAt) {
          greenAt = Date.now();
          return;
        }
        await sleep(250);
      }
    })();
    await watch;
    done = true;
    clearInterval(rssTimer);
    const h = await healthy;
    const m = await metrics;
    const stopped = await stopProc(pair.exp);
    rows.push(
      ['answers', `${LARGE_COUNT} × ${LARGE_MB} MB of \`${LARGE_FILL},\` (bucket_stats every 10 s, ${LARGE_COUNT} buckets, default caps: 64 MiB and 4,000,000 JSON values per answer)`],
      ['served in', recoveredAt ? `${fmt((recoveredAt - t0) / 1000, 1)} s` : 'not all served within 5 min'],
      ['/-/healthy latency max (p99), failures or 5 s timeouts', `${fmt(Math.max(...h.lat), 0)} ms (${fmt(percentile(h.lat, 99), 0)} ms), ${h.failures} of ${h.lat.length}`],
      ['/metrics latency max (p99), failures or 5 s timeouts', `${fmt(Math.max(...m.lat), 0)} ms (${fmt(percentile(m.lat, 99), 0)} ms), ${m.failures} of ${m.lat.length}`],
      ['RSS before / max', `${fmt(rss0)} MB / ${fmt(rssMax)} MB`],
      ['bucket_stats reported a failure', sawFailure ? 'yes' : 'no'],
      ['recovery after the upstream recovered', greenAt ? `${fmt((greenAt - recoveredAt) / 1000, 1)} s` : 'not within the 5 min bound'],
      ['SIGTERM to exit', `${fmt(stopped.seconds, 1)} s (${stopped.how})`],
    );
  } finally {
    await stopPair(pair);
  }
  return rows;
}

/** Collectors seen failing in scrapes every `everyMs` while `until()` is false; plus the requests that timed out. */
async function watchCollectors(
  url: string,
  collectors: readonly string[],
  until: () => boolean,
  headers: Record<string, string> = {},
): Promise<{ failed: Set<string>; absent: Set<string>; lat: number[]; scrapeFailures: number; failures: string }> {
  const kinds = new Map<string, number>();
  const failed = new Set<string>();
  const absent = new Set<string>();
  const lat: number[] = [];
  let scrapeFailures = 0;
  const hardEnd = Date.now() + 10 * 60_000;
  while (!until() && Date.now() < hardEnd) {
    const t = await timedGet(`${url}/metrics`, 15_000, headers);
    lat.push(t.ms);
    if (t.status !== 200) {
      scrapeFailures++;
      const kind = `${t.status === 0 ? (t.error ?? 'no answer') : `status ${t.status} ${JSON.stringify(t.body.trim().slice(0, 60))}`} in ${fmt(t.ms, 0)} ms`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    } else {
      const v = readCollectors(t.body);
      for (const c of collectors) {
        if (v.success.get(c) === 0) failed.add(c);
        else if (!v.success.has(c)) absent.add(c);
      }
    }
    await sleep(Math.max(0, 250 - t.ms));
  }
  const failures = [...kinds].map(([k, n]) => (n > 1 ? `${n} × ${k}` : k)).join('; ');
  return { failed, absent, lat, scrapeFailures, failures };
}

/** wrk as a child process (asynchronous: the harness keeps sampling while it runs); killed after seconds + 60. */
async function wrk(args: string[], seconds: number): Promise<{ rps: number; non2xx: number; socketErrors: string; latency: string }> {
  // Not installed: a clear error for the case's row (guard()), not an unhandled spawn error ending the whole run.
  const missing = wrkMissing();
  if (missing !== undefined) throw new Error(missing);
  const child = spawn('wrk', [...args, '-d', `${seconds}s`], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', () => undefined);
  const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 60) * 1000);
  await new Promise<void>((resolve) => child.once('exit', () => resolve()));
  clearTimeout(timer);
  children.delete(child);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors:([^\n]*)/.exec(out)?.[1]?.trim() ?? 'none';
  const latency = /Latency\s+(\S+)\s+(\S+)\s+(\S+)/.exec(out);
  return { rps, non2xx, socketErrors, latency: latency ? `avg ${latency[1]}, max ${latency[3]}` : 'n/a' };
}

const TIMEOUT_CODES = ['code="timeout"', 'code="aborted"', 'code="network"'];
function timeouts(body: string): number {
  return TIMEOUT_CODES.reduce((a, c) => a + sumSeries(body, 'cbwatch_couchbase_requests_total', c), 0);
}

export async function caseWrk(pair: Pair, seconds = 20): Promise<Rows> {
  log(`case: wrk -c1000 on /metrics for ${seconds} s`);
  const before = (await timedGet(`${pair.url}/metrics`)).body;
  let done = false;
  const watching = watchCollectors(pair.url, COLLECTORS, () => done);
  const w = await wrk(['-t2', '-c1000', '--timeout', '10s', `${pair.url}/metrics`], seconds);
  done = true;
  const seen = await watching;
  const after = (await timedGet(`${pair.url}/metrics`, 30_000)).body;
  return [
    ['load', `wrk -t2 -c1000 ${seconds} s on /metrics, every collector polling every 5 s`],
    ['wrk', `${fmt(w.rps, 0)} req/s, latency ${w.latency}, non-2xx ${w.non2xx}, socket errors ${w.socketErrors}`],
    ['collectors seen failing (success 0 in a scrape every 250 ms beside the load)', seen.failed.size ? [...seen.failed].join(', ') : 'none'],
    ...(seen.absent.size ? ([['collectors missing from a scrape', [...seen.absent].join(', ')]] as Rows) : []),
    ['requests to Couchbase timed out or aborted during the load', String(timeouts(after) - timeouts(before))],
    ['side scrape latency p99 / max, failures', `${fmt(percentile(seen.lat, 99), 0)} ms / ${fmt(Math.max(...seen.lat), 0)} ms, ${seen.scrapeFailures} of ${seen.lat.length}${seen.failures ? ` (${seen.failures})` : ''}`],
    // Refused side scrapes with "no collector failing" could otherwise hide an exporter that went away.
    ['exporter after the load', pair.exp.child.exitCode === null && pair.exp.child.signalCode === null ? 'alive' : `exited (code ${pair.exp.child.exitCode ?? 'none'}, signal ${pair.exp.child.signalCode ?? 'none'})`],
  ];
}

export async function caseAuth(seconds = 20): Promise<Rows> {
  log(`case: wrong-password flood, 32 connections for ${seconds} s`);
  const { sim, simUrl } = await startSim(3);
  const dir = tempDir();
  const right = 'chaos-right-password';
  writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  prometheus: ${bcrypt.hashSync(right, 10)}\n`);
  const basic = (p: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`prometheus:${p}`).toString('base64')}` });
  const { exp, url } = await startExporter(simUrl, { intervalS: 5, exporterArgs: ['--web.config.file', join(dir, 'web.yml')] }, dir);
  try {
    await waitUntil('all green (with auth)', async () => {
      const v = readCollectors((await timedGet(`${url}/metrics`, 5_000, basic(right))).body);
      return COLLECTORS.every((c) => v.success.get(c) === 1) ? true : undefined;
    }, 120_000, 250);
    const wrong = (await timedGet(`${url}/metrics`, 5_000, basic('wrong'))).status;
    const before = (await timedGet(`${url}/metrics`, 5_000, basic(right))).body;
    let done = false;
    const watching = watchCollectors(url, COLLECTORS, () => done, basic(right));
    const w = await wrk(['-t2', '-c32', '--timeout', '10s', '-H', `Authorization: ${basic('wrong-password').authorization}`, `${url}/metrics`], seconds);
    done = true;
    const seen = await watching;
    const after = (await timedGet(`${url}/metrics`, 30_000, basic(right))).body;
    return [
      ['load', `wrk -t2 -c32 ${seconds} s on /metrics with a wrong password (bcrypt cost 10), every collector polling every 5 s`],
      ['a wrong password gets', String(wrong)],
      ['wrk', `${fmt(w.rps, 0)} req/s, latency ${w.latency}, non-2xx ${w.non2xx}, socket errors ${w.socketErrors}`],
      ['real scrapes (right password, every 250 ms) p99 / max, failures', `${fmt(percentile(seen.lat, 99), 0)} ms / ${fmt(Math.max(...seen.lat), 0)} ms, ${seen.scrapeFailures} of ${seen.lat.length}`],
      ['collectors seen failing (success 0)', seen.failed.size ? [...seen.failed].join(', ') : 'none'],
      ...(seen.absent.size ? ([['collectors missing from a scrape', [...seen.absent].join(', ')]] as Rows) : []),
      ['requests to Couchbase timed out or aborted during the flood', String(timeouts(after) - timeouts(before))],
    ];
  } finally {
    await stopProc(exp);
    await stopProc(sim);
  }
}

export async function caseWebhook(pair: Pair, token: string, senders = 80, holdS = 30): Promise<Rows> {
  log(`case: ${senders} slow-body webhook senders for up to ${holdS} s`);
  const port = Number(new URL(pair.url).port);
  const path = `/webhooks/sync-gateway/db1?token=${token}`;
  const sockets: Socket[] = [];
  const closedAfter: number[] = [];
  const t0 = Date.now();
  for (let i = 0; i < senders; i++) {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    s.on('close', () => closedAfter.push((Date.now() - t0) / 1000));
    s.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"_id":"`);
    sockets.push(s);
  }
  const drip = setInterval(() => {
    for (const s of sockets) if (!s.destroyed) s.write('a');
  }, 1_000);
  await sleep(3_000);
  const post = async (): Promise<number> => {
    try {
      const r = await fetch(`${pair.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"_id":"doc1","type":"x"}', signal: AbortSignal.timeout(10_000) });
      await r.text();
      return r.status;
    } catch {
      return 0;
    }
  };
  const during = await post();
  const m = await timedGet(`${pair.url}/metrics`, 10_000);
  await waitUntil('slow senders closed', async () => (closedAfter.length >= senders ? true : undefined), holdS * 1000 - 3_000, 500).catch(() => undefined);
  clearInterval(drip);
  const closedByServer = closedAfter.length;
  for (const s of sockets) s.destroy();
  await sleep(1_000);
  const after = await post();
  closedAfter.sort((a, b) => a - b);
  return [
    ['senders', `${senders} connections posting a 100 kB body at 1 byte/s (max_concurrency default 64)`],
    ['a real post while they send', during === 0 ? 'no answer in 10 s' : String(during)],
    ['/metrics meanwhile', `${m.status || 'no answer'} in ${fmt(m.ms, 0)} ms`],
    ['slow connections closed by the exporter within 30 s', `${closedByServer} of ${senders}${closedByServer ? ` (first after ${fmt(closedAfter[0] ?? NaN, 1)} s, last after ${fmt(closedAfter[closedByServer - 1] ?? NaN, 1)} s)` : ''}`],
    ['a real post after they went away', after === 0 ? 'no answer in 10 s' : String(after)],
  ];
}

export async function caseSighup(pair: Pair): Promise<Rows> {
  log('case: SIGHUP');
  const before = pair.exp.output().length;
  pair.exp.child.kill('SIGHUP');
  const r = await Promise.race([pair.exp.exited, sleep(5_000).then(() => undefined)]);
  const after = pair.exp.output().slice(before);
  if (r) {
    return [['SIGHUP', `the process exited (code ${r.code ?? 'none'}, signal ${r.signal ?? 'none'})${/shutting down/.test(after) ? ', after a shutdown log line' : ', with no shutdown log line'}`]];
  }
  const h = await timedGet(`${pair.url}/-/healthy`);
  const m = await timedGet(`${pair.url}/metrics`);
  const reload = sumSeries(m.body, 'cbwatch_config_last_reload_successful');
  return [
    ['SIGHUP', `still running 5 s later (/-/healthy ${h.status})${/reload/i.test(after) ? ', reload logged' : ', no reload logged'}`],
    ['cbwatch_config_last_reload_successful', m.body.includes('cbwatch_config_last_reload_successful') ? String(reload) : 'absent'],
  ];
}
