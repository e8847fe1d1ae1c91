/**
 * The demo tells the truth: every alert the shipped rules fire on the demo scenario has its item under "Needs a
 * look" on the landing page, linked to that alert's runbook entry. The simulator runs the `demo` scenario at real
 * speed, cbwatch polls it as `cbwatch demo` does (every collector at most every 10 s), and a real Prometheus loads
 * a copy of alerts/cbwatch.rules.yml with every `for:` at 2 s (test/helpers/prometheus.ts): so the alerts that
 * fire are every alert whose condition holds in the demo, whatever its `for:`. Checked while the demo's flapping
 * node is unhealthy (20–140 s of every 10 minutes), which must be among them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultClusterConfig, resolveCollectors } from '../../src/config/defaults.js';
import type { Config } from '../../src/config/types.js';
import { startDaemon } from '../../src/daemon.js';
import type { Daemon } from '../../src/daemon.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startPrometheusStack } from '../../src/tools/prometheus-stack.js';
import type { PrometheusStack } from '../../src/tools/prometheus-stack.js';
import { getJson, pollUntil, writeShortenedAlertRules } from '../helpers/prometheus.js';
import { requireBinary } from '../helpers/tools.js';

const prometheus = requireBinary('prometheus');
const alertmanager = requireBinary('prometheus-alertmanager', 'alertmanager');

interface Alert {
  readonly labels: Readonly<Record<string, string>>;
  readonly state: string;
}

describe.skipIf(!prometheus || !alertmanager)('the demo: every firing alert has its item under "Needs a look"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-demo-alerts-'));
  let sim: Simulator | undefined;
  let daemon: Daemon | undefined;
  let stack: PrometheusStack | undefined;

  afterAll(async () => {
    await stack?.stop();
    await daemon?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each alert firing while the flapping node is unhealthy links from an item of the landing page', async () => {
    sim = createSimulator({ scenario: 'demo' });
    const simUrl = await sim.listen(0);
    const collectors = resolveCollectors();
    // As `cbwatch demo` sets them (src/commands/demo.ts).
    for (const c of Object.values(collectors)) {
      c.interval = Math.min(c.interval, 10_000);
      c.timeout = Math.min(c.timeout, 9_000);
    }
    const users = sim.ctx.options.users;
    const config: Config = {
      clusters: [defaultClusterConfig({ name: 'demo', url: simUrl, username: users.admin.username, password: users.admin.password, collectors })],
      webhooks: { syncGateway: undefined },
      web: { listenHost: '127.0.0.1', listenPort: 0, configFile: undefined },
      log: { level: 'silent', format: 'json' },
    };
    daemon = await startDaemon({ config, logger: pino({ level: 'silent' }), processMetrics: false });
    const url = daemon.url;
    stack = await startPrometheusStack({ exporterUrl: url, rulesFile: writeShortenedAlertRules(dir), scrapeInterval: '1s', dataDir: join(dir, 'stack') });
    const promUrl = stack.prometheusUrl;
    const firing = async (): Promise<Alert[]> =>
      (await getJson<{ data: { alerts: Alert[] } }>(`${promUrl}/api/v1/alerts`)).data.alerts.filter((a) => a.state === 'firing' && a.labels.couchbase_cluster === 'demo');

    // The node flaps from 20 s; the check runs once its alert fires and the other alerts had 30 s to settle.
    const started = Date.now();
    const alerts = await pollUntil(
      async () => {
        const list = await firing();
        return Date.now() - started > 50_000 && list.some((a) => a.labels.alertname === 'CouchbaseNodeUnhealthy') ? list : undefined;
      },
      120_000,
      async () => `firing: ${(await firing()).map((a) => a.labels.alertname).join(', ') || 'none'}\nprometheus log:\n${stack?.logs().prometheus ?? ''}`,
    );
    const html = await (await fetch(`${url}/`)).text();
    const section = /<h2>Needs a look<\/h2>(.*?)<h2>Collectors<\/h2>/s.exec(html)?.[1] ?? '';
    const linked = new Set([...section.matchAll(/alerts\/runbook\.md#([a-z0-9]+)"/g)].map((m) => m[1]));
    const names = [...new Set(alerts.map((a) => a.labels.alertname as string))].sort();
    expect(names).toContain('CouchbaseNodeUnhealthy');
    const without = names.filter((n) => !linked.has(n.toLowerCase()));
    expect(without, `alerts firing with no item under "Needs a look":\n${section}`).toEqual([]);
  }, 240_000);
});
