/**
 * The statistics of the non-data services of each simulated node: query (N1QL), index (GSI), Search (FTS),
 * Eventing, Analytics, and, from 7.0, the node's processes (`sysproc_*`) and (7.6+) its disks. ONE model serves
 * both paths, as for the bucket stats: the legacy service sections (modules/service-stats.ts: `@query`,
 * `@index-<bucket>`, …, per node and summed over the nodes) and the native series of ../native.ts (the range API
 * and each node's /metrics).
 *
 * Each node's statistic is one `SvcStat`:
 * - `counter`: the model gives its per-second rate r(t) at whole seconds; the legacy section serves r(t) (ns_server
 *   6.x turns the service's counters into rates, base_stats_collector:calculate_counters; 7.x answers the legacy
 *   name with rate() of the native counter, stat_names_mappings.erl pre_70_stat_to_prom_query), the native counter is
 *   the running sum of those rates (../native.ts `integrator`), so a rate over a window equals the mean of the
 *   section's samples in it;
 * - `gauge`: a level, the same on both paths (native unit: the reference's, e.g. bytes, ns, percent);
 * - `total`: a running total the service keeps (eventing's successes and failures, Search's herder rejections):
 *   a level in the legacy section (ns_server keeps them as gauges: service_eventing.erl get_service_gauges), a
 *   counter natively (eventing@7.6.3 highCardStats), the same value on both paths.
 *
 * Keys are the per-node legacy keys (ns_server@7.6.2:src/stat_names_mappings.erl prom_name_to_pre_70_name):
 * `query_<stat>` (@query); `index_memory_quota`, `index_memory_used` … (@index); `index/<index>/<stat>`
 * (@index-<bucket>); `fts_<stat>` (@fts); `fts/<index>/<stat>` (@fts-<bucket>); `eventing/<function>/<stat>`
 * (@eventing); `cbas_<stat>` (@cbas); for what has no legacy section, `<proc>/<stat>` (sysproc) and
 * `disk/<mount>/usage_ratio`. Knob `serviceStatValues` (`{ [key]: (t, node) => number }`, t epoch ms, node
 * `host:port`) replaces the model of those keys on every node that has them, on both paths.
 *
 * What runs where (the nodes' `services`; a node failed over, by the scenario or knob `nodeFaults`, serves no
 * service statistic, only its processes):
 * - query nodes (`n1ql`): the counters query_requests, _errors, _invalid_requests, _warnings, _selects,
 *   _requests_250ms/500ms/1000ms/5000ms, _result_count, _result_size (bytes), _request_time and _service_time (ns);
 *   gauges query_active_requests, query_queued_requests; 7.x only (no legacy key): n1ql_timeouts, n1ql_cancelled,
 *   n1ql_prepared (counters), n1ql_load, n1ql_node_memory (gauges, bytes).
 * - index nodes (`index`): every index instance of modules/index-status.ts on the nodes holding it (a replica under
 *   its display name `def_type (replica 1)`, a partitioned index on each node under its own name with the node's
 *   share of it): gauges items_count, num_docs_pending, num_docs_queued, data_size, disk_size, memory_used,
 *   frag_percent, recs_in_mem, recs_on_disk, data_size_on_disk, log_space_on_disk, raw_data_size, disk_overhead_
 *   estimate; counters num_requests, num_rows_returned, num_docs_indexed, scan_bytes_read, total_scan_duration (ns),
 *   cache_hits, cache_misses; native only num_rows_scanned and the indexer's own gauges resident_percent,
 *   avg_scan_latency (ns), avg_item_size. Node: index_memory_quota (1 GiB, /pools/default indexMemoryQuota),
 *   index_memory_used (the node's indexes + 64 MiB), and the node's own index_ram_percent, index_remaining_ram
 *   (service_index.erl compute_index_ram_usage_stats); native index_memory_used_total, index_memory_rss,
 *   index_num_indexes.
 * - Search nodes (`fts`): each Search index (travel-hotels and travel-landmarks on the first bucket, beer-fts on the
 *   second, or the first when there is one; knob `extraSearchIndexes` adds `fts_extra_000`, … on the first) on
 *   every Search node, each node holding its share: gauges doc_count, num_mutations_to_index, num_recs_to_persist,
 *   num_bytes_used_disk, num_pindexes_actual/target, num_files_on_disk, num_root_memorysegments/filesegments;
 *   counters total_queries, total_queries_error/slow/timeout, total_request_time (ns), total_bytes_query_results,
 *   total_term_searchers, total_bytes_indexed, total_compaction_written_bytes; native fts_avg_queries_latency (ms).
 *   Node: fts_num_bytes_used_ram, fts_curr_batches_blocked_by_herder (gauges), fts_total_queries_rejected_by_herder
 *   (total); native fts_num_bytes_ram_quota, fts_pct_used_ram.
 * - Eventing nodes (`eventing`): each DEPLOYED function of modules/eventing.ts (composite status `deployed`: a paused
 *   or undeployed function has no statistics, eventing@7.6.3 highCardStats lists deployed functions only; 6.6 lists
 *   the processing ones), the node's share: gauge dcp_backlog; totals on_update_success/failure,
 *   on_delete_success/failure, timeout_count, bucket_op_exception_count, checkpoint_failure_count,
 *   n1ql_op_exception_count; before 7.0 doc_timer_create_failure, non_doc_timer_create_failure (no native name);
 *   from 7.0 timer_callback_success/failure.
 * - Analytics nodes (`cbas`; knob `analyticsNodes` of modules/service-stats.ts): gauges cbas_heap_used,
 *   cbas_system_load_average, cbas_thread_count, cbas_disk_used; counters cbas_gc_count, cbas_gc_time (ms),
 *   cbas_io_reads, cbas_io_writes (native names of stat_names_mappings.erl 7.6.2:142-194).
 * - every node, 7.0+ native only (labels `proc` and `category="system-processes"`, ns_server_stats.erl
 *   report_prom_stats): sysproc_mem_resident, _mem_size, _mem_share (bytes), _cpu_utilization (percent),
 *   _major_faults_raw, _minor_faults_raw, _page_faults_raw, _start_time, and from 7.2 sysproc_cpu_seconds_total{mode}
 *   (its rate agrees with cpu_utilization), for the processes of the node's services (ns_server, babysitter,
 *   prometheus everywhere; memcached, projector, goxdcr on data nodes; indexer; cbq-engine; cbft;
 *   eventing-producer; cbas and java on analytics nodes); 7.6+ sys_disk_usage_ratio{disk} for `/` and
 *   `/opt/couchbase/var` (the data disk: knob `diskUsedRatio` or the scenario's share, as storageTotals).
 *
 * Levels outside the demo's burst (deterministic, from ctx.rand and slow sine waves): 20-40 requests a second per
 * query node (±20%), 1% errors, 8% over 250 ms, 3% over 500 ms, 1% over 1 s, 0.1% over 5 s, 30 ms per request, no
 * queue; index scans 80 µs per row, 5% cache misses, 20% fragmentation, `#primary` 88% resident, the others 100%;
 * Search queries 12 ms each, 1% errors; eventing's totals grow at fixed rates per function (enrich_orders fails
 * 0.2 updates a second).
 *
 * Demo (scenario `demo`; knob `slowQueryBurst` true/false forces it on/off in any scenario): a burst of slow
 * queries from second 60 to second 300 of every 600 s of simulated time since start (a newcomer sees it within the
 * first minutes, as the flapping node of modules/cluster.ts): on every query node 40% of
 * the requests take over 5 s (requests_5000ms = 0.4 × requests; 250 ms: 0.7, 500 ms: 0.6, 1 s: 0.5), the mean
 * request time is 4.5 s, timeouts rise, and queued requests climb from 5 to 45 over the burst (0 outside it).
 * Search index travel-landmarks' pending mutations grow by 2 a second through each 600 s cycle.
 */
import { SCRAPE_SECONDS, HISTORY_SECONDS } from './scrape.js';
import { effectiveNodes } from './modules/cluster.js';
import { simFunctions } from './modules/eventing.js';
import { simIndexLayout, simIndexNodes, simIndexes } from './modules/index-status.js';
import type { SimContext, SimNode } from './types.js';

type Gen = (t: number) => number;

export type SvcKind = 'counter' | 'gauge' | 'total';

/** The native side of a statistic: its name, labels, the service that exports it, and which server lines do. */
export interface SvcNative {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly instance: 'n1ql' | 'index' | 'fts' | 'eventing' | 'cbas' | 'ns_server';
  /** Served only by these server lines (default: every 7.0+ line). */
  readonly lines?: readonly string[];
}

/** One statistic of one node. */
export interface SvcStat {
  /** The per-node legacy key (see the header). */
  readonly key: string;
  readonly kind: SvcKind;
  /** The legacy section that carries it (`@query`, `@index`, `@index-<b>`, `@fts`, `@fts-<b>`, `@eventing`, `@cbas`); none: native only. */
  readonly section?: string;
  /** none: served by the legacy section only. */
  readonly native?: SvcNative;
  /** Rate per second (counter), level (gauge) or running total (total) at epoch ms t. */
  readonly gen: Gen;
}

/** The legacy service sections (menelaus_stats.erl services_sections/1) and the service each belongs to. */
export const SECTION_SERVICES: Readonly<Record<string, string>> = { '@query': 'n1ql', '@index': 'index', '@fts': 'fts', '@eventing': 'eventing', '@cbas': 'cbas' };

const TWO_PI = 2 * Math.PI;
const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const FROM_72 = ['7.2', '7.6', '8.0'];
const FROM_76 = ['7.6', '8.0'];
/** The demo's cycle and the slow-query burst within it, seconds of simulated time since start. */
export const DEMO_CYCLE_S = 600;
export const BURST_FROM_S = 60;
export const BURST_TO_S = 300;

/** Whether the slow-query burst is on at epoch ms t, and how far into it (0-1). */
export function slowQueryBurst(ctx: SimContext, t: number): { on: boolean; progress: number } {
  const knob = ctx.options.knobs.slowQueryBurst;
  if (knob === true) return { on: true, progress: 1 };
  if (knob === false || ctx.options.scenario !== 'demo') return { on: false, progress: 0 };
  const s = (((t - ctx.startedAt) / 1000) % DEMO_CYCLE_S + DEMO_CYCLE_S) % DEMO_CYCLE_S;
  if (t < ctx.startedAt || s < BURST_FROM_S || s >= BURST_TO_S) return { on: false, progress: 0 };
  return { on: true, progress: (s - BURST_FROM_S) / (BURST_TO_S - BURST_FROM_S) };
}

/** The Search indexes whose statistics the Search nodes serve, and their buckets. */
export function simSearchIndexes(ctx: SimContext): Array<{ index: string; bucket: string; docs: number; qps: number }> {
  const b0 = ctx.buckets[0]?.name;
  if (b0 === undefined) return [];
  const b1 = ctx.buckets[1]?.name ?? b0;
  const out = [
    { index: 'travel-hotels', bucket: b0, docs: 12_000, qps: 3 },
    { index: 'travel-landmarks', bucket: b0, docs: 4_500, qps: 1.5 },
    { index: 'beer-fts', bucket: b1, docs: 7_300, qps: 0.5 },
  ];
  const extra = Number(ctx.options.knobs.extraSearchIndexes ?? 0);
  for (let i = 0; i < (Number.isFinite(extra) ? extra : 0); i++) out.push({ index: `fts_extra_${String(i).padStart(3, '0')}`, bucket: b0, docs: 1_000 + 100 * i, qps: 0.2 });
  return out;
}

/**
 * Nodes running `service` that serve its statistics: active members as the scenario shows them now (a node failed
 * over, by the scenario or knob nodeFaults, serves none; ns_cluster_membership:service_actual_nodes).
 */
export function serviceNodes(ctx: SimContext, service: string): SimNode[] {
  return effectiveNodes(ctx).filter((n) => n.services.includes(service) && n.membership === 'active');
}

interface Builder {
  readonly ctx: SimContext;
  readonly node: SimNode;
  readonly out: SvcStat[];
  readonly rand: (k: string) => number;
  readonly wave: (periodMs: number, key: string) => Gen;
}

/** Add a statistic (the knob's values in place of the model's when it names the key); returns its generator. */
function add(b: Builder, key: string, kind: SvcKind, gen: Gen, section: string | undefined, native: SvcNative | undefined): Gen {
  const overrides = b.ctx.options.knobs.serviceStatValues as Readonly<Record<string, (t: number, node: string) => number>> | undefined;
  const o = overrides?.[key];
  const host = b.node.hostname;
  const g: Gen = o ? (t) => o(t, host) : gen;
  b.out.push({ key, kind, gen: g, ...(section !== undefined ? { section } : {}), ...(native ? { native } : {}) });
  return g;
}

/** A running total at epoch ms t that grows by `perSec` a second, whole, since a day before the node's history. */
function total(ctx: SimContext, perSec: number): Gen {
  const from = Math.floor(ctx.startedAt / 1000 / SCRAPE_SECONDS) * SCRAPE_SECONDS - HISTORY_SECONDS - 86_400;
  return (t) => Math.max(0, Math.floor(perSec * (Math.floor(t / 1000) - from)));
}

function queryStats(b: Builder): void {
  const { ctx } = b;
  const base = 20 + 20 * b.rand('requests');
  const w = b.wave(240_000, 'requests');
  const req: Gen = (t) => base * (1 + 0.2 * w(t));
  const burst = (t: number): { on: boolean; progress: number } => slowQueryBurst(ctx, t);
  const share = (normal: number, slow: number): Gen => (t) => req(t) * (burst(t).on ? slow : normal);
  const meanS = (t: number): number => (burst(t).on ? 4.5 : 0.03);
  const q = (stat: string, kind: SvcKind, gen: Gen): Gen => add(b, `query_${stat}`, kind, gen, '@query', { name: `n1ql_${stat}`, labels: {}, instance: 'n1ql' });
  q('requests', 'counter', req);
  q('errors', 'counter', share(0.01, 0.03));
  q('invalid_requests', 'counter', share(0.002, 0.002));
  q('warnings', 'counter', share(0.004, 0.004));
  q('selects', 'counter', share(0.85, 0.85));
  q('requests_250ms', 'counter', share(0.08, 0.7));
  q('requests_500ms', 'counter', share(0.03, 0.6));
  q('requests_1000ms', 'counter', share(0.01, 0.5));
  q('requests_5000ms', 'counter', share(0.001, 0.4));
  q('result_count', 'counter', (t) => req(t) * 15);
  q('result_size', 'counter', (t) => req(t) * 15 * 420);
  q('request_time', 'counter', (t) => req(t) * meanS(t) * 1e9);
  q('service_time', 'counter', (t) => req(t) * meanS(t) * 0.8 * 1e9);
  q('active_requests', 'gauge', (t) => Math.round(req(t) * meanS(t)));
  q('queued_requests', 'gauge', (t) => {
    const s = burst(t);
    return s.on ? Math.round(5 + 40 * s.progress) : 0;
  });
  // 7.x only: no legacy key in @query (the default list of stat_names_mappings.erl 7.6.2:832-837 has none of them).
  const n = (name: string, kind: SvcKind, gen: Gen): Gen => add(b, name, kind, gen, undefined, { name, labels: {}, instance: 'n1ql' });
  n('n1ql_timeouts', 'counter', share(0.0005, 0.05));
  n('n1ql_cancelled', 'counter', share(0.001, 0.002));
  n('n1ql_prepared', 'counter', share(0.3, 0.3));
  n('n1ql_load', 'gauge', (t) => (burst(t).on ? 85 : Math.round(20 + 5 * w(t))));
  n('n1ql_node_memory', 'gauge', (t) => (burst(t).on ? Math.round(1.2 * GIB) : 300 * MIB + Math.round(20 * MIB * w(t))));
}

/** The index instances a node holds now: name, definition, and the node's share of it (partitions). */
export function nodeIndexInstances(ctx: SimContext, node: SimNode): Array<{ name: string; bucket: string; scope: string; collection: string; status: string; progress: number; share: number; indexName: string }> {
  const bucket = ctx.buckets[0]?.name;
  if (bucket === undefined) return [];
  const nodes = simIndexNodes(ctx);
  if (!nodes.includes(node.hostname)) return [];
  const out: Array<{ name: string; bucket: string; scope: string; collection: string; status: string; progress: number; share: number; indexName: string }> = [];
  for (const ix of simIndexes(ctx, nodes.length)) {
    for (const inst of simIndexLayout(ix, nodes)) {
      const parts = inst.partitionMap[node.hostname];
      if (parts === undefined) continue;
      const share = ix.partitions > 0 ? parts.length / ix.partitions : 1;
      out.push({ name: inst.name, bucket, scope: ix.scope, collection: ix.collection, status: ix.status, progress: ix.progress, share, indexName: ix.indexName });
    }
  }
  return out;
}

const INDEX_DOCS: Readonly<Record<string, number>> = { '#primary': 63_000, def_type: 50_000, idx_city: 9_000, idx_building: 40_000 };
const INDEX_QPS: Readonly<Record<string, number>> = { '#primary': 2, def_type: 8, idx_city: 5, idx_building: 0, idx_deferred: 0 };
const INDEX_RESIDENT: Readonly<Record<string, number>> = { '#primary': 0.88 };

function indexStats(b: Builder): void {
  const { ctx, node } = b;
  let usedByIndexes: Gen = () => 0;
  const instances = nodeIndexInstances(ctx, node);
  for (const ix of instances) {
    const r = (k: string): number => b.rand(`index:${ix.name}:${k}`);
    // The demo's building index moves one percent every 6 s (modules/index-status.ts): its progress at time t.
    const progress: Gen = ix.indexName === 'idx_building' && ix.status === 'Building' ? (t) => Math.floor(Math.max(0, t - ctx.startedAt) / 6000) % 100 : () => ix.progress;
    const built: Gen = ix.status === 'Created' ? () => 0 : ix.status === 'Building' ? (t) => progress(t) / 100 : () => 1;
    const docs = (INDEX_DOCS[ix.indexName] ?? 2_000 + Math.round(3_000 * r('docs'))) * ix.share;
    const items: Gen = (t) => Math.round(docs * built(t));
    const qps = (INDEX_QPS[ix.indexName] ?? 0.5) * ix.share * (ix.status === 'Ready' ? 1 : 0);
    const wq = b.wave(150_000, `index:${ix.name}:q`);
    const wp = b.wave(30_000, `index:${ix.name}:p`);
    const resident = INDEX_RESIDENT[ix.indexName] ?? 1;
    const inMem: Gen = (t) => Math.round(items(t) * resident);
    const dataSize: Gen = (t) => items(t) * 48;
    const diskSize: Gen = (t) => Math.round(dataSize(t) * 1.6);
    const memUsed: Gen = (t) => items(t) * 70 + MIB;
    const requests: Gen = (t) => qps * (1 + 0.3 * wq(t));
    const rows: Gen = (t) => requests(t) * 25;
    const hitsAndMisses: Gen = (t) => requests(t) * 20;
    const pending: Gen = ix.status === 'Building' ? (t) => Math.round(docs - items(t)) : ix.status === 'Created' ? () => 0 : (t) => Math.round(10 + 10 * wp(t));
    const labels = { bucket: ix.bucket, scope: ix.scope, collection: ix.collection, index: ix.name };
    const section = `@index-${ix.bucket}`;
    const s = (stat: string, kind: SvcKind, gen: Gen, native = true): Gen =>
      add(b, `index/${ix.name}/${stat}`, kind, gen, section, native ? { name: `index_${stat}`, labels, instance: 'index' } : undefined);
    const nativeOnly = (stat: string, kind: SvcKind, gen: Gen): Gen => add(b, `index/${ix.name}/${stat}`, kind, gen, undefined, { name: `index_${stat}`, labels, instance: 'index' });
    s('items_count', 'gauge', items);
    s('num_docs_pending', 'gauge', pending);
    s('num_docs_queued', 'gauge', ix.status === 'Ready' ? (t) => Math.round(2 + 2 * wp(t)) : () => 0);
    s('raw_data_size', 'gauge', (t) => items(t) * 60);
    s('data_size', 'gauge', dataSize);
    s('disk_size', 'gauge', diskSize);
    s('memory_used', 'gauge', memUsed);
    // 20% fragmentation: the log is data / 0.8.
    s('frag_percent', 'gauge', (t) => (items(t) === 0 ? 0 : 20));
    s('recs_in_mem', 'gauge', inMem);
    s('recs_on_disk', 'gauge', (t) => items(t) - inMem(t));
    s('data_size_on_disk', 'gauge', dataSize);
    s('log_space_on_disk', 'gauge', (t) => Math.round(dataSize(t) / 0.8));
    // service_index.erl compute_disk_overhead_estimates: disk_size × frag_percent / 100, on the node.
    s('disk_overhead_estimate', 'gauge', (t) => (items(t) === 0 ? 0 : (diskSize(t) * 20) / 100), false);
    s('num_requests', 'counter', requests);
    s('num_rows_returned', 'counter', rows);
    s('num_docs_indexed', 'counter', ix.status === 'Building' ? () => docs / 600 : ix.status === 'Created' ? () => 0 : () => 5 * ix.share);
    s('scan_bytes_read', 'counter', (t) => rows(t) * 64);
    s('total_scan_duration', 'counter', (t) => rows(t) * 80_000);
    s('cache_hits', 'counter', (t) => hitsAndMisses(t) * 0.95);
    s('cache_misses', 'counter', (t) => hitsAndMisses(t) * 0.05);
    // The indexer's own gauges (native only: the legacy section computes its own from the parts).
    nativeOnly('num_rows_scanned', 'counter', (t) => rows(t) * 1.2);
    nativeOnly('resident_percent', 'gauge', (t) => (items(t) === 0 ? 0 : (inMem(t) * 100) / items(t)));
    nativeOnly('avg_scan_latency', 'gauge', (t) => (rows(t) === 0 ? 0 : 80_000));
    nativeOnly('avg_item_size', 'gauge', (t) => (items(t) === 0 ? 0 : 60));
    const prev = usedByIndexes;
    usedByIndexes = (t) => prev(t) + memUsed(t);
  }
  const quota = 1024 * MIB;
  const used: Gen = (t) => usedByIndexes(t) + 64 * MIB;
  const n = (key: string, kind: SvcKind, gen: Gen, nativeName: string | undefined): Gen =>
    add(b, key, kind, gen, '@index', nativeName === undefined ? undefined : { name: nativeName, labels: {}, instance: 'index' });
  const quotaOf = n('index_memory_quota', 'gauge', () => quota, 'index_memory_quota');
  const usedOf = n('index_memory_used', 'gauge', used, 'index_memory_used_total');
  // Computed on the node from its quota and use (service_index.erl 6.6.5 compute_index_ram_usage_stats), then
  // summed over the nodes like the rest.
  n('index_ram_percent', 'gauge', (t) => (quotaOf(t) === 0 ? 0 : (usedOf(t) * 100) / quotaOf(t)), undefined);
  n('index_remaining_ram', 'gauge', (t) => quotaOf(t) - usedOf(t), undefined);
  add(b, 'index_memory_rss', 'gauge', (t) => Math.round(usedOf(t) * 1.2), undefined, { name: 'index_memory_rss', labels: {}, instance: 'index' });
  add(b, 'index_num_indexes', 'gauge', () => instances.length, undefined, { name: 'index_num_indexes', labels: {}, instance: 'index' });
}

function ftsStats(b: Builder): void {
  const { ctx, node } = b;
  const nodes = serviceNodes(ctx, 'fts');
  const j = nodes.findIndex((n) => n.hostname === node.hostname);
  if (j < 0) return;
  // Uneven shares of every index over the Search nodes (they sum to 1).
  const weights = nodes.map((_, i) => 1 + 0.2 * (i - (nodes.length - 1) / 2));
  const share = (weights[j] as number) / weights.reduce((a, w) => a + w, 0);
  const pindexes = Math.max(1, Math.round(6 / nodes.length));
  let ram = 80 * MIB;
  const elapsed = (t: number): number => Math.max(0, (t - ctx.startedAt) / 1000);
  for (const ix of simSearchIndexes(ctx)) {
    const docs = Math.round(ix.docs * share);
    const wq = b.wave(200_000, `fts:${ix.index}:q`);
    const wp = b.wave(40_000, `fts:${ix.index}:p`);
    const qps: Gen = (t) => ix.qps * share * (1 + 0.3 * wq(t));
    const growing = ctx.options.scenario === 'demo' && ix.index === 'travel-landmarks';
    const pending: Gen = growing ? (t) => Math.round(5 + 2 * (elapsed(t) % DEMO_CYCLE_S)) : (t) => Math.round(4 + 3 * wp(t));
    const labels = { bucket: ix.bucket, scope: '_default', collection: '_default', index: ix.index };
    const section = `@fts-${ix.bucket}`;
    const s = (stat: string, kind: SvcKind, gen: Gen): Gen => add(b, `fts/${ix.index}/${stat}`, kind, gen, section, { name: `fts_${stat}`, labels, instance: 'fts' });
    s('doc_count', 'gauge', () => docs);
    s('num_mutations_to_index', 'gauge', pending);
    s('num_recs_to_persist', 'gauge', (t) => Math.round(2 + 2 * wp(t)));
    s('num_bytes_used_disk', 'gauge', () => docs * 2_200);
    s('num_pindexes_actual', 'gauge', () => pindexes);
    s('num_pindexes_target', 'gauge', () => pindexes);
    s('num_files_on_disk', 'gauge', () => pindexes * 3);
    s('num_root_memorysegments', 'gauge', () => 2);
    s('num_root_filesegments', 'gauge', () => pindexes * 2);
    s('total_queries', 'counter', qps);
    s('total_queries_error', 'counter', (t) => qps(t) * 0.01);
    s('total_queries_slow', 'counter', (t) => qps(t) * 0.02);
    s('total_queries_timeout', 'counter', (t) => qps(t) * 0.001);
    s('total_request_time', 'counter', (t) => qps(t) * 12e6);
    s('total_bytes_query_results', 'counter', (t) => qps(t) * 3_000);
    s('total_term_searchers', 'counter', (t) => qps(t) * 4);
    s('total_bytes_indexed', 'counter', () => 500 * share);
    s('total_compaction_written_bytes', 'counter', () => 2_000 * share);
    // cbft's own mean (native only; the legacy section computes avg_queries_latency from the parts): ms.
    add(b, `fts/${ix.index}/avg_queries_latency`, 'gauge', (t) => (qps(t) === 0 ? 0 : 12), undefined, { name: 'fts_avg_queries_latency', labels, instance: 'fts' });
    ram += docs * 300;
  }
  const quota = 512 * MIB;
  const used = ram;
  const n = (stat: string, kind: SvcKind, gen: Gen, legacy = true): Gen => add(b, `fts_${stat}`, kind, gen, legacy ? '@fts' : undefined, { name: `fts_${stat}`, labels: {}, instance: 'fts' });
  n('num_bytes_used_ram', 'gauge', () => used);
  n('curr_batches_blocked_by_herder', 'gauge', () => 0);
  n('total_queries_rejected_by_herder', 'total', total(ctx, 0.001));
  n('num_bytes_ram_quota', 'gauge', () => quota, false);
  n('pct_used_ram', 'gauge', () => (used * 100) / quota, false);
}

interface FnRates {
  readonly backlog: number;
  readonly update: number;
  readonly updateFail: number;
  readonly del: number;
  readonly delFail: number;
  readonly timeouts: number;
}

const FN_RATES: Readonly<Record<string, FnRates>> = {
  enrich_orders: { backlog: 40, update: 40, updateFail: 0.2, del: 5, delFail: 0.02, timeouts: 0.05 },
  audit_log: { backlog: 10, update: 12, updateFail: 0, del: 3, delFail: 0, timeouts: 0 },
  cleanup_sessions: { backlog: 5, update: 0, updateFail: 0, del: 20, delFail: 0.1, timeouts: 0.01 },
};

function eventingStats(b: Builder): void {
  const { ctx, node } = b;
  const nodes = serviceNodes(ctx, 'eventing');
  const j = nodes.findIndex((n) => n.hostname === node.hostname);
  if (j < 0) return;
  const weights = nodes.map((_, i) => 1 + 0.2 * (i - (nodes.length - 1) / 2));
  const share = (weights[j] as number) / weights.reduce((a, w) => a + w, 0);
  const seven = ctx.options.profile.rangeApi;
  for (const f of simFunctions(ctx)) {
    if (f.status !== 'deployed') continue;
    const rates = FN_RATES[f.name] ?? { backlog: 2, update: 1, updateFail: 0.01, del: 0.2, delFail: 0, timeouts: 0 };
    const w = b.wave(60_000, `eventing:${f.name}:backlog`);
    const labels = { functionName: f.name };
    const s = (stat: string, kind: SvcKind, gen: Gen, nativeToo = true): Gen =>
      add(b, `eventing/${f.name}/${stat}`, kind, gen, '@eventing', nativeToo ? { name: `eventing_${stat}`, labels, instance: 'eventing' } : undefined);
    s('dcp_backlog', 'gauge', (t) => Math.round(rates.backlog * share * (1 + 0.5 * w(t))));
    s('on_update_success', 'total', total(ctx, rates.update * share));
    s('on_update_failure', 'total', total(ctx, rates.updateFail * share));
    s('on_delete_success', 'total', total(ctx, rates.del * share));
    s('on_delete_failure', 'total', total(ctx, rates.delFail * share));
    s('timeout_count', 'total', total(ctx, rates.timeouts * share));
    s('bucket_op_exception_count', 'total', total(ctx, rates.updateFail * share * 0.5));
    s('checkpoint_failure_count', 'total', () => 0);
    s('n1ql_op_exception_count', 'total', total(ctx, rates.updateFail * share * 0.25));
    if (seven) {
      s('timer_callback_success', 'total', total(ctx, 0.5 * share));
      s('timer_callback_failure', 'total', () => 0);
    } else {
      s('doc_timer_create_failure', 'total', () => 0, false);
      s('non_doc_timer_create_failure', 'total', () => 0, false);
    }
  }
}

function cbasStats(b: Builder): void {
  const w = b.wave(300_000, 'cbas');
  const c = (key: string, kind: SvcKind, gen: Gen, nativeName: string): Gen => add(b, key, kind, gen, '@cbas', { name: nativeName, labels: {}, instance: 'cbas' });
  c('cbas_heap_used', 'gauge', (t) => Math.round(1.2 * GIB * (1 + 0.1 * w(t))), 'cbas_heap_memory_used_bytes');
  c('cbas_system_load_average', 'gauge', (t) => 1.5 + 0.3 * w(t), 'cbas_system_load_average');
  c('cbas_thread_count', 'gauge', () => 180, 'cbas_thread_count');
  c('cbas_disk_used', 'gauge', () => 2.5 * GIB, 'cbas_disk_used_bytes_total');
  c('cbas_gc_count', 'counter', (t) => 0.5 * (1 + 0.2 * w(t)), 'cbas_gc_count_total');
  c('cbas_gc_time', 'counter', (t) => 12 * (1 + 0.2 * w(t)), 'cbas_gc_time_milliseconds_total');
  c('cbas_io_reads', 'counter', (t) => 150 * (1 + 0.2 * w(t)), 'cbas_io_reads_total');
  c('cbas_io_writes', 'counter', (t) => 60 * (1 + 0.2 * w(t)), 'cbas_io_writes_total');
}

/** The processes a node runs, by its services, with their resident memory (bytes) and CPU (percent). */
export function nodeProcesses(node: SimNode): Array<{ proc: string; rss: number; cpu: number }> {
  const s = new Set(node.services);
  const out: Array<{ proc: string; rss: number; cpu: number }> = [
    { proc: 'ns_server', rss: 450 * MIB, cpu: 6 },
    { proc: 'babysitter', rss: 60 * MIB, cpu: 0.5 },
    { proc: 'prometheus', rss: 180 * MIB, cpu: 2 },
  ];
  if (s.has('kv')) out.push({ proc: 'memcached', rss: 1.4 * GIB, cpu: 35 }, { proc: 'projector', rss: 220 * MIB, cpu: 4 }, { proc: 'goxdcr', rss: 160 * MIB, cpu: 3 });
  if (s.has('index')) out.push({ proc: 'indexer', rss: 700 * MIB, cpu: 18 });
  if (s.has('n1ql')) out.push({ proc: 'cbq-engine', rss: 320 * MIB, cpu: 12 });
  if (s.has('fts')) out.push({ proc: 'cbft', rss: 260 * MIB, cpu: 7 });
  if (s.has('eventing')) out.push({ proc: 'eventing-producer', rss: 140 * MIB, cpu: 5 });
  if (s.has('cbas')) out.push({ proc: 'cbas', rss: 90 * MIB, cpu: 1 }, { proc: 'java', rss: 1.6 * GIB, cpu: 15 });
  return out;
}

function processStats(b: Builder): void {
  const { ctx, node } = b;
  const startSec = Math.floor(ctx.startedAt / 1000) - 86_400;
  for (const p of nodeProcesses(node)) {
    const w = b.wave(120_000, `sysproc:${p.proc}`);
    const labels = { category: 'system-processes', proc: p.proc };
    const cpu: Gen = (t) => p.cpu * (1 + 0.2 * w(t));
    const s = (stat: string, name: string, kind: SvcKind, gen: Gen, extra: Readonly<Record<string, string>> = {}, lines?: readonly string[]): Gen =>
      add(b, `${p.proc}/${stat}`, kind, gen, undefined, { name, labels: { ...labels, ...extra }, instance: 'ns_server', ...(lines ? { lines } : {}) });
    s('mem_resident', 'sysproc_mem_resident', 'gauge', (t) => Math.round(p.rss * (1 + 0.02 * w(t))));
    s('mem_size', 'sysproc_mem_size', 'gauge', (t) => Math.round(p.rss * 1.8 * (1 + 0.02 * w(t))));
    s('mem_share', 'sysproc_mem_share', 'gauge', () => Math.round(p.rss * 0.05));
    const util = s('cpu_utilization', 'sysproc_cpu_utilization', 'gauge', cpu);
    // CPU seconds per second = utilization / 100, 70% user and 30% system: the counters agree with the gauge.
    s('cpu_seconds_user', 'sysproc_cpu_seconds_total', 'counter', (t) => (util(t) / 100) * 0.7, { mode: 'user' }, FROM_72);
    s('cpu_seconds_sys', 'sysproc_cpu_seconds_total', 'counter', (t) => (util(t) / 100) * 0.3, { mode: 'sys' }, FROM_72);
    s('major_faults', 'sysproc_major_faults_raw', 'counter', () => 0.01);
    s('minor_faults', 'sysproc_minor_faults_raw', 'counter', () => 40);
    s('page_faults', 'sysproc_page_faults_raw', 'counter', () => 40.01);
    s('start_time', 'sysproc_start_time', 'gauge', () => startSec);
  }
  const knob = ctx.options.knobs.diskUsedRatio;
  const data = typeof knob === 'number' ? knob : ctx.options.scenario === 'incident' ? 0.92 : 0.35;
  const j = Math.max(0, ctx.nodes.findIndex((n) => n.hostname === node.hostname));
  const disks: ReadonlyArray<readonly [string, number]> = [
    ['/', (18 + 2 * j) / 100],
    ['/opt/couchbase/var', data],
  ];
  for (const [disk, ratio] of disks) add(b, `disk/${disk}/usage_ratio`, 'gauge', () => ratio, undefined, { name: 'sys_disk_usage_ratio', labels: { category: 'system', disk }, instance: 'ns_server', lines: FROM_76 });
}

interface ModelCache {
  sig: string;
  knob: unknown;
  byNode: Map<string, SvcStat[]>;
}

/** A signature of what the service statistics depend on besides time: the knobs and the cluster's layout. */
function signature(ctx: SimContext): string {
  const k = ctx.options.knobs;
  return JSON.stringify([
    effectiveNodes(ctx).map((n) => `${n.hostname}:${n.membership}:${n.services.join(',')}`),
    ctx.buckets.map((b) => b.name),
    k.nodeFaults ?? null,
    k.indexStates ?? null,
    k.indexesDropped ?? null,
    k.extraIndexes ?? null,
    k.extraSearchIndexes ?? null,
    k.extraFunctions ?? null,
    k.eventingStatuses ?? null,
    k.eventingFunctionsDropped ?? null,
    k.diskUsedRatio ?? null,
    k.slowQueryBurst ?? null,
  ]);
}

/** Every service statistic of one node, built once per signature. */
export function nodeServiceStats(ctx: SimContext, node: SimNode): SvcStat[] {
  const cache = ctx.area<ModelCache>('services.model', () => ({ sig: '', knob: undefined, byNode: new Map() }));
  const sig = signature(ctx);
  const knob = ctx.options.knobs.serviceStatValues;
  if (cache.sig !== sig || cache.knob !== knob) {
    cache.sig = sig;
    cache.knob = knob;
    cache.byNode.clear();
  }
  let stats = cache.byNode.get(node.hostname);
  if (!stats) {
    stats = buildNode(ctx, node);
    cache.byNode.set(node.hostname, stats);
  }
  return stats;
}

function buildNode(ctx: SimContext, node: SimNode): SvcStat[] {
  const out: SvcStat[] = [];
  const rand = (k: string): number => ctx.rand(`svc:${node.hostname}:${k}`);
  const b: Builder = {
    ctx,
    node,
    out,
    rand,
    wave: (periodMs, key) => {
      const phase = TWO_PI * rand(`${key}:phase`);
      const k = TWO_PI / periodMs;
      return (t) => Math.sin(k * t + phase);
    },
  };
  const serves = (service: string): boolean => serviceNodes(ctx, service).some((n) => n.hostname === node.hostname);
  if (serves('n1ql')) queryStats(b);
  if (serves('index')) indexStats(b);
  if (serves('fts')) ftsStats(b);
  if (serves('eventing')) eventingStats(b);
  if (serves('cbas')) cbasStats(b);
  // Every node runs its processes, a failed-over one too (it is still up).
  if (ctx.options.profile.rangeApi) processStats(b);
  return out;
}
