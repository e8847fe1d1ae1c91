/** The command line, in-process through main() and as the real `bin/cbwatch.js` process. */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { createSimulator } from '../src/simulator/index.js';
import type { Simulator } from '../src/simulator/index.js';

const ROOT = join(import.meta.dirname, '..');

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, (s) => void (out += s), (s) => void (err += s));
  return { code, out, err };
}

let sim: Simulator;
let simUrl: string;
const savedEnv = { ...process.env };
beforeAll(async () => {
  sim = createSimulator();
  simUrl = await sim.listen();
});
afterAll(async () => {
  await sim.close();
});
afterEach(() => {
  process.env = { ...savedEnv };
});

describe('cbwatch (in-process)', () => {
  it('prints its version and usage', async () => {
    expect((await run(['--version'])).out).toMatch(/^cbwatch \d+\.\d+\.\d+/);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--couchbase.url');
  });

  it('exits 2 naming an unknown flag', async () => {
    const r = await run(['--couchbase.urll', 'http://x']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--couchbase.urll');
  });

  it('refuses a password on the command line without echoing it', async () => {
    const r = await run(['check', '--couchbase.password', 'hunter2-secret']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('CBWATCH_COUCHBASE_PASSWORD');
    expect(r.err).not.toContain('hunter2-secret');
  });

  it('--config.check: 0 for a valid file, 2 naming the key for a bad one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-cli-'));
    const good = join(dir, 'good.yml');
    writeFileSync(good, `clusters:\n  - name: a\n    url: ${simUrl}\n    username: Administrator\n    password_env: CLI_TEST_PW\n`);
    process.env.CLI_TEST_PW = 'password';
    const ok = await run(['run', '--config', good, '--config.check']);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('configuration is valid');
    expect(ok.out).not.toContain('password\n');
    const bad = join(dir, 'bad.yml');
    writeFileSync(bad, `clusters:\n  - url: ${simUrl}\n    collectors:\n      search: { slow_query_threshold: 10x }\n`);
    const ko = await run(['run', '--config', bad, '--config.check']);
    expect(ko.code).toBe(2);
    expect(ko.err).toContain('clusters[0].collectors.search.slow_query_threshold');
  });

  it('check: table and exit 0 against the simulator', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'password';
    const r = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator']);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/CLUSTER\s+COLLECTOR\s+ENDPOINT\s+STATUS\s+LATENCY\s+SERIES\s+DETAIL/);
    expect(r.out).toContain('/pools/default/buckets/{bucket}/stats');
    expect(r.out).toContain('all collectors succeeded');
    expect(r.code).toBe(0);
  });

  it('check: exit 1 and a 401 with a wrong password', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'wrong-password';
    const r = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator']);
    expect(r.code).toBe(1);
    expect(r.out).toContain('401');
    expect(r.out).not.toContain('wrong-password');
  });

  it('check: names the missing permission on a 403', async () => {
    process.env.CBWATCH_COUCHBASE_PASSWORD = 'password';
    sim.ctx.faults.add({ match: '/pools/default/buckets', kind: 'forbidden', permissions: ['cluster.bucket[.].settings!read'] });
    try {
      const r = await run(['check', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator']);
      expect(r.code).toBe(1);
      expect(r.out).toContain('missing permission: cluster.bucket[.].settings!read');
    } finally {
      sim.ctx.faults.clear();
    }
  });
});

describe('bin/cbwatch.js demo (a real process)', () => {
  it('serves realistic bucket metrics, prints its URLs, and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'cbwatch.js'), 'demo', '--web.listen-address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', () => undefined);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 30_000);
        const check = (): void => {
          const m = /metrics:\s+(http:\/\/[^\s]+)\/metrics/.exec(out);
          if (m) {
            clearTimeout(t);
            resolve(m[1] as string);
          } else setTimeout(check, 50);
        };
        check();
      });
      expect(out).toContain('simulator:');
      for (let i = 0; i < 200; i++) {
        if ((await fetch(`${url}/-/ready`)).status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const text = await (await fetch(`${url}/metrics`)).text();
      expect(text).toMatch(/couchbase_bucket_ops_per_second\{couchbase_cluster="demo",bucket="travel-sample"\} [\d.]+/);
      expect(text).toContain('cbwatch_collector_success{couchbase_cluster="demo",collector="bucket_stats"} 1');
    } finally {
      const code = await new Promise<number | null>((resolve) => {
        child.once('exit', (c) => resolve(c));
        child.kill('SIGTERM');
      });
      expect(code).toBe(0);
    }
  }, 60_000);
});
