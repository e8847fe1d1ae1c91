/**
 * A real Prometheus (the Debian binary) scrapes cbwatch, asking for OpenMetrics first as it does by default:
 * its OpenMetrics parser must accept the answer (it refuses a body without `# EOF`, or a counter sample whose
 * family is not its name without `_total`), and counters, gauges and histograms must arrive.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPrometheusStack } from '../../src/tools/prometheus-stack.js';
import type { PrometheusStack } from '../../src/tools/prometheus-stack.js';
import { startHarness } from '../helpers/daemon.js';
import type { Harness } from '../helpers/daemon.js';
import { requireBinary } from '../helpers/tools.js';

const prometheus = requireBinary('prometheus');
const alertmanager = requireBinary('prometheus-alertmanager', 'alertmanager');

async function query(stack: PrometheusStack, expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const res = await fetch(`${stack.prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  return ((await res.json()) as { data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } }).data.result;
}

describe.skipIf(!prometheus || !alertmanager)('Prometheus scrapes cbwatch in OpenMetrics', () => {
  let h: Harness;
  let stack: PrometheusStack;
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-om-'));

  beforeAll(async () => {
    h = await startHarness({ intervalMs: 2000 });
    await h.daemon.ready();
    stack = await startPrometheusStack({ exporterUrl: h.daemon.url, dataDir: dir, scrapeInterval: '1s', evaluationInterval: '1s', groupWait: '1s', groupInterval: '1s' });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the target is up and counters, gauges and histograms are ingested', async () => {
    // The Accept header Prometheus sends prefers OpenMetrics: the daemon answers with it.
    const res = await fetch(`${h.daemon.url}/metrics`, { headers: { accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' } });
    expect(res.headers.get('content-type')).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect((await res.text()).endsWith('# EOF\n')).toBe(true);
    await vi.waitFor(
      async () => {
        const targets = (await (await fetch(`${stack.prometheusUrl}/api/v1/targets`)).json()) as { data: { activeTargets: Array<{ health: string; lastError: string }> } };
        expect(targets.data.activeTargets.map((t) => [t.health, t.lastError])).toEqual([['up', '']]);
        expect((await query(stack, 'couchbase_up'))[0]?.value[1]).toBe('1');
        expect((await query(stack, 'sum(cbwatch_couchbase_requests_total)')).length).toBe(1);
        expect((await query(stack, 'cbwatch_couchbase_request_duration_seconds_bucket')).length).toBeGreaterThan(0);
        expect(Number((await query(stack, 'cbwatch_http_requests_served_total{handler="/metrics",code="200"}'))[0]?.value[1])).toBeGreaterThan(0);
      },
      { timeout: 60_000, interval: 500 },
    );
  }, 90_000);
});
