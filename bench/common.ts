/** Shared bench plumbing: child processes, scraping, autocannon, peak RSS from /proc. */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import autocannon from 'autocannon';

/** bench/out/bench → the repository root. */
export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const CLI = join(ROOT, 'bin', 'cbwatch.js');
/** The exporter to measure: this checkout's launcher, or another build's (BENCH_EXPORTER_CLI, for before/after). */
export const EXPORTER_CLI = process.env.BENCH_EXPORTER_CLI ?? CLI;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** `cbwatch …` run as users run it: the launcher itself, so its Node flags (the shebang line) apply. */
export function startProcess(args: string[], env: Record<string, string> = {}, opts: { v8Defaults?: boolean; nodeArgs?: readonly string[]; cli?: string } = {}): ChildProcess {
  // v8Defaults: `node bin/cbwatch.js …`, without the launcher's flags; nodeArgs: `node <nodeArgs> bin/cbwatch.js …`.
  const nodeArgs = opts.nodeArgs ?? (opts.v8Defaults ? [] : undefined);
  const cli = opts.cli ?? CLI;
  const [cmd, argv] = nodeArgs ? [process.execPath, [...nodeArgs, cli, ...args]] : [cli, args];
  const child = spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr?.on('data', () => undefined);
  return child;
}

/** `check`, outside the retry: throws to give up at once (e.g. the process under test exited). */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000, check?: () => void): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    check?.();
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function scrape(url: string): Promise<string> {
  const r = await fetch(`${url}/metrics`);
  return r.text();
}

/** The value of the first series matching name and label fragments. */
export function value(text: string, name: string, ...fragments: string[]): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith('{') || rest.startsWith(' '))) continue;
    if (fragments.every((f) => line.includes(f))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

/** A `kB` field of /proc/PID/status (VmRSS, VmHWM…), in kB; NaN when the process is gone or has no such field. */
function statusKB(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** Peak resident memory (VmHWM), bytes. */
export function peakRssBytes(pid: number): number {
  return statusKB(pid, 'VmHWM') * 1024;
}

/** Resident memory now (VmRSS), MB; NaN when the process is gone. */
export function rssMB(pid: number | undefined): number {
  return statusKB(pid, 'VmRSS') / 1024;
}

export function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of /proc/pid/stat (11 and 12 after the comm field).
  return (Number(f[11]) + Number(f[12])) / 100;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export async function load(url: string, seconds: number, connections = 10, headers: Record<string, string> = {}): Promise<LoadResult> {
  const r = await autocannon({ url, duration: seconds, connections, headers });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** `cbwatch run --config cfg` on a free loopback port, resolved once /-/ready answers 200. */
export async function startExporterReady(cfg: string): Promise<{ exporter: ChildProcess; url: string }> {
  const port = await freePort();
  const exporter = startProcess(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'warn'], { BENCH_CB_PASSWORD: 'password' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('exporter ready', async () => ((await fetch(`${url}/-/ready`)).status === 200 ? true : undefined), 120_000);
  return { exporter, url };
}

/**
 * The bench and chaos runs take no arguments, only environment knobs: with `--help` (or `-h`) print `usage` and
 * exit 0; with anything else print it to stderr and exit 2. Either way nothing runs (`npm run bench -- --help`
 * used to start the whole measurement).
 */
export function refuseArguments(name: string, usage: string): void {
  const args = process.argv.slice(2);
  if (args.length === 0) return;
  const help = args.length === 1 && ['--help', '-h', 'help'].includes(args[0] as string);
  if (help) process.stdout.write(usage);
  else process.stderr.write(`${name}: no arguments are taken (got ${args.join(' ')})\n${usage}`);
  process.exit(help ? 0 : 2);
}
