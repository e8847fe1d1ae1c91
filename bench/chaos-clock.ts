/**
 * Chaos cases of issue 25, items 3 and 5 (CHAOS_PARTS=clock,logpipe), black-box on real processes:
 *
 * - clock: the exporter runs under libfaketime (Debian package `faketime`), its wall clock stepped at runtime
 *   through FAKETIME_TIMESTAMP_FILE (re-read on every call with FAKETIME_NO_CACHE=1): back 60 s, back 1 h,
 *   forward 1 h, each followed by a return to the true time. FAKETIME_DONT_FAKE_MONOTONIC=1 keeps
 *   CLOCK_MONOTONIC true, as an NTP step or a restored VM does. Per step: when the next two polls of `buckets`
 *   finished (a new last-success timestamp on /metrics, timed by this process on its own true clock), and
 *   whether success stayed 1.
 * - logpipe: the exporter's stderr is a pipe whose reader goes away (EPIPE) and then a reload logs into it;
 *   then its stderr is /dev/full. Alive or not, /metrics answers, lines dropped.
 *
 * The exporter is EXPORTER_CLI (BENCH_EXPORTER_CLI=/path/to/other/bin/cbwatch.js measures another build).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, sumSeries } from './chaos-lib.js';
import { CLI, EXPORTER_CLI, freePort } from './common.js';

type Rows = Array<[string, string]>;

const INTERVAL_S = 5;
const PASSWORD = 'password';
const log = (s: string): void => void process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

/** libfaketime's preload library, wherever Debian's multiarch layout put it. */
function libfaketime(): string | undefined {
  for (const dir of ['/usr/lib', ...(existsSync('/usr/lib') ? readdirSync('/usr/lib').map((d) => join('/usr/lib', d)) : [])]) {
    const f = join(dir, 'faketime', 'libfaketime.so.1');
    if (existsSync(f)) return f;
  }
  return undefined;
}

interface Child {
  child: ChildProcess;
  alive(): boolean;
  exit(): string;
}

function track(child: ChildProcess): Child {
  let how = '';
  child.once('exit', (code, signal) => (how = signal ? `signal ${signal}` : `exit ${code}`));
  return { child, alive: () => child.exitCode === null && child.signalCode === null, exit: () => how || 'running' };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms: number, everyMs = 100): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function metrics(url: string): Promise<string> {
  const r = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
  if (!r.ok) throw new Error(`/metrics ${r.status}`);
  return r.text();
}

async function withSimulator<T>(fn: (simUrl: string, dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-chaos-clock-'));
  const port = await freePort();
  const sim = track(spawn(CLI, ['simulate', '--port', String(port), '--buckets', '3'], { stdio: 'ignore' }));
  const simUrl = `http://127.0.0.1:${port}`;
  try {
    await until('simulator', async () => ((await fetch(`${simUrl}/_sim/state`)).ok ? true : undefined), 60_000);
    return await fn(simUrl, dir);
  } finally {
    if (sim.alive()) sim.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

function configFile(dir: string, simUrl: string): string {
  const cfg = join(dir, 'cbwatch.yml');
  writeFileSync(
    cfg,
    ['clusters:', '  - name: chaos', `    url: ${simUrl}`, '    username: Administrator', '    password_env: CHAOS_CB_PASSWORD', '    collectors:', `      buckets: { interval: ${INTERVAL_S}s }`]
      .concat(['bucket_stats', 'xdcr', 'nodes', 'tasks', 'autofailover', 'certificates', 'security', 'collections', 'search', 'backup'].map((c) => `      ${c}: { enabled: false }`))
      .join('\n') + '\n',
  );
  return cfg;
}

async function stop(c: Child): Promise<string> {
  if (!c.alive()) return c.exit();
  const done = new Promise<void>((r) => c.child.once('exit', () => r()));
  c.child.kill('SIGTERM');
  const timer = setTimeout(() => c.child.kill('SIGKILL'), 30_000);
  await done;
  clearTimeout(timer);
  return c.exit();
}

/**
 * The last-success timestamp of `buckets`: it changes with every successful poll (its value is the faked wall
 * clock, so only its changes count). Not the request counter: the bucket list is cached for 5 s between the
 * collectors that share it, so a poll 5 s after the previous may make no request.
 */
const BUCKETS_LAST_SUCCESS = (body: string): number | undefined => {
  const line = body.split('\n').find((l) => l.startsWith('cbwatch_collector_last_success_timestamp_seconds{') && l.includes('collector="buckets"'));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};
const BUCKETS_SUCCESS = (body: string): number | undefined => {
  const line = body.split('\n').find((l) => l.startsWith('cbwatch_collector_success{') && l.includes('collector="buckets"'));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

/** Item 3: wall-clock steps of the exporter's process under libfaketime. */
export async function caseClockSteps(): Promise<Rows> {
  const lib = libfaketime();
  if (lib === undefined) return [['wall-clock steps', 'not run: libfaketime not found (apt-get install faketime)']];
  log('case: wall-clock steps under libfaketime');
  return withSimulator(async (simUrl, dir) => {
    const clockFile = join(dir, 'faketime');
    writeFileSync(clockFile, '+0\n');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const exp = track(
      spawn(EXPORTER_CLI, ['run', '--config', configFile(dir, simUrl), '--web.listen-address', `127.0.0.1:${port}`], {
        env: { ...process.env, CHAOS_CB_PASSWORD: PASSWORD, LD_PRELOAD: lib, FAKETIME_TIMESTAMP_FILE: clockFile, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    exp.child.stderr?.on('data', () => undefined);
    const rows: Rows = [['collector, interval', `buckets, ${INTERVAL_S} s (the scheduler ticks every 1 s)`]];
    try {
      await until('exporter polled', async () => (BUCKETS_SUCCESS(await metrics(url)) === 1 ? true : undefined), 60_000);
      const steps: Array<[string, string]> = [
        ['back 60 s', '-60'],
        ['back to true time (+60 s)', '+0'],
        ['back 1 h', '-3600'],
        ['back to true time (+1 h)', '+0'],
        ['forward 1 h', '+3600'],
        ['back to true time (-1 h)', '+0'],
      ];
      let held = true;
      for (const [label, offset] of steps) {
        const base = BUCKETS_LAST_SUCCESS(await metrics(url));
        // Step right after a poll, so every step starts from the same phase; a build whose polling already
        // stopped is stepped anyway (the return to true time shows whether it recovers).
        const polled = await until('a poll', async () => (BUCKETS_LAST_SUCCESS(await metrics(url)) !== base ? true : undefined), 3 * INTERVAL_S * 1000, 50).catch(() => false);
        if (!polled) {
          held = false;
          rows.push([`before the step ${label}`, `no poll for ${3 * INTERVAL_S} s: polling had stopped`]);
        }
        let last = BUCKETS_LAST_SUCCESS(await metrics(url));
        writeFileSync(clockFile, `${offset}\n`);
        const t0 = performance.now();
        let minSuccess = 1;
        const seen: number[] = [];
        const deadline = 6 * INTERVAL_S * 1000;
        while (seen.length < 2 && performance.now() - t0 < deadline && exp.alive()) {
          const body = await metrics(url).catch(() => '');
          const s = BUCKETS_SUCCESS(body);
          if (s !== undefined) minSuccess = Math.min(minSuccess, s);
          const ls = BUCKETS_LAST_SUCCESS(body);
          if (ls !== undefined && ls !== last) {
            last = ls;
            seen.push((performance.now() - t0) / 1000);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        const ok = seen.length === 2 && (seen[0] as number) <= INTERVAL_S + 1.5 && minSuccess === 1;
        held &&= ok;
        rows.push([
          `step ${label}: next two polls after`,
          `${seen.length === 0 ? `none within ${deadline / 1000} s` : `${seen.map((s) => `${fmt(s, 1)} s`).join(', ')}${seen.length < 2 ? ` (no second within ${deadline / 1000} s)` : ''}`}; success min ${minSuccess}${ok ? '' : ' — NOT HELD'}`,
        ]);
      }
      rows.push(['held (first poll within one interval + 1.5 s of every step, success 1 throughout)', held ? 'yes' : 'no']);
      rows.push(['exporter at the end', exp.alive() ? 'alive' : exp.exit()]);
    } finally {
      await stop(exp);
    }
    return rows;
  });
}

/** A family's value for `collector` in an exposition, or undefined. */
const valueOf = (body: string, family: string, collector: string): number | undefined => {
  const line = body.split('\n').find((l) => l.startsWith(`${family}{`) && l.includes(`collector="${collector}"`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

/**
 * Issue 38: a collector on a cron schedule (`autofailover`, every minute in UTC) under libfaketime. The wall clock
 * steps forward 1 h (a VM resumed after sleeping through slots; the monotonic clock stays true), then back to the
 * true time. Per step: when the next poll finished (a new last-success timestamp, timed on this process's true
 * clock), whether `cbwatch_collector_overdue` was seen at 1 before it, and success after it.
 */
export async function caseScheduleSteps(): Promise<Rows> {
  const lib = libfaketime();
  if (lib === undefined) return [['cron schedule under clock steps', 'not run: libfaketime not found (apt-get install faketime)']];
  log('case: a cron schedule under wall-clock steps');
  return withSimulator(async (simUrl, dir) => {
    const clockFile = join(dir, 'faketime');
    writeFileSync(clockFile, '+0\n');
    const cfg = join(dir, 'cron.yml');
    writeFileSync(
      cfg,
      ['clusters:', '  - name: chaos', `    url: ${simUrl}`, '    username: Administrator', '    password_env: CHAOS_CB_PASSWORD', '    collectors:', '      autofailover: { schedule: "* * * * *", timezone: UTC }']
        .concat(['buckets', 'bucket_stats', 'xdcr', 'nodes', 'tasks', 'certificates', 'security', 'collections', 'search', 'backup'].map((c) => `      ${c}: { enabled: false }`))
        .join('\n') + '\n',
    );
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const exp = track(
      spawn(EXPORTER_CLI, ['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`], {
        env: { ...process.env, CHAOS_CB_PASSWORD: PASSWORD, LD_PRELOAD: lib, FAKETIME_TIMESTAMP_FILE: clockFile, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    exp.child.stderr?.on('data', () => undefined);
    const C = 'autofailover';
    const rows: Rows = [['collector, schedule', `${C}, "* * * * *" in UTC (a slot every minute; the scheduler ticks every 1 s)`]];
    try {
      await until('exporter polled', async () => (valueOf(await metrics(url), 'cbwatch_collector_success', C) === 1 ? true : undefined), 60_000);
      const steps: Array<[string, string, number]> = [
        ['forward 1 h (slept through 60 slots)', '+3600', 5],
        ['back 1 h to the true time', '+0', 65],
      ];
      for (const [label, offset, limitS] of steps) {
        let last = valueOf(await metrics(url), 'cbwatch_collector_last_success_timestamp_seconds', C);
        writeFileSync(clockFile, `${offset}\n`);
        const t0 = performance.now();
        let overdueSeen = false;
        let polledAfter: number | undefined;
        while (polledAfter === undefined && performance.now() - t0 < limitS * 1000 && exp.alive()) {
          const body = await metrics(url).catch(() => '');
          if (valueOf(body, 'cbwatch_collector_overdue', C) === 1) overdueSeen = true;
          const ls = valueOf(body, 'cbwatch_collector_last_success_timestamp_seconds', C);
          if (ls !== undefined && ls !== last) {
            last = ls;
            polledAfter = (performance.now() - t0) / 1000;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
        const after = await metrics(url).catch(() => '');
        rows.push([
          `step ${label}: next poll after`,
          `${polledAfter === undefined ? `none within ${limitS} s — NOT HELD` : `${fmt(polledAfter, 1)} s`}; overdue seen before it: ${overdueSeen ? 'yes' : 'no'}; then success ${valueOf(after, 'cbwatch_collector_success', C)}, overdue ${valueOf(after, 'cbwatch_collector_overdue', C)}`,
        ]);
      }
      rows.push(['exporter at the end', exp.alive() ? 'alive' : exp.exit()]);
    } finally {
      await stop(exp);
    }
    return rows;
  });
}

/** Item 5: the exporter's stderr a pipe whose reader goes away, then /dev/full. */
export async function caseLogDestination(): Promise<Rows> {
  log('case: failing log destination');
  return withSimulator(async (simUrl, dir) => {
    const rows: Rows = [];
    const cfg = configFile(dir, simUrl);
    const env = { ...process.env, CHAOS_CB_PASSWORD: PASSWORD };
    // EPIPE: read the log until the exporter serves, close the reader, make it log (a reload), keep scraping.
    {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const exp = track(spawn(EXPORTER_CLI, ['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`], { env, stdio: ['ignore', 'ignore', 'pipe'] }));
      exp.child.stderr?.on('data', () => undefined);
      try {
        await until('exporter polled', async () => (BUCKETS_SUCCESS(await metrics(url)) === 1 ? true : undefined), 60_000);
        exp.child.stderr?.destroy();
        exp.child.kill('SIGHUP');
        let ok = 0;
        let failed = 0;
        const t0 = performance.now();
        let body = '';
        // Three intervals of scrapes after the pipe broke.
        while (performance.now() - t0 < 3 * INTERVAL_S * 1000 && exp.alive()) {
          try {
            body = await metrics(url);
            ok++;
          } catch {
            failed++;
          }
          await new Promise((r) => setTimeout(r, 200));
        }
        rows.push(['EPIPE (stderr reader closed, then a reload logs): exporter 15 s later', exp.alive() ? 'alive' : exp.exit()]);
        rows.push(['EPIPE: /metrics answers during those 15 s', `${ok} of ${ok + failed}`]);
        rows.push(['EPIPE: cbwatch_log_lines_dropped_total{reason="closed"}', body.includes('cbwatch_log_lines_dropped_total') ? String(sumSeries(body, 'cbwatch_log_lines_dropped_total', 'reason="closed"')) : 'absent']);
        rows.push(['EPIPE: buckets success at the end', String(BUCKETS_SUCCESS(body) ?? 'absent')]);
      } finally {
        await stop(exp);
      }
    }
    // A full disk: stderr is /dev/full from the start.
    {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const full = openSync('/dev/full', 'w');
      const exp = track(spawn(EXPORTER_CLI, ['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`], { env, stdio: ['ignore', 'ignore', full] }));
      closeSync(full);
      try {
        const body = await until(
          'exporter polled',
          async () => {
            if (!exp.alive()) return '';
            const b = await metrics(url);
            return BUCKETS_SUCCESS(b) === 1 ? b : undefined;
          },
          60_000,
        );
        rows.push(['stderr on /dev/full: exporter', exp.alive() ? 'alive, serving, buckets success 1' : exp.exit()]);
        rows.push(['stderr on /dev/full: cbwatch_log_lines_dropped_total{reason="no_space"}', body.includes('cbwatch_log_lines_dropped_total') ? String(sumSeries(body, 'cbwatch_log_lines_dropped_total', 'reason="no_space"')) : 'absent']);
        rows.push(['stderr on /dev/full: SIGTERM', await stop(exp)]);
      } finally {
        await stop(exp);
      }
    }
    return rows;
  });
}
