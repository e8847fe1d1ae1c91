/**
 * A real Prometheus (Debian's binary) discovers the simulated nodes through the simulator's
 * /prometheus_sd_config (HTTP service discovery, basic auth) and scrapes each node's native exposition:
 * the SD answer and the text format are what a real Prometheus accepts. Every wait polls its API.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { freePort } from '../../src/tools/prometheus-stack.js';
import { requireBinary } from '../helpers/tools.js';

const prometheus = requireBinary('prometheus');

describe.skipIf(!prometheus)('a real Prometheus scrapes every simulated node found through /prometheus_sd_config', () => {
  let sim: Simulator;
  let proc: ChildProcess | undefined;
  let dir: string;
  let promUrl: string;
  let log = '';

  beforeAll(async () => {
    sim = createSimulator({ version: '8.0.0', knobs: { prometheusSdLocal: true } });
    const base = await sim.listen(0);
    dir = mkdtempSync(join(tmpdir(), 'cbwatch-sim-sd-'));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: couchbase-native',
        '    basic_auth: { username: Administrator, password: password }',
        '    http_sd_configs:',
        `      - url: ${base}/prometheus_sd_config`,
        '        basic_auth: { username: Administrator, password: password }',
        '',
      ].join('\n'),
    );
    proc = spawn(prometheus as string, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stderr?.on('data', (b: Buffer) => {
      log = (log + b.toString()).slice(-20_000);
    });
  });

  afterAll(async () => {
    proc?.kill('SIGTERM');
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds three targets, each up, each with its own bucket series', async () => {
    const query = async (q: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> => {
      const r = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => undefined);
      if (!r?.ok) return [];
      return ((await r.json()) as { data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } }).data.result;
    };
    const deadline = Date.now() + 60_000;
    let items: Array<{ metric: Record<string, string>; value: [number, string] }> = [];
    while (Date.now() < deadline) {
      items = await query('count by (instance) (kv_curr_items)');
      if (items.length === 3) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(items.map((s) => s.metric.instance).sort(), log).toEqual(['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091', 'cb3.cbsim.local:8091']);
    // Three buckets on every node.
    expect(items.map((s) => s.value[1])).toEqual(['3', '3', '3']);
    const up = await query('up{job="couchbase-native"}');
    expect(up.map((s) => s.value[1])).toEqual(['1', '1', '1']);
    // The XDCR series keep goxdcr's labels through the scrape.
    const x = await query('xdcr_changes_left_total');
    expect(x.length).toBeGreaterThan(0);
    expect(x[0]?.metric).toHaveProperty('sourceBucketName');
  });
});
