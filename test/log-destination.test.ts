/**
 * A log destination that fails never takes the exporter down (issue 25, item 5): the real process, its stderr a
 * pipe whose reader goes away (EPIPE: a log collector restarted under Docker or systemd) or /dev/full (a full
 * disk). Lines are dropped and counted in cbwatch_log_lines_dropped_total{reason}; /metrics keeps answering.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CBWATCH_BIN, simulatorForFile, until } from './helpers/bin.js';

const simulator = simulatorForFile();

function args(listen: string): string[] {
  return ['run', '--couchbase.url', simulator.url, '--couchbase.username', 'Administrator', '--web.listen-address', listen];
}
function env(): NodeJS.ProcessEnv {
  return { ...process.env, CBWATCH_COUCHBASE_PASSWORD: simulator.sim.ctx.options.users.admin.password };
}

/** The value of cbwatch_log_lines_dropped_total{reason}, or undefined when /metrics does not answer. */
async function dropped(url: string, reason: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`cbwatch_log_lines_dropped_total{reason="${reason}"} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  } catch {
    return undefined;
  }
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (!alive(child)) return child.exitCode;
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** A port the system handed out just now (closed again for the exporter to take). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('a failing log destination', () => {
  it('the reader of the stderr pipe gone (EPIPE): lines dropped and counted, /metrics still served', async () => {
    const child = spawn(process.execPath, [CBWATCH_BIN, ...args('127.0.0.1:0')], { stdio: ['ignore', 'ignore', 'pipe'], env: env() });
    try {
      let out = '';
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      const url = await until('start', () => /"url":"(http:\/\/[^"]+)"[^\n]*cbwatch started/.exec(out)?.[1]);
      expect((await fetch(`${url}/metrics`)).status).toBe(200);
      // The reader goes away; a reload then logs a few lines into the broken pipe. Before the fix the first one
      // was an uncaught EPIPE and the process died.
      child.stderr?.destroy();
      child.kill('SIGHUP');
      const n = await until('a dropped line counted', async () => {
        if (!alive(child)) throw new Error(`cbwatch exited ${child.exitCode ?? child.signalCode}`);
        const v = await dropped(url, 'closed');
        return v !== undefined && v > 0 ? v : undefined;
      });
      expect(n).toBeGreaterThan(0);
      expect(alive(child)).toBe(true);
      expect((await fetch(`${url}/metrics`)).status).toBe(200);
      expect(await stop(child)).toBe(0);
    } finally {
      if (alive(child)) child.kill('SIGKILL');
    }
  }, 60_000);

  it('stderr on a full disk (/dev/full): the process starts and serves, the lines counted as no_space', async () => {
    const port = await freePort();
    const full = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, [CBWATCH_BIN, ...args(`127.0.0.1:${port}`)], { stdio: ['ignore', 'ignore', full], env: env() });
    closeSync(full);
    try {
      const url = `http://127.0.0.1:${port}`;
      // Before the fix: exit 1 at start, with no message (there was nowhere to write it).
      const n = await until('served with lines dropped', async () => {
        if (!alive(child)) throw new Error(`cbwatch exited ${child.exitCode ?? child.signalCode}`);
        const v = await dropped(url, 'no_space');
        return v !== undefined && v > 0 ? v : undefined;
      });
      expect(n).toBeGreaterThan(0);
      expect(await stop(child)).toBe(0);
    } finally {
      if (alive(child)) child.kill('SIGKILL');
    }
  }, 60_000);
});


describe('FdDestination on a pipe nobody reads', () => {
  it('drops and counts lines as would_block once the pipe is full, instead of blocking the thread', async () => {
    const { FdDestination, onLogDrop } = await import('../src/log.js');
    // The write end of a pipe to a process that never reads it (non-blocking, as Node opens it).
    const reader = spawn('sleep', ['30'], { stdio: ['pipe', 'ignore', 'ignore'] });
    try {
      const fd = (reader.stdin as unknown as { _handle: { fd: number } })._handle.fd;
      expect(fd).toBeGreaterThan(2);
      const reasons: string[] = [];
      onLogDrop((r) => reasons.push(r));
      const dest = new FdDestination(fd);
      const line = `${'x'.repeat(1023)}\n`;
      // 1 MiB into a pipe of 64 KiB: the first lines fit, the rest is dropped (the first drop after its wait).
      for (let i = 0; i < 1024; i++) dest.write(line);
      expect(reasons.length).toBeGreaterThan(900);
      expect(new Set(reasons)).toEqual(new Set(['would_block']));
    } finally {
      reader.kill('SIGKILL');
    }
  });
});
