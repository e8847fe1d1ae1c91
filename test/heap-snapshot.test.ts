/**
 * `--debug.heap-snapshot-dir`: a real daemon polling the simulator writes one heap snapshot per thread on SIGUSR2,
 * and none (and keeps running) when the flag is not set.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CBWATCH_BIN, simulatorForFile } from './helpers/bin.js';

const simulator = simulatorForFile();
const children: ChildProcess[] = [];
let lastScrape = '';

afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await gone;
  }
});

/** `cbwatch run` on the simulator (buckets only), `cwd` as its working directory; resolves once it has polled. */
async function daemon(cwd: string, extra: string[]): Promise<{ child: ChildProcess; output(): string; url: string }> {
  const child = spawn(
    process.execPath,
    [CBWATCH_BIN, 'run', '--couchbase.url', simulator.url, '--couchbase.username', 'Administrator', '--web.listen-address', '127.0.0.1:0', '--log.level', 'info', ...extra],
    { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CBWATCH_COUCHBASE_PASSWORD: simulator.sim.ctx.options.users.admin.password } },
  );
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const output = (): string => out;
  await until('cbwatch started', () => /cbwatch started/.test(out), child, output);
  const url = /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1] as string;
  // A poll has been served: the snapshots show the heaps as they are between polls.
  await until('a poll', () => /cbwatch_collector_success\{[^}]*collector="buckets"[^}]*\} 1/.test(lastScrape), child, output, async () => {
    lastScrape = await (await fetch(`${url}/metrics`)).text();
  });
  return { child, output, url };
}

async function until(what: string, cond: () => boolean, child: ChildProcess, output: () => string, step?: () => Promise<void>): Promise<void> {
  const end = Date.now() + 90_000;
  for (;;) {
    if (step) await step().catch(() => undefined);
    if (cond()) return;
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the daemon exited (${child.exitCode ?? child.signalCode}) waiting for ${what}:\n${output().slice(-2000)}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}:\n${output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const snapshots = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot')).sort();

describe('--debug.heap-snapshot-dir', () => {
  const expectSnapshots = (dir: string, files: string[]): void => {
    for (const f of files) {
      expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
      // V8's heap snapshot format: a JSON object whose meta describes the node and edge fields.
      const snap = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { snapshot: { meta: { node_fields: string[] }; node_count: number }; strings: string[] };
      expect(snap.snapshot.meta.node_fields).toContain('self_size');
      expect(snap.snapshot.node_count).toBeGreaterThan(1000);
    }
  };

  it('with --collection.inline, makes SIGUSR2 write one heap snapshot of the daemon (one isolate), readable by the owner only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-heap-'));
    const d = await daemon(tmpdir(), ['--debug.heap-snapshot-dir', dir, '--collection.inline']);
    d.child.kill('SIGUSR2');
    await until('heap snapshots written', () => /heap snapshots written/.test(d.output()), d.child, d.output);
    const files = snapshots(dir);
    expect(files).toEqual([expect.stringMatching(new RegExp(`^cbwatch-\\d{8}T\\d{6}Z-${d.child.pid}-daemon\\.heapsnapshot$`))]);
    expectSnapshots(dir, files);
    // The daemon goes on serving.
    expect((await fetch(`${d.url}/metrics`)).status).toBe(200);
  });

  it('makes SIGUSR2 write a heap snapshot of the collection thread and one of the HTTP thread, readable by the owner only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-heap-'));
    const d = await daemon(tmpdir(), ['--debug.heap-snapshot-dir', dir]);
    d.child.kill('SIGUSR2');
    await until('heap snapshots written', () => /heap snapshots written/.test(d.output()), d.child, d.output);
    const files = snapshots(dir);
    expect(files).toHaveLength(2);
    expect(files.find((f) => f.endsWith(`-${d.child.pid}-collection.heapsnapshot`))).toBeDefined();
    expect(files.find((f) => f.endsWith(`-${d.child.pid}-http.heapsnapshot`))).toBeDefined();
    expectSnapshots(dir, files);
    expect((await fetch(`${d.url}/metrics`)).status).toBe(200);
  });

  it('is off unless set: SIGUSR2 is logged and ignored, no file is written and the daemon goes on serving', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cbwatch-heap-off-'));
    const d = await daemon(cwd, []);
    d.child.kill('SIGUSR2');
    await until('the signal logged', () => /SIGUSR2 ignored: heap snapshots are off/.test(d.output()), d.child, d.output);
    expect((await fetch(`${d.url}/metrics`)).status).toBe(200);
    expect(d.child.exitCode).toBeNull();
    expect(d.child.signalCode).toBeNull();
    expect(snapshots(cwd)).toEqual([]);
    expect(d.output()).not.toMatch(/writing heap snapshots/);
  });

  it('refuses a directory that does not exist, naming the flag (exit 2)', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'cbwatch-heap-missing-')), 'nope');
    const child = spawn(process.execPath, [CBWATCH_BIN, 'run', '--couchbase.url', simulator.url, '--couchbase.username', 'u', '--debug.heap-snapshot-dir', missing], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CBWATCH_COUCHBASE_PASSWORD: 'x' },
    });
    children.push(child);
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(2);
    expect(err).toContain(`--debug.heap-snapshot-dir: ${JSON.stringify(missing)} does not exist`);
  });
});
