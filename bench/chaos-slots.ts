/**
 * `CHAOS_PARTS=slots npm run chaos` (issue 25, item 2): request slots under the two floods that used to lock
 * scrapes out, each beside a correctly authenticated scraper (basic auth on, its password already checked)
 * that asks /metrics and /-/ready every 250 ms:
 *
 *  - trickle: 45 connections sending `POST /metrics` bodies at one byte per 2 s, once without credentials and
 *    once with the right password (a client that holds them); a connection the exporter closes is opened again
 *    250 ms later (an attacker keeps the pressure on);
 *  - bcrypt: 64 connections sending GET /metrics with a new wrong password each time.
 *
 * The exporter runs as users run it (`cbwatch run` through the launcher, or BENCH_EXPORTER_CLI for a
 * before/after), against `cbwatch simulate`, every collector polling every 5 s; observed only over HTTP.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { CLI, EXPORTER_CLI, freePort, waitFor } from './common.js';
import { fmt, percentile } from './chaos-lib.js';
import { counts, flood } from './chaos-flood.js';

type Rows = Array<[string, string]>;

const FLOOD_SECONDS = Number(process.env.CHAOS_SLOTS_SECONDS ?? 35);
const RIGHT = 'chaos-right-password';
const basic = (p: string): string => `Basic ${Buffer.from(`prometheus:${p}`).toString('base64')}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function start(cli: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(cli, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'ignore'] });
  child.on('error', () => undefined);
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(t);
}

async function get(url: string, auth: string, timeoutMs = 10_000): Promise<{ status: number; body: string; ms: number }> {
  const t0 = performance.now();
  try {
    const r = await fetch(url, { headers: { authorization: auth }, signal: AbortSignal.timeout(timeoutMs) });
    const body = await r.text();
    return { status: r.status, body, ms: performance.now() - t0 };
  } catch {
    return { status: 0, body: '', ms: performance.now() - t0 };
  }
}

/** The authenticated scraper: /metrics and /-/ready every 250 ms until `done()`; outcomes counted by status. */
async function scraper(url: string, done: () => boolean): Promise<{ metrics: Map<number, number>; ready: Map<number, number>; lat: number[] }> {
  const metrics = new Map<number, number>();
  const ready = new Map<number, number>();
  const lat: number[] = [];
  while (!done()) {
    const t0 = performance.now();
    const [m, r] = await Promise.all([get(`${url}/metrics`, basic(RIGHT)), get(`${url}/-/ready`, basic(RIGHT))]);
    metrics.set(m.status, (metrics.get(m.status) ?? 0) + 1);
    ready.set(r.status, (ready.get(r.status) ?? 0) + 1);
    lat.push(m.ms);
    await sleep(Math.max(0, 250 - (performance.now() - t0)));
  }
  return { metrics, ready, lat };
}

const answered = (m: Map<number, number>): string => {
  const total = [...m.values()].reduce((a, b) => a + b, 0);
  const others = [...m].filter(([s]) => s !== 200).map(([s, n]) => `${n} × ${s === 0 ? 'no answer in 10 s' : s}`);
  return `${m.get(200) ?? 0} of ${total} answered 200${others.length ? ` (${others.join(', ')})` : ''}`;
};

/** 45 slow POST /metrics senders, re-opened 250 ms after the exporter closes one; what they were answered. */
async function trickleFlood(port: number, done: () => boolean, auth: string | undefined): Promise<{ opened: number; statuses: Map<string, number>; firstAnswerMs: number[] }> {
  const statuses = new Map<string, number>();
  const firstAnswerMs: number[] = [];
  let opened = 0;
  const live = new Set<Socket>();
  const one = (): void => {
    if (done()) return;
    opened++;
    const t0 = performance.now();
    const s = connect(port, '127.0.0.1');
    live.add(s);
    let head = '';
    s.on('error', () => undefined);
    s.on('data', (d: Buffer) => {
      if (head === '') firstAnswerMs.push(performance.now() - t0);
      head += d.toString('latin1');
    });
    s.write(`POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth === undefined ? '' : `Authorization: ${auth}\r\n`}Content-Type: text/plain\r\nContent-Length: 1000\r\n\r\nx`);
    const drip = setInterval(() => {
      if (!s.destroyed) s.write('x');
    }, 2_000);
    s.once('close', () => {
      clearInterval(drip);
      live.delete(s);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 'closed unanswered';
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      setTimeout(one, 250);
    });
  };
  for (let i = 0; i < 45; i++) one();
  while (!done()) await sleep(200);
  for (const s of live) s.destroy();
  return { opened, statuses, firstAnswerMs };
}

/** 64 connections sending a new wrong password on every request; statuses counted. */
async function bcryptFlood(port: number, done: () => boolean): Promise<Map<string, number>> {
  let n = 0;
  return (await flood(port, 64, done, () => ({ path: '/metrics', headers: { authorization: basic(`wrong-${n++}`) } }))).statuses;
}

/** Both floods, each for FLOOD_SECONDS beside the authenticated scraper, against one exporter with basic auth on. */
export async function caseSlots(log: (s: string) => void): Promise<Rows> {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-chaos-slots-'));
  const simPort = await freePort();
  const sim = start(CLI, ['simulate', '--port', String(simPort), '--buckets', '3']);
  let exp: ChildProcess | undefined;
  try {
    const simUrl = `http://127.0.0.1:${simPort}`;
    await waitFor('simulator', async () => ((await fetch(`${simUrl}/_sim/state`)).ok ? true : undefined));
    writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  prometheus: ${bcrypt.hashSync(RIGHT, 10)}\n`);
    const collectors = ['buckets', 'bucket_stats', 'xdcr', 'nodes', 'tasks', 'autofailover', 'certificates', 'security', 'collections', 'search', 'backup'];
    writeFileSync(
      join(dir, 'cbwatch.yml'),
      ['clusters:', '  - name: chaos', `    url: ${simUrl}`, '    username: Administrator', '    password_env: CHAOS_CB_PASSWORD', '    collectors:', ...collectors.map((c) => `      ${c}: { interval: 5s }`), ''].join('\n'),
    );
    const port = await freePort();
    exp = start(EXPORTER_CLI, ['run', '--config', join(dir, 'cbwatch.yml'), '--web.config.file', join(dir, 'web.yml'), '--web.listen-address', `127.0.0.1:${port}`], { CHAOS_CB_PASSWORD: 'password' });
    const url = `http://127.0.0.1:${port}`;
    await waitFor('exporter ready', async () => ((await get(`${url}/-/ready`, basic(RIGHT))).status === 200 ? true : undefined), 120_000);
    const rows: Rows = [
      ['exporter', `${EXPORTER_CLI === CLI ? 'this checkout' : EXPORTER_CLI}; --web.max-requests 40 (default); basic auth on (bcrypt cost 10); every collector every 5 s`],
      ['scraper', 'GET /metrics and /-/ready every 250 ms with the right password (checked once before the flood), 10 s timeout'],
    ];

    for (const [who, auth] of [
      ['no credentials', undefined],
      ['the right password', basic(RIGHT)],
    ] as const) {
      log(`slots: trickling POST /metrics flood (${who}), ${FLOOD_SECONDS} s`);
      const end = Date.now() + FLOOD_SECONDS * 1000;
      const done = (): boolean => Date.now() > end;
      const [t, s1] = await Promise.all([trickleFlood(port, done, auth), scraper(url, done)]);
      rows.push(
        [`trickle flood, ${who}`, `45 connections, POST /metrics with a 1,000-byte body at 1 byte per 2 s, ${who}, re-opened 250 ms after a close; ${FLOOD_SECONDS} s`],
        ['– the senders were answered', `${counts(t.statuses)} over ${t.opened} connections; first answer byte after median ${fmt(percentile(t.firstAnswerMs, 50), 0)} ms, max ${fmt(Math.max(...t.firstAnswerMs), 0)} ms`],
        ['– authenticated /metrics', `${answered(s1.metrics)}; p99 ${fmt(percentile(s1.lat, 99), 0)} ms`],
        ['– authenticated /-/ready', answered(s1.ready)],
      );
      await sleep(2_000);
    }

    log(`slots: wrong-password flood, ${FLOOD_SECONDS} s`);
    const end = Date.now() + FLOOD_SECONDS * 1000;
    const done = (): boolean => Date.now() > end;
    const [b, s2] = await Promise.all([bcryptFlood(port, done), scraper(url, done)]);
    rows.push(
      ['bcrypt flood', `64 keep-alive connections, GET /metrics with a new wrong password on every request; ${FLOOD_SECONDS} s`],
      ['– the flood was answered', counts(b)],
      ['– authenticated /metrics', `${answered(s2.metrics)}; p99 ${fmt(percentile(s2.lat, 99), 0)} ms`],
      ['– authenticated /-/ready', answered(s2.ready)],
    );
    return rows;
  } finally {
    if (exp) await stop(exp);
    await stop(sim);
    rmSync(dir, { recursive: true, force: true });
  }
}
