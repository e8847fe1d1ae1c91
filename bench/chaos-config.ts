/**
 * `CHAOS_PARTS=config npm run chaos` (issue 39, items 5–7): the configuration, signal and HTTP cases of the third
 * attack round, each against the real launcher (`bin/cbwatch.js`, its shebang's Node flags):
 *
 *  - a file whose aliases expand linearly (a cluster of 40,000 unknown keys listed 990 times: 79 million nodes in 370 KB),
 *    checked with `--config.check`, and reloaded into a running daemon by SIGHUP;
 *  - `--couchbase.max-buffered-bytes 99999999999999999999999GiB`; `--web.telemetry-path /..`, `/.` and 100 KB long;
 *  - SIGUSR1 to the running daemon; a SIGHUP at 10–200 ms after exec (Node's window before any JavaScript);
 *  - `Accept-Encoding: gzip;q=0`; TRACE and PROPFIND on /metrics.
 *
 * Figures on main are the issue's: the alias file took 17 s and 1,585 MiB for `--config.check`, and a SIGHUP into it
 * killed the daemon; the byte flag was accepted (the answer budget off); the telemetry paths were accepted (the
 * 100 KB one answered every request 431); SIGUSR1 opened the inspector; a SIGHUP 10–60 ms after exec killed the
 * process; `gzip;q=0` got gzip; TRACE and PROPFIND got 404.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fmt } from './chaos-lib.js';
import type { Rows } from './chaos-lib.js';
import { CLI, rssMB } from './common.js';
import { log, sleep, start, startPair, stopPair, stopProc, tempDir, timedGet, waitUntil } from './chaos-harness.js';

/** Runs the launcher with `args` to its end: exit code, wall seconds, peak RSS (MB, /proc every 20 ms), stderr's first line. */
async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; seconds: number; peakMB: number; first: string }> {
  const t0 = performance.now();
  const child = spawn(CLI, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stdout.resume();
  child.stderr.on('data', (d: Buffer) => {
    if (err.length < 4096) err += d.toString();
  });
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMB(child.pid));
    } catch {
      /* gone */
    }
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearInterval(timer);
  return { code, seconds: (performance.now() - t0) / 1000, peakMB: peak, first: (err.split('\n')[0] ?? '').slice(0, 160) };
}

function raw(port: number, method: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', method, headers }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', () => resolve({ status: 0, headers: {} }));
    req.end();
  });
}

export async function caseConfig(): Promise<Rows> {
  const dir = tempDir();
  const rows: Rows = [];
  const pair = await startPair({ buckets: 1, intervalS: 30, exporterArgs: [] });
  try {
    // The running daemon's file, so that a SIGHUP reads the alias file.
    const cfg = join(dir, 'alias.yml');
    const entries = Array.from({ length: 40_000 }, (_, i) => `k${i}: 1`).join(', ');
    // A cluster of 40,000 unknown keys, listed 990 times: validation would visit every key of every copy.
    const alias = `x-cluster: &big { url: "${pair.simUrl}", ${entries} }\nclusters: [${Array(990).fill('*big').join(', ')}]\n`;
    writeFileSync(cfg, alias);
    log('config: --config.check on the alias file');
    const check = await run(['run', '--config', cfg, '--config.check']);
    rows.push(
      ['alias file', `${fmt(Buffer.byteLength(alias) / 1024)} KB: a cluster of 40,000 unknown keys anchored once and listed 990 times (about 79 million nodes expanded)`],
      ['– `--config.check`', `exit ${check.code} in ${fmt(check.seconds, 2)} s, peak RSS ${fmt(check.peakMB)} MB: ${check.first}`],
      ['– on main (issue 39)', 'a 727 KB file of this kind: 17 s and 1,585 MiB for --config.check'],
    );

    // The daemon of the pair reads pair.dir/cbwatch.yml: replace it with the alias file and SIGHUP.
    writeFileSync(join(pair.dir, 'cbwatch.yml'), alias);
    log('config: SIGHUP into the alias file');
    const before = rssMB(pair.exp.pid);
    pair.exp.child.kill('SIGHUP');
    await waitUntil('the reload to end', async () => (/configuration reload failed/.test(pair.exp.output()) ? true : undefined), 60_000, 100).catch(() => undefined);
    const peak = Math.max(before, rssMB(pair.exp.pid));
    const alive = (await timedGet(`${pair.url}/-/healthy`)).status === 200;
    const m = (await timedGet(`${pair.url}/metrics`)).body;
    const failures = /^cbwatch_config_reload_failures_total (\S+)$/m.exec(m)?.[1] ?? 'absent';
    rows.push(
      ['– SIGHUP into it', `${alive ? 'daemon alive' : 'daemon NOT alive'}; reload refused and logged (${/more than 2000000 nodes/.test(pair.exp.output()) ? 'node limit' : 'other reason'}); cbwatch_config_reload_failures_total ${failures}; RSS ${fmt(before)} → ${fmt(peak)} MB`],
      ['– on main (issue 39)', 'the daemon was killed'],
    );

    // A file dense in nodes: 1 MiB of `1,1,1,…` (524,288 scalars as written).
    const dense = join(dir, 'dense.yml');
    writeFileSync(dense, `x: [${'1,'.repeat(512 * 1024)}1]\n`);
    const d = await run(['run', '--config', dense, '--config.check']);
    rows.push(
      ['1 MiB of `1,1,1,…` (524,289 nodes as written)', `exit ${d.code} in ${fmt(d.seconds, 2)} s, peak RSS ${fmt(d.peakMB)} MB: ${d.first}`],
      ['– without the count before the parse (yaml 2.9.1 alone, by hand)', '1 MiB: 528 MB and 2.8 s in the parser; 4 MiB: 2 GB; 16 MiB: out of memory (the process aborts)'],
    );

    log('config: bad flags');
    const url = ['--couchbase.url', pair.simUrl];
    for (const [what, args] of [
      ['--couchbase.max-buffered-bytes 99999999999999999999999GiB', [...url, '--couchbase.max-buffered-bytes', '99999999999999999999999GiB']],
      ['--web.telemetry-path /..', [...url, '--web.telemetry-path', '/..']],
      ['--web.telemetry-path /.', [...url, '--web.telemetry-path', '/.']],
      ['--web.telemetry-path of 100 KB', [...url, '--web.telemetry-path', `/${'a'.repeat(100 * 1024)}`]],
      ['--couchbase.cluster-name of 100 KB (as the environment variable; one argument holds at most 128 KiB)', url],
    ] as const) {
      const env: Record<string, string> = what.startsWith('--couchbase.cluster-name') ? { CBWATCH_COUCHBASE_CLUSTER_NAME: 'n'.repeat(100 * 1024) } : {};
      const r = await run(['run', ...args, '--config.check'], env);
      rows.push([what, `exit ${r.code}: ${r.first}`]);
    }
    rows.push(['– on main (issue 39)', 'the byte flag and the three paths were accepted (exit 0)']);

    log('config: SIGUSR1, q=0, methods');
    const port = Number(new URL(pair.url).port);
    pair.exp.child.kill('SIGUSR1');
    await sleep(500);
    const usr1Alive = (await timedGet(`${pair.url}/-/healthy`)).status === 200;
    rows.push([
      'SIGUSR1 to the daemon (launcher on Node ' + process.versions.node + ')',
      `${/Debugger listening|Starting inspector/.test(pair.exp.output()) ? 'the inspector OPENED' : 'no inspector'}; ${usr1Alive ? 'alive' : 'NOT alive'} (main: the inspector opened)`,
    ]);
    const q0 = await raw(port, 'GET', { 'accept-encoding': 'gzip;q=0' });
    const gz = await raw(port, 'GET', { 'accept-encoding': 'gzip' });
    rows.push(['Accept-Encoding: gzip;q=0 / gzip', `${q0.status} ${q0.headers['content-encoding'] ?? 'plain'} / ${gz.status} ${gz.headers['content-encoding'] ?? 'plain'} (main: gzip for both)`]);
    for (const method of ['TRACE', 'PROPFIND', 'MKCOL']) {
      const r = await raw(port, method);
      rows.push([`${method} /metrics`, `${r.status}, Allow: ${String(r.headers.allow ?? 'none')} (main: ${method === 'MKCOL' ? 'not measured' : '404'})`]);
    }
  } finally {
    await stopPair(pair);
  }

  // Node's window before JavaScript runs: a SIGHUP this early still ends the process (documented; the systemd unit
  // waits for /-/healthy before a reload can be sent).
  log('config: SIGHUP right after exec');
  const simple = ['run', '--couchbase.url', 'http://127.0.0.1:1', '--web.listen-address', '127.0.0.1:0'];
  const outcomes: string[] = [];
  for (const ms of [10, 20, 40, 60, 100, 200, 400]) {
    const p = start(simple);
    await sleep(ms);
    p.child.kill('SIGHUP');
    const r = await Promise.race([p.exited, sleep(3000).then(() => undefined)]);
    if (r === undefined) {
      await stopProc(p);
      outcomes.push(`${ms} ms: survived`);
    } else outcomes.push(`${ms} ms: ${r.signal === 'SIGHUP' || r.code === 129 ? 'killed (SIGHUP)' : `exit ${r.code ?? r.signal}`}`);
  }
  rows.push(['SIGHUP at N ms after exec', `${outcomes.join('; ')} (Node resets signals until JavaScript runs: docs/security.md, "Signals")`]);
  return rows;
}
