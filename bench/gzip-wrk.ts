/**
 * Gzip scrape throughput against a static ceiling, measured with wrk (issue 26, item 2).
 *
 * autocannon in the bench's process tops out near 370 gzip scrapes a second whoever answers: the client, not the
 * server, was measured. wrk (C, epoll) is not the bottleneck at these rates, and its CPU is read here to show it.
 * Three servers answer the same gzip bytes with the same headers, one after the other, each for the same time:
 *  - the running exporter (its /metrics, `Accept-Encoding: gzip`, text format);
 *  - the ceiling: a bare Node http server in a process of its own writing those bytes in one write;
 *  - the same bytes written as the list of deflate parts the exporter splices them from (header, one raw deflate
 *    stream per part, each ended with a sync flush, the final block, the trailer), one write per part. The part
 *    boundaries are found from the sync-flush markers (00 00 ff ff) in the body: a study of what writing parts one
 *    by one would cost, not the exporter's own list.
 * Each server gets a short warm-up run (not counted) before its measured run.
 *
 *   node bench/out/bench/gzip-wrk.js URL [PID] [SECONDS]   the study by hand against a running exporter (PID: its
 *                                                         CPU during the run); prints the result as JSON
 *   node bench/out/bench/gzip-wrk.js serve FILE one|parts  the ceiling server (prints `listening PORT`)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export interface WrkRun {
  /** Requests per second over the measured run. */
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Socket errors, timeouts and non-2xx answers: a run with any is not a throughput figure. */
  readonly errors: number;
  /** CPU of the server's process during the run, in % of one core (when its pid is known). */
  readonly serverCpuPct?: number;
  /**
   * The server's CPU per request, microseconds: on a shared machine (other work taking cores) the steadier figure
   * of the cost of a scrape; req/s follow whatever CPU the server got.
   */
  readonly serverCpuUsPerRequest?: number;
  /** CPU of wrk itself, in % of one core: well under 100% means the client was not the bottleneck. */
  readonly clientCpuPct: number;
}

export type GzipWrkResult =
  | { readonly skipped: string }
  | {
      readonly skipped?: undefined;
      readonly seconds: number;
      readonly connections: number;
      /** Bytes of the gzip body, and the parts the "parts" ceiling writes it as. */
      readonly bytes: number;
      readonly parts: number;
      readonly exporter: WrkRun;
      readonly ceiling: WrkRun;
      readonly ceilingParts: WrkRun;
      /** exporter.rps / ceiling.rps. */
      readonly ratio: number;
    };

const THIS = fileURLToPath(import.meta.url);
/** Headers the exporter answers a gzip text scrape with (Date, Connection and Keep-Alive come from Node in both). */
const HEADERS = { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', vary: 'accept, accept-encoding', 'content-encoding': 'gzip' };

/** Whether wrk is installed: undefined when it is, else why not. */
export function wrkMissing(): string | undefined {
  const r = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (r.error) return `wrk is not installed (${(r.error as NodeJS.ErrnoException).code ?? r.error.message}): gzip throughput not measured (Debian: apt-get install wrk)`;
  return undefined;
}

/** utime + stime of a process, in seconds (NaN once it is gone). */
function cpuOf(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** A wrk latency figure ("812.00us", "3.21ms", "1.02s") in milliseconds. */
export function wrkMs(s: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(s.trim());
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000;
}

/** The figures of wrk's `--latency` report. */
export function parseWrk(out: string): Omit<WrkRun, 'serverCpuPct' | 'serverCpuUsPerRequest' | 'clientCpuPct'> {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const p50Ms = wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '');
  const p99Ms = wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '');
  let errors = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  if (sock) errors += sock.slice(1).reduce((n, x) => n + Number(x), 0);
  return { rps, p50Ms, p99Ms, errors };
}

/** One wrk run (one thread: the server under test is one thread too), with its CPU and the server's. */
async function wrk(url: string, seconds: number, connections: number, serverPid?: number): Promise<WrkRun> {
  const child = spawn('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-H', 'Accept-Encoding: gzip', url], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const s0 = serverPid === undefined ? NaN : cpuOf(serverPid);
  const t0 = performance.now();
  // wrk's own CPU: read from /proc while it runs (the last reading is a few hundred ms before it exits).
  let clientCpu = 0;
  const sample = setInterval(() => {
    const c = cpuOf(child.pid as number);
    if (Number.isFinite(c)) clientCpu = c;
  }, 200);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', resolve);
  });
  clearInterval(sample);
  const wall = (performance.now() - t0) / 1000;
  const s1 = serverPid === undefined ? NaN : cpuOf(serverPid);
  if (code !== 0) throw new Error(`wrk exited with code ${code}: ${out.trim()}`);
  const figures = parseWrk(out);
  const server = serverPid === undefined ? {} : { serverCpuPct: ((s1 - s0) / wall) * 100, serverCpuUsPerRequest: ((s1 - s0) * 1e6) / (figures.rps * seconds) };
  return { ...figures, clientCpuPct: (clientCpu / seconds) * 100, ...server };
}

/**
 * The gzip body cut where the exporter splices it: the 10-byte header, each part's deflate stream up to and
 * including its sync-flush marker, then the rest (the final empty block and the 8-byte trailer).
 */
export function gzipParts(body: Buffer): Buffer[] {
  const out: Buffer[] = [body.subarray(0, 10)];
  const marker = Buffer.from([0, 0, 0xff, 0xff]);
  let from = 10;
  for (let at = body.indexOf(marker, from); at !== -1 && at + 4 <= body.length - 8; at = body.indexOf(marker, from)) {
    out.push(body.subarray(from, at + 4));
    from = at + 4;
  }
  out.push(body.subarray(from));
  return out;
}

/** The ceiling server (a process of its own): every request answered with FILE, in one write or part by part. */
function serve(file: string, mode: 'one' | 'parts'): void {
  const body = readFileSync(file);
  const parts = gzipParts(body);
  createServer((_req, res) => {
    for (const [k, v] of Object.entries(HEADERS)) res.setHeader(k, v);
    res.setHeader('content-length', body.length);
    if (mode === 'one') return void res.end(body);
    for (const p of parts) res.write(p);
    res.end();
  }).listen(0, '127.0.0.1', function (this: { address(): { port: number } }) {
    process.stdout.write(`listening ${this.address().port}\n`);
  });
}

async function startCeiling(file: string, mode: 'one' | 'parts'): Promise<{ url: string; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, [THIS, 'serve', file, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString('utf8');
      const m = /listening (\d+)/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`ceiling server exited with code ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/metrics`, pid: child.pid as number, stop: () => void child.kill() };
}

/**
 * Gzip scrapes of `metricsUrl` (the exporter's /metrics) with wrk, then of the static ceiling writing the same
 * bytes, in one write and part by part. `exporterPid`: the exporter's process, for its CPU during the run.
 */
export async function gzipWrk(metricsUrl: string, opts: { seconds?: number; connections?: number; exporterPid?: number } = {}): Promise<GzipWrkResult> {
  const missing = wrkMissing();
  if (missing !== undefined) return { skipped: missing };
  const seconds = opts.seconds ?? 10;
  const connections = opts.connections ?? 10;
  const body = await rawGzip(metricsUrl);
  gunzipSync(body); // a valid gzip body, or this throws before anything is measured
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-gzip-wrk-'));
  const file = join(dir, 'body.gz');
  writeFileSync(file, body);
  const warm = Math.min(2, seconds);
  try {
    const measure = async (url: string, pid?: number): Promise<WrkRun> => {
      await wrk(url, warm, connections, pid);
      return wrk(url, seconds, connections, pid);
    };
    const exporter = await measure(metricsUrl, opts.exporterPid);
    const results: WrkRun[] = [];
    for (const mode of ['one', 'parts'] as const) {
      const c = await startCeiling(file, mode);
      try {
        results.push(await measure(c.url, c.pid));
      } finally {
        c.stop();
      }
    }
    const [ceiling, ceilingParts] = results as [WrkRun, WrkRun];
    return { seconds, connections, bytes: body.length, parts: gzipParts(body).length, exporter, ceiling, ceilingParts, ratio: exporter.rps / ceiling.rps };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The gzip bytes as served (fetch would decode them; node:http does not). */
function rawGzip(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'accept-encoding': 'gzip' } }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => (r.headers['content-encoding'] === 'gzip' ? resolve(Buffer.concat(chunks)) : reject(new Error(`${url} answered without gzip`))));
      r.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The `gzip` section of bench/RESULTS.md (bench/run.ts), from one result; `when`: the date and load line. */
export function gzipWrkSection(r: GzipWrkResult, when: string): string[] {
  const head = ['## Gzip throughput against a static ceiling (issue 26, item 2)', '', when, ''];
  if (r.skipped !== undefined) return [...head, `Not measured: ${r.skipped}.`, ''];
  const f = (n: number | undefined, d = 1): string => (n !== undefined && Number.isFinite(n) ? n.toFixed(d) : 'n/a');
  const row = (what: string, x: WrkRun): string => `| ${what} | ${f(x.rps, 0)} | ${f(x.p50Ms, 2)} / ${f(x.p99Ms, 2)} ms | ${f(x.serverCpuPct, 0)}% | ${f(x.serverCpuUsPerRequest)} µs | ${f(x.clientCpuPct, 0)}% | ${x.errors} |`;
  return [
    ...head,
    `wrk, 1 thread, ${r.connections} connections, ${r.seconds} s each after a short warm-up, \`Accept-Encoding: gzip\` (text format); the same ${r.bytes} gzip bytes from each server (${r.parts} parts for the part-by-part ceiling). Server CPU per request includes the exporter's collection thread.`,
    '',
    '| server | req/s | p50 / p99 | server CPU | server CPU per request | wrk CPU | errors |',
    '|---|---|---|---|---|---|---|',
    row('cbwatch /metrics', r.exporter),
    row('static ceiling, one write', r.ceiling),
    row('static, part by part', r.ceilingParts),
    '',
    `Ratio to the one-write ceiling: ${f(r.ratio * 100, 0)}% of its req/s.`,
    '',
  ];
}

if (process.argv[1] === THIS) {
  const [a, b, c] = process.argv.slice(2);
  if (a === 'serve' && b && (c === 'one' || c === 'parts')) serve(b, c);
  else if (a?.startsWith('http')) {
    const r = await gzipWrk(a, { ...(b ? { exporterPid: Number(b) } : {}), ...(c ? { seconds: Number(c) } : {}) });
    process.stdout.write(`${JSON.stringify(r, null, 1)}\n`);
  } else {
    process.stderr.write('usage: gzip-wrk.js URL [PID] [SECONDS] | gzip-wrk.js serve FILE one|parts\n');
    process.exitCode = 2;
  }
}
