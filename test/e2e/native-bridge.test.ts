/**
 * End to end, the native-metrics bridge: a real Prometheus runs the documented example configuration
 * (alerts/native-prometheus.example.yml, with this machine's addresses): it discovers three Couchbase nodes through
 * `/prometheus_sd_config` with basic auth read from a file, scrapes their native `/metrics` (served here: series
 * named and typed as Couchbase's 8.0 metadata files say, for the simulator's buckets and replications), and
 * scrapes cbwatch running against the simulator with `bucket_stats` off and the `xdcr` stats polled once a day
 * (their families dropped from its scrape, as documented). With the bridge rules loaded, every query of every
 * shipped dashboard (panels and variables) must return data; the exceptions are listed with why. Polls, never
 * sleeps a fixed time.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultClusterConfig, resolveCollectors } from '../../src/config/defaults.js';
import { COLLECTOR_NAMES, collectorSchemas } from '../../src/config/schema.js';
import type { CollectorName, CollectorOptions } from '../../src/config/schema.js';
import type { Config } from '../../src/config/types.js';
import { startDaemon } from '../../src/daemon.js';
import type { Daemon } from '../../src/daemon.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { bridgeRulesText, examplePrometheusConfig } from '../../src/tools/gen-bridge.js';
import { yamlText } from '../../src/tools/gen-alerts.js';
import { startPrometheusStack } from '../../src/tools/prometheus-stack.js';
import type { PrometheusStack } from '../../src/tools/prometheus-stack.js';
import { dashboardQueries, e2eCbwatchConfig, expectQueriesHaveData, getJson, pollUntil, postSyncGatewayChanges, writeShortenedAlertRules } from '../helpers/prometheus.js';
import { requireBinary } from '../helpers/tools.js';

const prometheus = requireBinary('prometheus');
const alertmanager = requireBinary('prometheus-alertmanager', 'alertmanager');

const NATIVE = join(PACKAGE_ROOT, 'test', 'fixtures', 'couchbase', 'native');
type Meta = Record<string, { type: string; labels?: string[] }>;
const META: Meta = Object.assign(
  {},
  ...['kv', 'goxdcr', 'n1ql', 'index', 'fts', 'eventing'].map((s) => JSON.parse(readFileSync(join(NATIVE, `8.0-${s}_metrics_metadata.json`), 'utf8')) as Meta),
) as Meta;

/**
 * Panels and variables allowed to return no data, by dashboard uid and title, each with why. A key naming
 * nothing fails the test, so the list cannot rot. None of them reads a bridged family.
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
};

const NODES = 3;
const SD_USER = 'prometheus';
const SD_PASSWORD = 'native-e2e-Xk4-secret';

interface Replication {
  readonly source: string;
  readonly uuid: string;
  readonly target: string;
}

/** One exposition line. */
function line(name: string, labels: Record<string, string>, value: number): string {
  const l = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  return `${name}{${l}} ${value}`;
}

/**
 * A node's native /metrics: Data-service series per bucket, XDCR series per replication (main pipeline and
 * its backfill) and the query, index, Search and eventing series, with the TYPE the metadata gives (`untyped` for
 * the one series outside it). Counters grow with time, so rate() has something to measure.
 */
function nativeExposition(node: number, buckets: readonly string[], replications: readonly Replication[], startedMs: number): string {
  const t = (Date.now() - startedMs) / 1000;
  const grow = (perSecond: number): number => Math.round(1000 + perSecond * t);
  const byName = new Map<string, string[]>();
  const add = (name: string, labels: Record<string, string>, value: number): void => {
    const list = byName.get(name) ?? [];
    list.push(line(name, labels, value));
    byName.set(name, list);
  };
  for (const [i, bucket] of buckets.entries()) {
    const b = { bucket };
    const k = (i + 1) * (node + 1);
    add('kv_cmd_lookup', b, grow(20 * k));
    for (const [op, r] of [['get', 15], ['set', 8], ['delete', 1]] as const) add('kv_ops', { ...b, op }, grow(r * k));
    add('kv_ep_bg_fetched', b, grow(k));
    add('kv_curr_items', b, 10_000 * k);
    add('kv_mem_used_bytes', b, 50_000_000 * k);
    add('kv_ep_mem_high_wat', b, 85_000_000 * k);
    add('kv_ep_queue_size', b, 40 * k);
    add('kv_ep_flusher_todo', b, 3 * k);
    add('kv_ep_diskqueue_fill', b, grow(9 * k));
    add('kv_ep_diskqueue_drain', b, grow(8 * k));
    add('kv_ep_tmp_oom_errors', b, 0);
    add('kv_dcp_items_remaining', { ...b, connection_type: 'replication' }, 12 * k);
    for (const [state, ratio] of [['active', 0.9], ['replica', 0.7]] as const) {
      add('kv_vb_perc_mem_resident_ratio', { ...b, state }, ratio);
      add('kv_vb_curr_items', { ...b, state }, 10_000 * k);
      add('kv_vb_num_non_resident', { ...b, state }, Math.round(10_000 * k * (1 - ratio)));
    }
  }
  for (const [i, r] of replications.entries()) {
    for (const pipelineType of ['Main', 'Backfill']) {
      const l = { sourceBucketName: r.source, targetClusterUUID: r.uuid, targetBucketName: r.target, pipelineType };
      const k = (i + 1) * (node + 1) * (pipelineType === 'Main' ? 1 : 100);
      add('xdcr_changes_left_total', l, 500 * k);
      add('xdcr_docs_rep_queue_total', l, 7 * k);
      add('xdcr_docs_written_total', l, grow(30 * k));
      add('xdcr_data_replicated_bytes', l, grow(4096 * k));
      add('xdcr_wtavg_docs_latency_seconds', l, 0.012 * k);
      add('xdcr_wtavg_meta_latency_seconds', l, 0.003 * k);
    }
  }
  // The services: every node runs query, index, Search and eventing here, with one index, one Search index and
  // one function (the statistics the bridge records for the service dashboards).
  const k = node + 1;
  for (const [stat, perSecond] of [['requests', 20], ['errors', 0.5], ['invalid_requests', 0.1], ['warnings', 0.2], ['selects', 15], ['requests_250ms', 4], ['requests_500ms', 2], ['requests_1000ms', 1], ['requests_5000ms', 0.5], ['result_count', 100], ['result_size', 40_000], ['timeouts', 0.1], ['cancelled', 0.1], ['prepared', 5]] as const) {
    add(`n1ql_${stat}`, {}, grow(perSecond * k));
  }
  add('n1ql_request_time', {}, grow(20 * k * 0.05e9));
  add('n1ql_service_time', {}, grow(20 * k * 0.04e9));
  add('n1ql_active_requests', {}, 2 * k);
  add('n1ql_queued_requests', {}, k);
  add('n1ql_node_memory', {}, 100_000_000 * k);
  add('n1ql_load', {}, 10 * k);
  const ix = { bucket: buckets[0] ?? 'default', scope: '_default', collection: '_default', index: 'def_type' };
  for (const [stat, v] of [['items_count', 1000], ['num_docs_pending', 3], ['num_docs_queued', 2], ['recs_in_mem', 800], ['recs_on_disk', 200], ['frag_percent', 20], ['data_size', 1e6], ['disk_size', 3e6], ['memory_used', 2e6]] as const) add(`index_${stat}`, ix, v * k);
  for (const [stat, perSecond] of [['num_requests', 5], ['num_rows_returned', 50], ['total_scan_duration', 50 * 2e5], ['cache_hits', 90], ['cache_misses', 10]] as const) add(`index_${stat}`, ix, grow(perSecond * k));
  add('index_memory_quota', {}, 512 * 1024 * 1024);
  add('index_memory_used_total', {}, 100_000_000 * k);
  const fts = { bucket: buckets[0] ?? 'default', scope: '_default', collection: '_default', index: 'travel_fts' };
  add('fts_doc_count', fts, 5000 * k);
  add('fts_num_mutations_to_index', fts, 7 * k);
  add('fts_num_bytes_used_disk', fts, 2e6 * k);
  add('fts_total_queries', fts, grow(3 * k));
  add('fts_total_queries_error', fts, grow(0.1 * k));
  add('fts_total_request_time', fts, grow(3 * k * 0.02e9));
  add('fts_num_bytes_used_ram', {}, 50_000_000 * k);
  const fn = { functionName: 'enrich' };
  add('eventing_dcp_backlog', fn, 4 * k);
  add('eventing_on_update_success', fn, grow(10 * k));
  add('eventing_on_update_failure', fn, grow(0.1 * k));
  add('eventing_on_delete_success', fn, grow(2 * k));
  add('eventing_on_delete_failure', fn, grow(0.05 * k));
  add('eventing_timeout_count', fn, grow(0.01 * k));
  const out: string[] = [];
  for (const [name, lines] of byName) {
    out.push(`# TYPE ${name} ${META[name]?.type ?? 'untyped'}`, ...lines);
  }
  return `${out.join('\n')}\n`;
}

function authorized(req: IncomingMessage): boolean {
  return req.headers.authorization === `Basic ${Buffer.from(`${SD_USER}:${SD_PASSWORD}`).toString('base64')}`;
}

async function listen(server: Server, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const a = server.address();
  return typeof a === 'object' && a ? a.port : 0;
}

const WEBHOOK_TOKEN = 'native-e2e-webhook-token-0123456789';
const WEBHOOK_DB = 'travel';

/** cbwatch as docs/native-metrics.md runs it: bucket_stats off, the xdcr stats polled once a day. */
function cbwatchConfig(simUrl: string): Config {
  // The search-cancel and webhook settings as in the alerting end-to-end test, so those panels have data too.
  return e2eCbwatchConfig({ simUrl, collectors: { bucket_stats: { enabled: false }, xdcr: { fast_stats: [], slow_stats_interval: 86_400 } }, webhookDb: WEBHOOK_DB, webhookToken: WEBHOOK_TOKEN });
}

type ScrapeJob = Record<string, unknown> & { job_name: string };

/** The collectors whose statistics the bridge records (compared with cbwatch's own on the same simulated cluster). */
const SERVICE_COLLECTORS = (['query', 'analytics', 'index', 'search_index', 'eventing'] as readonly string[]).filter((c): c is CollectorName => (COLLECTOR_NAMES as readonly string[]).includes(c));

/** The shipped example configuration, pointed at this machine (nothing else changed but intervals and TLS). */
function e2ePrometheusConfig(o: { sdUrl: string; passwordFile: string; cbwatchHost: string; alertmanager: string; alertRules: string }): string {
  const cfg = parse(examplePrometheusConfig()) as { global: Record<string, string>; rule_files: string[]; scrape_configs: ScrapeJob[] };
  cfg.global = { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' };
  // The bridge as shipped; cbwatch's alerts with every `for:` shortened (a templated copy) so some fire.
  cfg.rule_files = cfg.rule_files.map((f) => (f === 'cbwatch.rules.yml' ? o.alertRules : join(PACKAGE_ROOT, 'alerts', f)));
  expect(cfg.rule_files).toContain(join(PACKAGE_ROOT, 'alerts', 'native-bridge.rules.yml'));
  const native = cfg.scrape_configs.find((j) => j.job_name.startsWith('couchbase-native-')) as ScrapeJob & {
    basic_auth: { password_file: string };
    http_sd_configs: { url: string; basic_auth: { password_file: string }; refresh_interval: string; tls_config?: unknown }[];
    relabel_configs: { target_label: string; replacement?: string }[];
    tls_config?: unknown;
  };
  native.job_name = 'couchbase-native-e2e';
  native.scheme = 'http';
  delete native.tls_config;
  native.basic_auth.password_file = o.passwordFile;
  for (const sd of native.http_sd_configs) {
    sd.url = `${o.sdUrl}/prometheus_sd_config?port=secure`;
    sd.basic_auth.password_file = o.passwordFile;
    sd.refresh_interval = '1s';
    delete sd.tls_config;
  }
  for (const r of native.relabel_configs) if (r.target_label === 'couchbase_cluster') r.replacement = 'e2e';
  const cbwatch = cfg.scrape_configs.find((j) => j.job_name === 'cbwatch') as ScrapeJob & { static_configs: { targets: string[] }[] };
  cbwatch.static_configs = [{ targets: [o.cbwatchHost] }];
  return yamlText({ ...cfg, alerting: { alertmanagers: [{ static_configs: [{ targets: [o.alertmanager] }] }] } });
}

/** Stops what a describe block started, each step on its own so one failure does not leave the others running. */
async function stopAll(o: { stack: PrometheusStack | undefined; daemon: Daemon | undefined; sim: Simulator | undefined; servers: readonly Server[]; dir: string }): Promise<void> {
  await o.stack?.stop().catch(() => undefined);
  await o.daemon?.close().catch(() => undefined);
  await o.sim?.close().catch(() => undefined);
  for (const s of o.servers) await new Promise<void>((resolve) => s.close(() => resolve()));
  if (o.dir) rmSync(o.dir, { recursive: true, force: true });
}

describe.skipIf(!prometheus || !alertmanager)('native-metrics bridge end to end (native /metrics + cbwatch without stat collectors → Prometheus)', () => {
  let dir = '';
  let sim: Simulator | undefined;
  let daemon: Daemon | undefined;
  let stack: PrometheusStack | undefined;
  const servers: Server[] = [];
  let sdRequests = 0;
  let sdRefused = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cbwatch-native-e2e-'));
    // One node also runs the Eventing service (by default none does): cbwatch gives the function status beside the
    // bridged statistics.
    sim = createSimulator({ scenario: 'incident', speed: 60, knobs: { eventingNodes: 1 } });
    const simUrl = await sim.listen(0);
    // What Couchbase knows: its buckets and XDCR replications, read from the simulator's REST answers.
    const admin = `Basic ${Buffer.from('Administrator:password').toString('base64')}`;
    const buckets = (await getJson<{ name: string }[]>(`${simUrl}/pools/default/buckets`, admin)).map((b) => b.name);
    const tasks = await getJson<{ type: string; source?: string; target?: string }[]>(`${simUrl}/pools/default/tasks`, admin);
    const replications: Replication[] = tasks
      .filter((t) => t.type === 'xdcr' && t.source && t.target)
      .map((t) => {
        const m = /^\/remoteClusters\/([^/]+)\/buckets\/(.+)$/.exec(t.target as string);
        return { source: t.source as string, uuid: m?.[1] ?? '', target: m?.[2] ?? '' };
      });
    expect(buckets.length).toBeGreaterThan(0);
    expect(replications.length).toBeGreaterThan(0);

    // Three nodes, each on its own loopback address (the node label comes from the address).
    const started = Date.now();
    const targets: string[] = [];
    for (let n = 0; n < NODES; n++) {
      const s = createServer((req: IncomingMessage, res: ServerResponse) => {
        if (!authorized(req)) return void res.writeHead(401).end();
        if (req.url !== '/metrics') return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(nativeExposition(n, buckets, replications, started));
      });
      servers.push(s);
      const host = `127.0.0.${n + 2}`;
      targets.push(`${host}:${await listen(s, host)}`);
    }
    const sd = createServer((req: IncomingMessage, res: ServerResponse) => {
      sdRequests++;
      if (!authorized(req)) {
        sdRefused++;
        return void res.writeHead(401).end();
      }
      if (!(req.url ?? '').startsWith('/prometheus_sd_config')) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ targets, labels: {} }]));
    });
    servers.push(sd);
    const sdUrl = `http://127.0.0.1:${await listen(sd, '127.0.0.1')}`;
    const passwordFile = join(dir, 'couchbase.password');
    writeFileSync(passwordFile, SD_PASSWORD);

    daemon = await startDaemon({ config: cbwatchConfig(simUrl), logger: pino({ level: 'silent' }), processMetrics: true });
    await daemon.ready();
    await postSyncGatewayChanges(daemon.url, WEBHOOK_DB, WEBHOOK_TOKEN);
    const alertRules = writeShortenedAlertRules(dir);
    const cbwatchHost = new URL(daemon.url).host;
    stack = await startPrometheusStack({
      exporterUrl: daemon.url,
      dataDir: dir,
      prometheusConfig: (am) => e2ePrometheusConfig({ sdUrl, passwordFile, cbwatchHost, alertmanager: am, alertRules }),
    });
  }, 90_000);

  afterAll(() => stopAll({ stack, daemon, sim, servers, dir }), 30_000);

  const query = async (expr: string): Promise<{ status: string; error?: string; data?: { result: { metric: Record<string, string> }[] } }> =>
    getJson(`${(stack as PrometheusStack).prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);

  it('discovers the nodes with the credentials from the file and scrapes them all', async () => {
    await pollUntil(
      async () => {
        const r = await query('up{job="couchbase-native-e2e"} == 1');
        return (r.data?.result.length ?? 0) === NODES ? true : undefined;
      },
      30_000,
      async () => `native targets: ${JSON.stringify(await getJson(`${(stack as PrometheusStack).prometheusUrl}/api/v1/targets`))}\n${(stack as PrometheusStack).logs().prometheus}`,
    );
    expect(sdRequests).toBeGreaterThan(0);
    expect(sdRefused).toBe(0);
    const nodes = (await query('count by (node, couchbase_cluster) (kv_curr_items)')).data?.result.map((r) => `${r.metric.couchbase_cluster} ${r.metric.node}`).sort();
    expect(nodes).toEqual(['e2e 127.0.0.2:8091', 'e2e 127.0.0.3:8091', 'e2e 127.0.0.4:8091']);
  }, 45_000);

  it('every dashboard query has data (exceptions listed with a reason)', async () => {
    const queries = dashboardQueries({ panelsOnly: false, exceptions: NO_DATA_EXCEPTIONS, what: 'exceptions naming nothing' });
    await expectQueriesHaveData(query, queries, NO_DATA_EXCEPTIONS, 60_000, 'queries');
  }, 90_000);

  it('the bucket and XDCR stat families come from the bridge only, with cbwatch labels', async () => {
    // Nothing of them in cbwatch's own scrape (bucket_stats off, the xdcr stat families dropped).
    for (const sel of ['{job="cbwatch", __name__=~"couchbase_bucket_(node_)?(ops_per_second|mem_used_bytes|curr_items)"}', '{job="cbwatch", __name__=~"couchbase_xdcr_(changes_left|docs_rep_queue|rate_replicated_per_second|last_sample_timestamp_seconds)"}']) {
      expect((await query(sel)).data?.result, sel).toEqual([]);
    }
    const cl = (await query('couchbase_xdcr_changes_left')).data?.result ?? [];
    expect(cl.length).toBeGreaterThan(0);
    for (const r of cl) {
      expect(Object.keys(r.metric).sort()).toEqual(['__name__', 'couchbase_cluster', 'node', 'source_bucket', 'target_bucket', 'target_cluster_name', 'target_cluster_uuid']);
    }
    // The backfill pipelines' far larger backlogs (x100) are not in it: main pipelines only.
    const scalar = async (expr: string): Promise<number> => Number(((await query(expr)) as { data?: { result: { value?: [number, string] }[] } }).data?.result[0]?.value?.[1]);
    const main = await scalar('sum(couchbase_xdcr_changes_left)');
    const native = await scalar('sum(xdcr_changes_left_total{pipelineType="Main"})');
    expect(main).toBeGreaterThan(0);
    expect(main).toBe(native);
    const ops = (await query('couchbase_bucket_ops_per_second')).data?.result ?? [];
    expect(ops.map((r) => Object.keys(r.metric).sort())).toEqual(ops.map(() => ['__name__', 'bucket', 'couchbase_cluster']));
  }, 30_000);

  it('the service statistics come from the bridge only, with cbwatch labels; the index state and function status from cbwatch', async () => {
    const sel = '{job="cbwatch", __name__=~"couchbase_query_.+|couchbase_index_(items|docs_pending|resident_ratio|node_ram_ratio)|couchbase_search_index_.+|couchbase_eventing_(dcp_backlog|on_update_success_total)"}';
    expect((await query(sel)).data?.result, sel).toEqual([]);
    const labelsOf = async (expr: string): Promise<string[][]> => ((await query(expr)).data?.result ?? []).map((r) => Object.keys(r.metric).sort());
    const expected: Record<string, string[]> = {
      couchbase_query_requests_per_second: ['__name__', 'couchbase_cluster', 'node'],
      couchbase_query_slow_requests_per_second: ['__name__', 'couchbase_cluster', 'node', 'over'],
      couchbase_index_items: ['__name__', 'bucket', 'collection', 'couchbase_cluster', 'index', 'node', 'scope'],
      couchbase_index_node_ram_ratio: ['__name__', 'couchbase_cluster', 'node'],
      couchbase_search_index_docs: ['__name__', 'bucket', 'couchbase_cluster', 'index', 'node'],
      couchbase_eventing_on_update_success_total: ['__name__', 'couchbase_cluster', 'function'],
    };
    for (const [family, labels] of Object.entries(expected)) {
      const got = await labelsOf(family);
      expect(got.length, family).toBeGreaterThan(0);
      for (const l of got) expect(l, family).toEqual(labels);
    }
    // Summed over the three native nodes: 4 + 8 + 12.
    const backlog = (await query('couchbase_eventing_dcp_backlog')) as { data?: { result: { value?: [number, string] }[] } };
    expect(backlog.data?.result.map((r) => Number(r.value?.[1]))).toEqual([24]);
    expect(((await query('couchbase_index_state{job="cbwatch"}')).data?.result.length ?? 0) > 0).toBe(true);
    expect(((await query('couchbase_eventing_function_status{job="cbwatch"}')).data?.result.length ?? 0) > 0).toBe(true);
  }, 30_000);
});

/**
 * The same numbers on either source: the simulator's per-node native expositions (its native model, from which
 * it also answers the range API) through the bridge, against cbwatch reading the simulator's legacy stat
 * envelopes (`stats_source: envelope`), both scraped by one Prometheus. Levels must agree closely; rates (the
 * bridge's rate() over 20 s of the simulator's counters, which move every 10 s, against cbwatch's mean of the
 * envelope's samples since its previous poll) within a wider band.
 */
describe.skipIf(!prometheus || !alertmanager)('native-metrics bridge against cbwatch on the same simulated cluster', () => {
  let dir = '';
  let sim: Simulator | undefined;
  let daemon: Daemon | undefined;
  let stack: PrometheusStack | undefined;
  const servers: Server[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cbwatch-native-same-'));
    // One node also runs the analytics service and one the Eventing service (by default none does), so their
    // families are compared too.
    sim = createSimulator({ scenario: 'default', knobs: { analyticsNodes: 1, eventingNodes: 1 } });
    const simUrl = await sim.listen(0);
    const admin = `Basic ${Buffer.from('Administrator:password').toString('base64')}`;
    const hostnames = (await getJson<{ nodes: { hostname: string }[] }>(`${simUrl}/pools/default`, admin)).nodes.map((n) => n.hostname);
    // One loopback address per simulated node, answering with that node's native exposition.
    const targets: string[] = [];
    for (const [i, hostname] of hostnames.entries()) {
      const s = createServer((req: IncomingMessage, res: ServerResponse) => {
        if (!authorized(req)) return void res.writeHead(401).end();
        void fetch(`${simUrl}/_node/${hostname}/metrics`, { headers: { authorization: admin }, signal: AbortSignal.timeout(5000) })
          .then(async (r) => res.writeHead(r.status, { 'content-type': 'text/plain; version=0.0.4' }).end(await r.text()))
          .catch(() => res.writeHead(502).end());
      });
      servers.push(s);
      const host = `127.0.0.${i + 5}`;
      targets.push(`${host}:${await listen(s, host)}`);
    }
    const passwordFile = join(dir, 'couchbase.password');
    writeFileSync(passwordFile, SD_PASSWORD);

    const raw: { [K in CollectorName]?: CollectorOptions<K> } = {};
    // nodes: its couchbase_node_info gives the node versions the bridge's cache-miss ratio picks its formula by.
    // The service collectors whose statistics the bridge records, read from the legacy service sections.
    for (const name of ['buckets', 'bucket_stats', 'xdcr', 'nodes', ...SERVICE_COLLECTORS] as const) {
      (raw as Record<string, unknown>)[name] = collectorSchemas[name].parse({ interval: 1, ...(name === 'xdcr' ? { slow_stats_interval: 1 } : {}) });
    }
    for (const name of COLLECTOR_NAMES.filter((n) => !(n in raw))) (raw as Record<string, unknown>)[name] = collectorSchemas[name].parse({ enabled: false });
    daemon = await startDaemon({
      config: {
        clusters: [{ ...defaultClusterConfig({ name: 'sim', url: simUrl, collectors: resolveCollectors(raw) }), statsSource: 'envelope' }],
        webhooks: { syncGateway: undefined },
        web: { listenHost: '127.0.0.1', listenPort: 0, configFile: undefined },
        log: { level: 'silent', format: 'json' },
      },
      logger: pino({ level: 'silent' }),
      processMetrics: false,
    });
    await daemon.ready();
    const example = parse(examplePrometheusConfig()) as { scrape_configs: (ScrapeJob & { relabel_configs?: { target_label: string; replacement?: string }[] })[] };
    const relabel = (example.scrape_configs.find((j) => j.job_name.startsWith('couchbase-native-'))?.relabel_configs ?? []).map((r) => (r.target_label === 'couchbase_cluster' ? { ...r, replacement: 'sim' } : r));
    const cbwatchHost = new URL(daemon.url).host;
    // rate() divides by its whole window: until Prometheus holds a window's worth of samples a rate reads low
    // (half, with a 2m window one minute after start). The generator's window option keeps this test short.
    const bridgeRules = join(dir, 'native-bridge.rules.yml');
    writeFileSync(bridgeRules, bridgeRulesText('20s'));
    stack = await startPrometheusStack({
      exporterUrl: daemon.url,
      dataDir: dir,
      prometheusConfig: (am) =>
        yamlText({
          global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
          rule_files: [bridgeRules],
          alerting: { alertmanagers: [{ static_configs: [{ targets: [am] }] }] },
          scrape_configs: [
            { job_name: 'couchbase-native-sim', basic_auth: { username: SD_USER, password_file: passwordFile }, static_configs: [{ targets }], relabel_configs: relabel },
            { job_name: 'cbwatch', static_configs: [{ targets: [cbwatchHost] }] },
          ],
        }),
    });
  }, 90_000);

  afterAll(() => stopAll({ stack, daemon, sim, servers, dir }), 30_000);

  /**
   * family → [relative, absolute] tolerance (either suffices). Measured once the 20 s window was full: levels
   * 0-0.5% apart (a queue of single digits up to 7%, one item), rates 2.3-5% (the two sides sample a rising load
   * at different moments). The simulator's default scenario has no background fetch, so those two compare 0 with 0.
   */
  const COMPARED: Record<string, readonly [relative: number, absolute: number]> = {
    couchbase_bucket_curr_items: [0.02, 0],
    couchbase_bucket_mem_used_bytes: [0.02, 0],
    couchbase_bucket_ep_mem_high_wat_bytes: [0.02, 0],
    couchbase_bucket_disk_write_queue: [0.1, 1],
    couchbase_bucket_vb_active_resident_items_ratio: [0.02, 0],
    couchbase_bucket_ep_cache_miss_ratio: [0.1, 0.001],
    couchbase_bucket_ops_per_second: [0.1, 0],
    couchbase_bucket_cmd_get_per_second: [0.1, 0],
    couchbase_bucket_cmd_set_per_second: [0.1, 0],
    couchbase_bucket_ep_bg_fetched_per_second: [0.1, 0.5],
    couchbase_bucket_ep_diskqueue_fill_per_second: [0.1, 0.5],
    couchbase_bucket_ep_diskqueue_drain_per_second: [0.1, 0.5],
    couchbase_xdcr_changes_left: [0.1, 1],
    couchbase_xdcr_docs_rep_queue: [0.1, 1],
    couchbase_xdcr_wtavg_docs_latency_seconds: [0.1, 0],
    couchbase_xdcr_wtavg_meta_latency_seconds: [0.1, 0],
    couchbase_xdcr_rate_replicated_per_second: [0.1, 0],
    couchbase_xdcr_bandwidth_usage_bytes_per_second: [0.1, 0],
    // Per node (summed over the nodes: the two sides name the nodes differently); the slow requests by `over`.
    couchbase_query_requests_per_second: [0.1, 0],
    couchbase_query_errors_per_second: [0.1, 0.05],
    couchbase_query_selects_per_second: [0.1, 0],
    couchbase_query_slow_requests_per_second: [0.1, 0.05],
    couchbase_query_request_time_seconds: [0.1, 0],
    couchbase_query_service_time_seconds: [0.1, 0],
    couchbase_query_results_per_request: [0.1, 0],
    couchbase_query_response_bytes_per_request: [0.1, 0],
    couchbase_query_active_requests: [0.2, 2],
    couchbase_analytics_heap_used_bytes: [0.05, 0],
    couchbase_analytics_disk_used_bytes: [0.02, 0],
    couchbase_analytics_threads: [0.02, 0],
    couchbase_analytics_gc_per_second: [0.1, 0.05],
    couchbase_analytics_gc_seconds_per_second: [0.1, 0.001],
    couchbase_analytics_io_reads_per_second: [0.1, 0],
    couchbase_analytics_io_writes_per_second: [0.1, 0],
    // Per index (and Search index, function) over the nodes; the legacy sections name no scope or collection.
    couchbase_index_items: [0.02, 0],
    couchbase_index_data_size_bytes: [0.02, 0],
    couchbase_index_requests_per_second: [0.1, 0],
    couchbase_index_rows_returned_per_second: [0.1, 0],
    couchbase_index_node_memory_used_bytes: [0.02, 0],
    couchbase_search_index_docs: [0.02, 0],
    couchbase_search_index_pending_mutations: [0.1, 2],
    couchbase_search_index_queries_per_second: [0.1, 0],
    couchbase_eventing_dcp_backlog: [0.1, 2],
    couchbase_eventing_on_update_success_total: [0.02, 0],
  };

  it('the bridged families agree with cbwatch\'s own from the envelopes', async () => {
    const s = stack as PrometheusStack;
    const vector = async (expr: string): Promise<Map<string, number>> => {
      const r = await getJson<{ data?: { result: { metric: Record<string, string>; value: [number, string] }[] } }>(`${s.prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
      return new Map((r.data?.result ?? []).map((x) => [JSON.stringify(x.metric), Number(x.value[1])]));
    };
    let report: string[] = [];
    await pollUntil(
      async () => {
        report = [];
        let ok = true;
        for (const [family, [tol, abs]] of Object.entries(COMPARED)) {
          const by = family.startsWith('couchbase_xdcr_')
            ? 'source_bucket, target_cluster_uuid, target_bucket'
            : family.startsWith('couchbase_bucket_')
              ? 'bucket'
              : family === 'couchbase_query_slow_requests_per_second'
                ? 'over'
                : family.startsWith('couchbase_index_') && !family.startsWith('couchbase_index_node_')
                  ? 'bucket, index'
                  : family.startsWith('couchbase_search_index_')
                    ? 'bucket, index'
                    : family.startsWith('couchbase_eventing_')
                      ? 'function'
                      : '';
          const mine = await vector(`sum by (${by}) (${family}{job=""})`);
          const theirs = await vector(`sum by (${by}) (${family}{job="cbwatch"})`);
          if (theirs.size === 0 || mine.size !== theirs.size) {
            ok = false;
            report.push(`${family}: ${mine.size} bridged series, ${theirs.size} from cbwatch`);
            continue;
          }
          for (const [k, v] of theirs) {
            const b = mine.get(k);
            const diff = b === undefined ? Infinity : Math.abs(b - v);
            const rel = diff / Math.max(Math.abs(v), 1e-9);
            if (!(rel <= tol || diff <= abs)) ok = false;
            report.push(`${family} ${k}: bridge ${b} cbwatch ${v} (${(rel * 100).toFixed(2)}%; tolerance ${tol * 100}% or ${abs})`);
          }
        }
        return ok ? true : undefined;
      },
      60_000,
      () => report.join('\n'),
    );
  }, 90_000);
});
