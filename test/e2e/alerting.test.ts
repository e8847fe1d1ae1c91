/**
 * End to end: the Couchbase simulator in its `incident` scenario, cbwatch in-process, a real Prometheus
 * loading alerts/cbwatch.rules.yml (every `for:` shortened by templating a copy, never the shipped file) and a
 * real Alertmanager whose webhook receiver is this test. Asserts that the incident's alerts reach the
 * receiver, that every dashboard panel query has data, and that stopping cbwatch raises CbwatchExporterDown.
 * Every wait polls an API; nothing sleeps for a fixed time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/types.js';
import { startDaemon } from '../../src/daemon.js';
import type { Daemon } from '../../src/daemon.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { DASHBOARDS } from '../../src/tools/gen-dashboards.js';
import { startPrometheusStack } from '../../src/tools/prometheus-stack.js';
import type { PrometheusStack } from '../../src/tools/prometheus-stack.js';
import { dashboardQueries, e2eCbwatchConfig, expectQueriesHaveData, getJson, pollUntil, postSyncGatewayChanges, writeShortenedAlertRules } from '../helpers/prometheus.js';
import type { QueryAnswer } from '../helpers/prometheus.js';
import { requireBinary } from '../helpers/tools.js';

const prometheus = requireBinary('prometheus');
const alertmanager = requireBinary('prometheus-alertmanager', 'alertmanager');

/** The incident's alerts that must reach the receiver (DESIGN.md, issue 7; the disk at 92% in the simulator, issue 14). */
const INCIDENT_ALERTS = ['CouchbaseCertificateExpiryCritical', 'CouchbaseXdcrBacklogGrowing', 'CouchbaseAutoFailoverExhausted', 'CouchbaseDiskSpaceCritical'];

/**
 * Panels allowed to return no data in the incident scenario, by dashboard uid and title, each with why.
 * A panel listed here that no longer exists fails the test, so the list cannot rot.
 */
const NO_DATA_EXCEPTIONS: Record<string, string> = {
  'cbwatch-overview/Rebalance progress': 'only while a rebalance runs; the incident scenario has a failed, finished one',
  'cbwatch-certificates/Node-to-node encryption': 'the family is absent when node-to-node encryption is off, as in the simulator',
  'cbwatch-exporter/Skipped items': 'shows only items skipped (> 0); the simulator serves well-formed payloads',
  'cbwatch-exporter/Collectors not applicable': 'shows only collectors that do not apply (== 0); the simulator runs every service',
  'cbwatch-exporter/Failed requests by endpoint': 'shows only non-2xx requests; the simulator answers every request cbwatch makes',
  "cbwatch-overview/Couchbase's own alerts": 'shows only kinds with alerts listed (> 0); the simulator lists none in /pools/default',
  'cbwatch-buckets/Replicas configured and available': "available replicas come from the bucket list's vBucketServerMap, which the simulator does not serve",
  'cbwatch-index/Build progress': 'shows only index replicas that are building; the incident scenario builds none (the demo does: test/e2e/dashboards-demo.test.ts)',
  'cbwatch-query/Timeouts, cancelled and prepared': 'served from 7.0 on by the range API only; this test reads the envelopes (the demo test reads the range API)',
  'cbwatch-query/Memory': 'served from 7.6 on by the range API only; this test reads the envelopes (the demo test reads the range API)',
  'cbwatch-query/Load': 'served from 7.0 on by the range API only; this test reads the envelopes (the demo test reads the range API)',
};

interface Received {
  readonly alertname: string;
  readonly status: string;
}

/** The webhook receiver Alertmanager posts to. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { alerts?: { status: string; labels: Record<string, string> }[] };
        for (const a of body.alerts ?? []) received.push({ alertname: a.labels.alertname ?? '', status: a.status });
      } catch {
        /* not a notification */
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/alerts`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const WEBHOOK_TOKEN = 'e2e-webhook-token-0123456789';
const WEBHOOK_DB = 'travel';

/**
 * Collectors polling every second, per-node bucket stats on, the search cancel policy in dry-run mode, and
 * the Sync Gateway webhook receiver on (so the webhook panels have data).
 */
function e2eConfig(simUrl: string): Config {
  // Polls every second: the envelopes (one sample per second). The range API's points are 10 s apart, so its
  // rates move every 10 s; test/stats/equivalence.test.ts compares the two sources.
  return e2eCbwatchConfig({ simUrl, collectors: { bucket_stats: { per_node: true } }, cluster: { statsSource: 'envelope' }, webhookDb: WEBHOOK_DB, webhookToken: WEBHOOK_TOKEN });
}

describe.skipIf(!prometheus || !alertmanager)('alerting end to end (simulator → cbwatch → Prometheus → Alertmanager)', () => {
  let dir = '';
  let sim: Simulator | undefined;
  let daemon: Daemon | undefined;
  let stack: PrometheusStack | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;

  const firing = () => new Set((receiver?.received ?? []).filter((r) => r.status === 'firing').map((r) => r.alertname));

  async function diagnostics(): Promise<string> {
    if (!stack) return 'stack not started';
    const alerts = await getJson<{ data: { alerts: { labels: { alertname: string }; state: string }[] } }>(`${stack.prometheusUrl}/api/v1/alerts`).catch((e: Error) => ({ data: { alerts: [] }, error: e.message }));
    const targets = await getJson<{ data: { activeTargets: { health: string; lastError: string; scrapeUrl: string }[] } }>(`${stack.prometheusUrl}/api/v1/targets`).catch(() => ({ data: { activeTargets: [] } }));
    const rules = await getJson<{ data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] } }>(`${stack.prometheusUrl}/api/v1/rules`).catch(() => ({ data: { groups: [] } }));
    const broken = rules.data.groups.flatMap((g) => g.rules).filter((r) => r.health !== 'ok' && r.health !== 'unknown');
    return [
      `received by the webhook: ${JSON.stringify(receiver?.received ?? [])}`,
      `Prometheus alerts: ${alerts.data.alerts.map((a) => `${a.labels.alertname}=${a.state}`).join(', ') || 'none'}`,
      `targets: ${JSON.stringify(targets.data.activeTargets.map((t) => ({ url: t.scrapeUrl, health: t.health, err: t.lastError })))}`,
      `rules with errors: ${JSON.stringify(broken)}`,
      `prometheus log:\n${stack.logs().prometheus}`,
      `alertmanager log:\n${stack.logs().alertmanager}`,
    ].join('\n');
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cbwatch-e2e-'));
    receiver = await startReceiver();
    // speed 60: one real second is a simulated minute, so the auto-failover budget (one failover per 120 s
    // simulated) is used up within seconds while the CA (3 days) stays under the 7-day threshold.
    // One node also runs the Eventing service (by default none does), so the eventing panels have functions to show.
    sim = createSimulator({ scenario: 'incident', speed: 60, knobs: { eventingNodes: 1 } });
    const simUrl = await sim.listen(0);
    daemon = await startDaemon({ config: e2eConfig(simUrl), logger: pino({ level: 'silent' }), processMetrics: true });
    await daemon.ready();
    await postSyncGatewayChanges(daemon.url, WEBHOOK_DB, WEBHOOK_TOKEN);
    const rulesFile = writeShortenedAlertRules(dir);
    stack = await startPrometheusStack({
      exporterUrl: daemon.url,
      rulesFile,
      dataDir: dir,
      scrapeInterval: '1s',
      evaluationInterval: '1s',
      webhookUrl: receiver.url,
      groupWait: '1s',
      groupInterval: '1s',
    });
  }, 90_000);

  afterAll(async () => {
    // Each step on its own, so one failure does not leave the others running.
    await stack?.stop().catch(() => undefined);
    await daemon?.close().catch(() => undefined);
    await sim?.close().catch(() => undefined);
    await receiver?.close().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('the incident alerts reach the Alertmanager webhook', async () => {
    await pollUntil(
      () => (INCIDENT_ALERTS.every((a) => firing().has(a)) ? true : undefined),
      120_000,
      async () => `missing at the receiver: ${INCIDENT_ALERTS.filter((a) => !firing().has(a)).join(', ')}\n${await diagnostics()}`,
    );
    expect([...firing()]).toEqual(expect.arrayContaining(INCIDENT_ALERTS));
  }, 150_000);

  it('every dashboard panel query returns data (exceptions listed with a reason)', async () => {
    const s = stack as PrometheusStack;
    const panels = dashboardQueries({ panelsOnly: true, exceptions: NO_DATA_EXCEPTIONS, what: 'exceptions naming no panel' });
    expect(Object.keys(DASHBOARDS).length).toBe(9);

    const query = async (expr: string): Promise<QueryAnswer> => getJson(`${s.prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    // rate() over the 5m window needs two scrapes of every counter; poll until the set of empty panels is
    // only the listed exceptions, or report what stays empty.
    await expectQueriesHaveData(query, panels, NO_DATA_EXCEPTIONS, 45_000, 'panels');
  }, 60_000);

  it('CbwatchExporterDown reaches the receiver once cbwatch stops', async () => {
    expect(firing().has('CbwatchExporterDown')).toBe(false);
    await (daemon as Daemon).close();
    await pollUntil(() => (firing().has('CbwatchExporterDown') ? true : undefined), 60_000, async () => `CbwatchExporterDown not received\n${await diagnostics()}`);
  }, 75_000);
});
