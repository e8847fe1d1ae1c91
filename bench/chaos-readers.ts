/**
 * `CHAOS_PARTS=readers npm run chaos` (issue 39, item 4): request slots under clients that are not scrapers, each
 * flood beside a gzip scraper (as Prometheus scrapes: GET /metrics with Accept-Encoding: gzip every second,
 * 10 s timeout) whose answers are counted (target: at least 95% answered 200):
 *
 *  - slow readers: 50 connections asking /metrics without gzip and reading the answer at 1 byte/s; every 20 s a
 *    new wave of 50 replaces them (the issue's attacker sent a wave every 2 minutes);
 *  - plain flood: 300 keep-alive connections asking /metrics without gzip back to back, reading at full speed;
 *  - reload flood: 50 connections sending POST /-/reload back to back for 10 s (--web.enable-lifecycle): how many
 *    reloads ran and how many log lines they wrote.
 *
 * Figures on main, from the issue: the slow readers held all 40 slots, a scraper got 503 on 83 of 83 tries; a
 * plain flood of 200–500 connections made 20–44% of gzip scrapes 503 (max 2.1 s); the reload flood ran 1,660
 * reloads and wrote 5,021 log lines in 10 s.
 */
import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { fmt, percentile } from './chaos-lib.js';
import { counts, flood } from './chaos-flood.js';
import type { FloodResult } from './chaos-flood.js';
import type { Rows } from './chaos-lib.js';
import { COLLECTORS, allGreen, log, sleep, start, startExporter, stopPair, tempDir, timedGet, waitUntil } from './chaos-harness.js';
import { freePort } from './common.js';

const FLOOD_SECONDS = Number(process.env.CHAOS_READERS_SECONDS ?? 60);
const RELOAD_SECONDS = 10;

interface ScrapeLog {
  statuses: Map<number, number>;
  lat: number[];
}

/**
 * The gzip scraper, in a thread of its own (as Prometheus is a process of its own: the floods' event loop in this
 * process must not delay its requests): GET /metrics every second, 10 s timeout, for `seconds`.
 */
async function scraper(url: string, seconds: number): Promise<ScrapeLog> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { url, seconds } = workerData;
    (async () => {
      const end = Date.now() + seconds * 1000;
      const out = [];
      while (Date.now() < end) {
        const t0 = performance.now();
        let status = 0;
        try {
          const r = await fetch(url + '/metrics', { headers: { 'accept-encoding': 'gzip' }, signal: AbortSignal.timeout(10000) });
          await r.arrayBuffer();
          status = r.status;
        } catch {}
        const ms = performance.now() - t0;
        out.push([status, ms]);
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 - ms)));
      }
      parentPort.postMessage(out);
    })();`;
  const w = new Worker(code, { eval: true, workerData: { url, seconds } });
  const out = await new Promise<Array<[number, number]>>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  const statuses = new Map<number, number>();
  for (const [st] of out) statuses.set(st, (statuses.get(st) ?? 0) + 1);
  return { statuses, lat: out.map(([, ms]) => ms) };
}

function answered(s: ScrapeLog): string {
  const total = [...s.statuses.values()].reduce((a, b) => a + b, 0);
  const ok = s.statuses.get(200) ?? 0;
  const others = [...s.statuses].filter(([k]) => k !== 200).map(([k, n]) => `${n} × ${k === 0 ? 'no answer in 10 s' : k}`);
  return `${ok} of ${total} answered 200 (${fmt((100 * ok) / Math.max(1, total), 1)}%)${others.length ? `, ${others.join(', ')}` : ''}; p50 ${fmt(percentile(s.lat, 50))} ms, p99 ${fmt(percentile(s.lat, 99))} ms, max ${fmt(Math.max(...s.lat))} ms`;
}

/**
 * Waves of `n` connections reading /metrics (no gzip) at 1 byte/s, a new wave every `waveS` seconds, for `seconds`.
 * In python3, which can shrink a socket's receive buffer (SO_RCVBUF 4 KiB, as a slow client's small window): Node
 * cannot, and loopback's default buffers would take in a body of several MiB at once. Each wave's connections are
 * closed by the client when the next wave starts; a connection the server closed first is not seen by a reader
 * this slow, so the server's own counter (cbwatch_http_slow_readers_closed_total) tells those.
 */
async function slowReaders(port: number, n: number, waveS: number, seconds: number): Promise<{ opened: number; statuses: Map<string, number> }> {
  const script = `
import json, socket, sys, time
port, n, wave, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
statuses, opened = {}, 0
def open_wave():
    global opened
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: x\\r\\nUser-Agent: slow-reader\\r\\n\\r\\n")
        s.setblocking(False)
        socks.append([s, b""])
        opened += 1
    return socks
def close_wave(socks):
    for s, head in socks:
        st = head[9:12].decode("latin1") if head.startswith(b"HTTP/1.1 ") and len(head) >= 12 else "status line not read yet"
        statuses[st] = statuses.get(st, 0) + 1
        s.close()
end = time.time() + seconds
socks, nxt = open_wave(), time.time() + wave
while time.time() < end:
    time.sleep(1)
    for pair in socks:
        try:
            b = pair[0].recv(1)
            pair[1] += b
        except (BlockingIOError, OSError):
            pass
    if time.time() >= nxt and time.time() < end:
        close_wave(socks)
        socks, nxt = open_wave(), time.time() + wave
close_wave(socks)
print(json.dumps({"opened": opened, "statuses": statuses}))
`;
  const child = spawn('python3', ['-c', script, String(port), String(n), String(waveS), String(seconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`slow readers (python3) exited ${code}: ${err.slice(-500)}`);
  const r = JSON.parse(out) as { opened: number; statuses: Record<string, number> };
  return { opened: r.opened, statuses: new Map(Object.entries(r.statuses)) };
}

/** `c` keep-alive connections asking /metrics without gzip back to back; statuses counted. */
const plainFlood = (port: number, c: number, done: () => boolean): Promise<FloodResult> => flood(port, c, done, () => ({ path: '/metrics' }), 100);

/** `c` connections sending POST /-/reload back to back; statuses counted. */
const reloadFlood = async (port: number, c: number, done: () => boolean): Promise<Map<string, number>> =>
  (await flood(port, c, done, () => ({ path: '/-/reload', method: 'POST' }))).statuses;

const counter = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

export async function caseReaders(): Promise<Rows> {
  // 500 buckets with the full stat set: a plain body of 5.6 MiB, more than loopback's socket buffers take in for
  // a reader this slow (the sender's may grow to 4 MiB, net.ipv4.tcp_wmem); at 100 buckets (1.3 MiB) the whole
  // body is in the kernel at once and no slot is held.
  const buckets = Number(process.env.CHAOS_READERS_BUCKETS ?? 500);
  const simPort = await freePort();
  const sim = start(['simulate', '--port', String(simPort), '--buckets', String(buckets), '--stat-set', 'full']);
  const simUrl = `http://127.0.0.1:${simPort}`;
  await waitUntil('simulator', async () => ((await fetch(`${simUrl}/_sim/state`)).ok ? true : undefined), 60_000);
  const dir = tempDir();
  const { exp, url } = await startExporter(simUrl, { intervalS: 15, exporterArgs: ['--web.enable-lifecycle'] }, dir);
  await allGreen(url, COLLECTORS, 180_000);
  const pair = { sim, simUrl, exp, url, dir };
  try {
    const port = Number(new URL(pair.url).port);
    const plain = await timedGet(`${pair.url}/metrics`, 10_000, { 'accept-encoding': 'identity' });
    const gz = await fetch(`${pair.url}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
    const gzBytes = Number(gz.headers.get('content-length'));
    await gz.arrayBuffer();
    const rows: Rows = [
      ['exporter', `this checkout; --web.max-requests 40 (default: at most 10 uncompressed scrapes at once); simulator with ${buckets} buckets (full stat set), every collector every 15 s`],
      ['/metrics body', `${fmt(Buffer.byteLength(plain.body) / 1024 / 1024, 1)} MiB plain, ${fmt(gzBytes / 1024, 0)} KiB gzip`],
      ['scraper', 'GET /metrics with Accept-Encoding: gzip every second, 10 s timeout (as Prometheus)'],
    ];

    log(`readers: 50 slow readers at 1 byte/s, a new wave every 20 s, ${FLOOD_SECONDS} s`);
    let end = Date.now() + FLOOD_SECONDS * 1000;
    let done = (): boolean => Date.now() > end;
    const [r, s1] = await Promise.all([slowReaders(port, 50, 20, FLOOD_SECONDS), scraper(pair.url, FLOOD_SECONDS)]);
    const m1 = (await timedGet(`${pair.url}/metrics`)).body;
    rows.push(
      ['slow readers', `50 connections, GET /metrics without gzip, read at 1 byte/s; a new wave of 50 every 20 s; ${FLOOD_SECONDS} s (${r.opened} connections)`],
      ['– what they read', counts(r.statuses)],
      ['– closed at the write deadline', `${counter(m1, 'cbwatch_http_slow_readers_closed_total')} (cbwatch_http_slow_readers_closed_total)`],
      ['– the gzip scraper', answered(s1)],
      ['– on main (issue 39)', 'all 40 slots held; 503 on 83 of 83 tries'],
    );
    await sleep(15_000);

    log(`readers: plain flood of 300 connections, ${FLOOD_SECONDS} s`);
    end = Date.now() + FLOOD_SECONDS * 1000;
    done = (): boolean => Date.now() > end;
    const [p, s2] = await Promise.all([plainFlood(port, 300, done), scraper(pair.url, FLOOD_SECONDS)]);
    rows.push(
      ['plain flood', `300 keep-alive connections, GET /metrics without gzip back to back; ${FLOOD_SECONDS} s`],
      ['– the flood was answered', `${counts(p.statuses)}; ${fmt(p.bytes / 1024 / 1024)} MiB of plain bodies`],
      ['– the gzip scraper', answered(s2)],
      ['– on main (issue 39)', '20–44% of gzip scrapes answered 503 under 200–500 connections (max 2.1 s)'],
    );
    await sleep(5_000);

    log(`readers: reload flood, ${RELOAD_SECONDS} s`);
    const before = pair.exp.output();
    end = Date.now() + RELOAD_SECONDS * 1000;
    done = (): boolean => Date.now() > end;
    const [rl, s3] = await Promise.all([reloadFlood(port, 50, done), scraper(pair.url, RELOAD_SECONDS)]);
    await sleep(2_000);
    const after = pair.exp.output();
    const added = after.length >= before.length && after.startsWith(before.slice(0, 1000)) ? after.slice(before.length) : after;
    const lines = added.split('\n').filter((l) => l.trim() !== '');
    rows.push(
      ['reload flood', `50 keep-alive connections, POST /-/reload back to back; ${RELOAD_SECONDS} s`],
      ['– answered', counts(rl)],
      ['– reloads run / log lines written', `${lines.filter((l) => l.includes('reloading configuration')).length} / ${lines.length}`],
      ['– the gzip scraper', answered(s3)],
      ['– on main (issue 39)', '1,660 reloads and 5,021 log lines in 10 s'],
    );
    const alive = await timedGet(`${pair.url}/-/healthy`);
    rows.push(['exporter afterwards', alive.status === 200 ? 'alive, /-/healthy 200' : `/-/healthy ${alive.status}`]);
    return rows;
  } finally {
    await stopPair(pair);
  }
}
