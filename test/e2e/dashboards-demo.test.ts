/**
 * End to end, the service dashboards against the demo: the simulator in its `demo` scenario (an index building, a
 * paused function, bursts of slow queries), cbwatch polling it with every collector on (the range API, as a 7.x
 * cluster is read by default; the service collectors every 10 s), and a real Prometheus scraping cbwatch every second. Every query of the Query, Index
 * and Eventing & Search dashboards (panels and variables) and of the Overview's Services row must return data; the
 * exceptions are listed with why. Polls, never sleeps a fixed time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from '../../src/daemon.js';
import type { Daemon } from '../../src/daemon.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { DASHBOARDS } from '../../src/tools/gen-dashboards.js';
import { isRow } from '../../src/tools/grafana.js';
import { startPrometheusStack } from '../../src/tools/prometheus-stack.js';
import type { PrometheusStack } from '../../src/tools/prometheus-stack.js';
import { dashboardQueries, e2eCbwatchConfig, expectQueriesHaveData, getJson } from '../helpers/prometheus.js';
import type { QueryAnswer } from '../helpers/prometheus.js';
import { requireBinary } from '../helpers/tools.js';

const prometheus = requireBinary('prometheus');
const alertmanager = requireBinary('prometheus-alertmanager', 'alertmanager');

/** The dashboards of the services, every query of which is checked. */
const SERVICE_DASHBOARDS = ['cbwatch-query', 'cbwatch-index', 'cbwatch-search'];

/**
 * Queries allowed to return no data on the demo, by `uid/panel title` (or `uid/variable name`), each with why.
 * A key naming nothing fails the test, so the list cannot rot.
 */
const NO_DATA_EXCEPTIONS: Record<string, string> = {
  'cbwatch-search/Cancel policy actions': 'only once a Search query runs longer than the cancel threshold (5 s here); the demo runs none that long',
};

/**
 * The service collectors poll every 10 s, as `cbwatch demo` runs them: the range API's points are 10 s apart, and a
 * rate or a mean per request needs a point newer than the previous poll's (polled every second, they would be absent
 * nine polls in ten). The others poll every second.
 */
const SERVICE_COLLECTORS = Object.fromEntries(
  ['query', 'index', 'search_index', 'eventing', 'analytics', 'processes'].map((c) => [c, { interval: 10 }]),
) as Parameters<typeof e2eCbwatchConfig>[0]['collectors'];

/** The panel titles of the Overview's Services row (from the dashboard's spec). */
function overviewServicesRow(): string[] {
  const out: string[] = [];
  let row = '';
  for (const item of DASHBOARDS['cbwatch-overview']?.items ?? []) {
    if (isRow(item)) row = item.row;
    else if (row === 'Services') out.push(item.title);
  }
  return out;
}

describe.skipIf(!prometheus || !alertmanager)('service dashboards against the demo (simulator demo → cbwatch → Prometheus)', () => {
  let dir = '';
  let sim: Simulator | undefined;
  let daemon: Daemon | undefined;
  let stack: PrometheusStack | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cbwatch-dash-demo-'));
    sim = createSimulator({ scenario: 'demo' });
    const simUrl = await sim.listen(0);
    daemon = await startDaemon({
      config: e2eCbwatchConfig({ simUrl, collectors: SERVICE_COLLECTORS, webhookDb: 'travel', webhookToken: 'dashboards-demo-webhook-token-0123456789' }),
      logger: pino({ level: 'silent' }),
      processMetrics: false,
    });
    await daemon.ready();
    stack = await startPrometheusStack({ exporterUrl: daemon.url, dataDir: dir, scrapeInterval: '1s', evaluationInterval: '1s' });
  }, 90_000);

  afterAll(async () => {
    // Each step on its own, so one failure does not leave the others running.
    await stack?.stop().catch(() => undefined);
    await daemon?.close().catch(() => undefined);
    await sim?.close().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('every query of the Query, Index and Eventing & Search dashboards and of the Overview Services row returns data (exceptions listed with a reason)', async () => {
    const services = overviewServicesRow();
    expect(services).toEqual(['Query requests and errors', 'Indexes not ready', 'Functions not deployed', 'Search mutations pending']);
    const all = dashboardQueries({ panelsOnly: false, exceptions: NO_DATA_EXCEPTIONS, what: 'exceptions naming nothing' });
    const queries = all.filter((q) => SERVICE_DASHBOARDS.includes(q.key.split('/')[0] as string) || services.some((t) => q.key === `cbwatch-overview/${t}`));
    for (const uid of SERVICE_DASHBOARDS) expect(queries.filter((q) => q.key.startsWith(`${uid}/`)).length, uid).toBeGreaterThan(10);
    expect(queries.filter((q) => q.key.startsWith('cbwatch-overview/'))).toHaveLength(5);

    const s = stack as PrometheusStack;
    const query = async (expr: string): Promise<QueryAnswer> => getJson(`${s.prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    // Rates need two polls of the range API (its points are 10 s apart) and two scrapes: poll until only the listed
    // exceptions stay empty, or report what does.
    await expectQueriesHaveData(query, queries, NO_DATA_EXCEPTIONS, 120_000, 'queries');

    // What the demo shows on them: an index building (Build progress), a paused function (Function status).
    const series = async (key: string, match: (m: Record<string, string>) => boolean): Promise<number> => {
      let n = 0;
      for (const q of queries.filter((x) => x.key === key)) {
        const r = (await query(q.expr)) as { data?: { result: { metric: Record<string, string> }[] } };
        n += (r.data?.result ?? []).filter((x) => match(x.metric)).length;
      }
      return n;
    };
    expect(await series('cbwatch-index/Build progress', (m) => m.index === 'idx_building')).toBe(1);
    expect(await series('cbwatch-search/Function status', (m) => m.status === 'paused')).toBeGreaterThan(0);
  }, 150_000);
});
